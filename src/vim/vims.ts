/**
 * VIM use cases that need neither the network nor a config file: listing,
 * showing, deleting, and opening a VIM's secrets for a driver.
 */
import type { Keyring } from '../crypto/index.js';
import { UsageError } from '../errors.js';
import type { SealedSecrets, VimRepository } from '../store/index.js';
import type { Vim, VimSecrets } from '../model/vim.js';

export function listVims(vims: VimRepository, filter: { type?: Vim['spec']['type'] } = {}): Promise<Vim[]> {
  return vims.list(filter);
}

export function getVim(vims: VimRepository, ref: string): Promise<Vim> {
  return vims.get(ref);
}

/** Resolves every reference first, so one unknown name deletes nothing. */
export async function resolveVims(vims: VimRepository, refs: string[]): Promise<Vim[]> {
  if (refs.length === 0) throw new UsageError('name at least one VIM to delete', { hint: 'vnfm vim-delete VIM [VIM...]' });
  const found: Vim[] = [];
  for (const ref of refs) found.push(await vims.get(ref));
  return [...new Map(found.map((v) => [v.id, v])).values()];
}

export async function deleteVims(vims: VimRepository, targets: Vim[]): Promise<Vim[]> {
  await vims.deleteAll(targets.map((v) => v.id));
  return targets;
}

export function sealSecrets(keyring: Keyring, secrets: VimSecrets): SealedSecrets | undefined {
  const present = Object.fromEntries(Object.entries(secrets).filter(([, v]) => v !== undefined && v !== ''));
  if (Object.keys(present).length === 0) return undefined;
  return keyring.encrypt(JSON.stringify(present));
}

/** Decrypts the secrets of a stored VIM, for the drivers that talk to it. */
export async function openSecrets(vims: VimRepository, keyring: Keyring, vim: Vim): Promise<VimSecrets> {
  const sealed = await vims.sealedSecrets(vim.id);
  if (!sealed) return {};
  return JSON.parse(keyring.decrypt(sealed.token, sealed.keyId)) as VimSecrets;
}

export function secretNamesOf(secrets: VimSecrets): (keyof VimSecrets)[] {
  return (Object.keys(secrets) as (keyof VimSecrets)[]).filter((k) => secrets[k] !== undefined && secrets[k] !== '').sort();
}
