/**
 * The random suffix the API server appends to `metadata.generateName`
 * (five characters of an alphabet without vowels or look-alikes, as
 * apiserver's names.SimpleNameGenerator draws them).
 */
import { randomBytes } from 'node:crypto';

const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(): string {
  return [...randomBytes(5)].map((b) => GENERATE_NAME_ALPHABET[b % GENERATE_NAME_ALPHABET.length]).join('');
}
