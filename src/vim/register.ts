/**
 * Registering and updating VIMs: read the config source, check the VIM for
 * real, and only then store it, secrets sealed.
 */
import { randomUUID } from 'node:crypto';
import type { Keyring } from '../crypto/index.js';
import { UsageError } from '../errors.js';
import type { VimRepository } from '../store/index.js';
import { checkName } from '../store/names.js';
import type { VimChecker } from './check.js';
import { readCloudsYaml } from './clouds-yaml.js';
import { readKubeconfig } from './kubeconfig.js';
import type { Vim, VimConfig, VimSecrets } from '../model/vim.js';
import { readVimConfigFile } from './vim-config.js';
import { sealSecrets, secretNamesOf } from './vims.js';

/** Where a VIM's settings come from. */
export type VimSource =
  | { kind: 'vim-config'; path: string }
  | { kind: 'kubeconfig'; path: string; context?: string; namespace?: string }
  | { kind: 'clouds-yaml'; cloud: string; env: Record<string, string | undefined>; cwd: string; home: string }
  /** Settings already read (a management driver's, from a workload cluster's kubeconfig). */
  | { kind: 'config'; config: VimConfig };

export function loadVimConfig(source: VimSource): VimConfig {
  switch (source.kind) {
    case 'vim-config':
      return readVimConfigFile(source.path);
    case 'kubeconfig':
      return readKubeconfig(source.path, { context: source.context, namespace: source.namespace });
    case 'clouds-yaml':
      return readCloudsYaml(source.cloud, { env: source.env, cwd: source.cwd, home: source.home });
    case 'config':
      return source.config;
  }
}

export interface VimDeps {
  vims: VimRepository;
  /** Loaded only when a secret must be sealed or opened. */
  keyring: () => Keyring;
  check: VimChecker;
  now: () => Date;
  /** Told about each step, for progress output. */
  onEvent?: (event: { type: 'warning' | 'checking' | 'checked'; message: string }) => void;
}

export interface RegisterVimOptions {
  name: string;
  description?: string;
  isDefault?: boolean;
  source: VimSource;
  /** Contact the VIM before storing it (default true). */
  check?: boolean;
}

/** A VIM name by the rules every path that names a VIM applies (store/names.ts). */
export function validateVimName(name: string): void {
  checkName('vim', name);
}

export async function registerVim(deps: VimDeps, opts: RegisterVimOptions): Promise<Vim> {
  validateVimName(opts.name);
  const config = loadVimConfig(opts.source);
  for (const w of config.warnings) deps.onEvent?.({ type: 'warning', message: w });
  // Checked again inside the insert's transaction; checking now spares a slow reachability check.
  await deps.vims.assertNameFree(opts.name);
  const status = await runCheck(deps, config, opts.check ?? true);
  const now = deps.now().toISOString();
  const vim: Vim = {
    id: randomUUID(),
    name: opts.name,
    description: opts.description ?? '',
    // The first VIM becomes the default, so there is one whenever any exists.
    isDefault: opts.isDefault === true || (await deps.vims.findDefault()) === undefined,
    spec: config.spec,
    secretNames: secretNamesOf(config.secrets),
    status,
    createdAt: now,
    updatedAt: now,
  };
  await deps.vims.insert(vim, sealSecrets(deps.keyring(), config.secrets));
  return vim;
}

export interface UpdateVimOptions {
  ref: string;
  source?: VimSource;
  name?: string;
  description?: string;
  /** true makes it the default (no other VIM stays one); false leaves no VIM the default. */
  isDefault?: boolean;
  check?: boolean;
}

export async function updateVim(deps: VimDeps, opts: UpdateVimOptions): Promise<Vim> {
  const current = await deps.vims.get(opts.ref);
  if (opts.name !== undefined) {
    validateVimName(opts.name);
    await deps.vims.assertNameFree(opts.name, current.id);
  }
  if (!opts.source && opts.name === undefined && opts.description === undefined && opts.isDefault === undefined) {
    throw new UsageError('nothing to update', { hint: 'give --config-file, --name, --description or --is-default' });
  }
  const next: Vim = {
    ...current,
    name: opts.name ?? current.name,
    description: opts.description ?? current.description,
    isDefault: opts.isDefault ?? current.isDefault,
    updatedAt: deps.now().toISOString(),
  };
  let secrets: VimSecrets | undefined;
  if (opts.source) {
    const config = loadVimConfig(opts.source);
    for (const w of config.warnings) deps.onEvent?.({ type: 'warning', message: w });
    if (config.spec.type !== current.spec.type) {
      throw new UsageError(`vim "${current.name}" is a ${current.spec.type} VIM; the new config is ${config.spec.type}`, {
        hint: 'the type of a VIM never changes: register a new VIM instead',
      });
    }
    next.status = await runCheck(deps, config, opts.check ?? true);
    next.spec = config.spec;
    next.secretNames = secretNamesOf(config.secrets);
    secrets = config.secrets;
  }
  // Written only if no one changed the VIM while this command checked it (no lost update).
  await deps.vims.update(next, secrets ? (sealSecrets(deps.keyring(), secrets) ?? null) : undefined, { readAt: current.updatedAt });
  return next;
}

async function runCheck(deps: VimDeps, config: VimConfig, check: boolean): Promise<Vim['status']> {
  if (!check) return 'PENDING';
  deps.onEvent?.({ type: 'checking', message: `checking ${config.spec.type} VIM at ${config.spec.authUrl}` });
  const report = await deps.check(config.spec, config.secrets);
  deps.onEvent?.({ type: 'checked', message: report.summary });
  return 'REACHABLE';
}
