/**
 * Redaction of what vnfm writes about a node: command lines, their output,
 * error messages. Every secret vnfm knows (the login password, the key's
 * passphrase and lines, values the driver names) becomes `***`.
 */
import type { SshTarget } from './types.js';

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Replaces each non-empty secret in a text with `***`, the longest first (a secret containing another is hidden whole). */
export function createRedactor(secrets: readonly string[]): (text: string) => string {
  const list = [...new Set(secrets.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  const re = new RegExp(list.map(escapeRe).join('|'), 'g');
  return (text) => text.replace(re, '***');
}

/** Environment names whose values are secrets, whatever they hold. */
const SECRET_NAME = /pass|secret|token|credential|auth|private|(^|_)key($|_)/i;

/** Credentials in a URL (`http://user:pass@proxy:3128`): the password part. */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi;

/**
 * The secrets of a session: the target's password and passphrase, every line
 * of its private key, and the caller's list.
 */
export function sessionSecrets(target: SshTarget, extra: readonly string[] = []): string[] {
  const keyLines = (target.privateKey ?? '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length >= 8 && !l.startsWith('-----'));
  return [target.password ?? '', target.passphrase ?? '', ...keyLines, ...extra];
}

/** The values of environment variables named like secrets (`REGISTRY_PASSWORD`, `TOKEN`). */
export function envSecrets(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(([name]) => SECRET_NAME.test(name))
    .map(([, value]) => value);
}

/** A redactor for a session: its known secrets, then passwords inside URLs. */
export function createSessionRedactor(secrets: readonly string[]): (text: string) => string {
  const known = createRedactor(secrets);
  return (text) => known(text).replace(URL_PASSWORD, '$1***$3');
}
