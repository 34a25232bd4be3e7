/**
 * Reads an OpenStack VIM out of a `clouds.yaml` entry, finding the file where
 * openstacksdk looks and merging `secure.yaml` over it as openstacksdk does,
 * so an operator can register the cloud their `openstack --os-cloud NAME`
 * already uses.
 *
 * Mapping choices: `user_domain_name`/`project_domain_name` go to the spec
 * (`auth.userDomainName`, `projectDomainName`); the `*_domain_id` forms have
 * no spec field and are kept in `spec.extra` under their clouds.yaml names
 * (`user_domain_id`, `project_domain_id`), as is `interface`. A domain given
 * once as `domain_name`/`domain_id` fills both, as openstacksdk does.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { echo, ValidationError } from '../errors.js';
import { FileReadError, isMapping, kindOf, MAX_REFERENCED_BYTES, readBoundedText, readConfigYaml } from '../yaml.js';
import type { VimAuth, VimConfig, VimSecrets, VimSpec } from '../model/vim.js';
import { parsePemCertificates } from './pem.js';

/** Where to look for clouds.yaml, and what the environment says. */
export interface ReadCloudsYamlOptions {
  /** Environment variables (`OS_CLIENT_CONFIG_FILE`, `OS_CLIENT_SECURE_FILE`). */
  env: Record<string, string | undefined>;
  /** The current directory: searched first, and the base of relative paths (`cacert`). */
  cwd: string;
  /** The user's home: `<home>/.config/openstack` is searched second. */
  home: string;
  /** An explicit clouds.yaml; when given, no other clouds file is searched. */
  file?: string;
  /** The site-wide directory searched last; `/etc/openstack` unless overridden (tests). */
  siteDir?: string;
}

const SUFFIXES = ['.yaml', '.yml', '.json'];
const PASSWORD_TYPES = new Set(['password', 'v3password']);
const APP_CREDENTIAL_TYPES = new Set(['v3applicationcredential', 'applicationcredential', 'application_credential', 'v3_application_credential']);
const INTERFACES = new Set(['public', 'internal', 'admin']);

/** The clouds.yaml candidates, in the order they are tried (first existing wins). */
export function cloudsYamlCandidates(opts: ReadCloudsYamlOptions): string[] {
  if (opts.file !== undefined) return [resolve(opts.cwd, opts.file)];
  const list: string[] = [];
  const override = opts.env.OS_CLIENT_CONFIG_FILE;
  if (override) list.push(resolve(opts.cwd, override));
  for (const dir of searchDirs(opts)) for (const suffix of SUFFIXES) list.push(join(dir, 'clouds' + suffix));
  return unique(list);
}

/**
 * Reads the entry `cloud` of the first clouds.yaml found into a VimConfig of
 * type `openstack`. Throws ValidationError naming the file and the field
 * (`clouds.<cloud>.auth.auth_url`) for anything missing or malformed.
 */
export function readCloudsYaml(cloud: string, opts: ReadCloudsYamlOptions): VimConfig {
  const candidates = cloudsYamlCandidates(opts);
  const file = candidates.find(present);
  if (file === undefined) {
    if (opts.file !== undefined) {
      throw new ValidationError(candidates[0], undefined, 'does not exist', { hint: 'check the path of the clouds.yaml file' });
    }
    throw new ValidationError('clouds.yaml', undefined, `was not found; looked in: ${candidates.join(', ')}`, {
      hint: `create ${join(opts.home, '.config/openstack/clouds.yaml')}, or set OS_CLIENT_CONFIG_FILE to its path`,
    });
  }
  const main = cloudsOf(readConfigYaml(file, 'pass a clouds.yaml file'), file, true);

  const secureFile = unique([
    ...(opts.env.OS_CLIENT_SECURE_FILE ? [resolve(opts.cwd, opts.env.OS_CLIENT_SECURE_FILE)] : []),
    ...SUFFIXES.map((s) => join(dirname(file), 'secure' + s)),
    ...searchDirs(opts).flatMap((dir) => SUFFIXES.map((s) => join(dir, 'secure' + s))),
  ]).find(present);
  const secure = secureFile ? cloudsOf(readConfigYaml(secureFile, 'pass a secure.yaml file'), secureFile, false) : {};

  const names = unique([...Object.keys(main), ...Object.keys(secure)]);
  if (!names.includes(cloud)) {
    throw new ValidationError(file, 'clouds', `has no cloud named ${echo(cloud)}; clouds: ${names.length ? names.map((n) => echo(n)).join(', ') : '(none)'}`, {
      hint: names.length ? `pick one of: ${names.join(', ')}` : `add an entry under clouds: with auth.auth_url, auth.username and auth.password`,
    });
  }
  for (const [path, entry] of [
    [file, main[cloud]],
    [secureFile, secure[cloud]],
  ] as const) {
    if (entry !== undefined && entry !== null && !isMapping(entry)) {
      throw new ValidationError(path!, `clouds.${cloud}`, `must be a mapping, not ${kindOf(entry)}`, {
        hint: `indent the settings of ${echo(cloud)} (auth:, region_name:, ...) under its name`,
      });
    }
  }
  const mainEntry = normalizeKeys(main[cloud] ?? {});
  const secureEntry = normalizeKeys(secure[cloud] ?? {});
  return new CloudEntryReader(cloud, deepMerge(mainEntry, secureEntry), file, secureFile, secureEntry, opts.cwd).read();
}

class CloudEntryReader {
  private readonly warnings: string[] = [];
  private readonly auth: Record<string, unknown>;

  constructor(
    private readonly cloud: string,
    private readonly entry: Record<string, unknown>,
    private readonly file: string,
    private readonly secureFile: string | undefined,
    private readonly secureEntry: Record<string, unknown>,
    private readonly cwd: string,
  ) {
    const auth = entry.auth;
    if (auth !== undefined && auth !== null && !isMapping(auth)) {
      this.fail(['auth'], `must be a mapping, not ${kindOf(auth)}`, 'indent auth_url, username, password, ... under auth:');
    }
    this.auth = { ...((auth as Record<string, unknown> | null | undefined) ?? {}) };
    this.moveAuthKeys();
  }

  read(): VimConfig {
    const profile = this.str(['profile']) ?? this.str(['cloud']);
    if (profile) {
      this.warnings.push(
        `${this.file}: cloud ${echo(this.cloud)} refers to vendor profile ${echo(profile)}, which vnfm does not expand; only the settings written in the entry are used`,
      );
    }
    const identityVersion = this.str(['identity_api_version']);
    if (identityVersion !== undefined && !/^3(\.\d+)?$/.test(identityVersion)) {
      this.fail(['identity_api_version'], `is ${identityVersion}; vnfm speaks Keystone v3 only`, 'use identity_api_version: 3 and a v3 auth_url');
    }
    for (const key of ['cert', 'key']) {
      if (this.entry[key] !== undefined && this.entry[key] !== null) {
        this.fail([key], 'sets a TLS client certificate for Keystone, which vnfm does not support', `remove ${key} and authenticate with a password or an application credential`);
      }
    }

    const authUrl = this.authUrl();
    const authType = (this.str(['auth_type']) ?? 'password').toLowerCase().replace(/-/g, '_');
    let auth: VimAuth;
    const secrets: VimSecrets = {};
    const spec: Omit<VimSpec, 'auth' | 'verifyTls'> = { type: 'openstack', authUrl };
    const extra: Record<string, unknown> = {};

    if (PASSWORD_TYPES.has(authType)) {
      if (this.has('application_credential_secret') || this.has('application_credential_id')) {
        this.fail(['auth_type'], `is ${echo(authType)} but auth holds an application credential`, 'set auth_type: v3applicationcredential');
      }
      const user = this.user(true);
      secrets.password = this.requiredAuth('password', 'add auth.password (or put it in secure.yaml beside clouds.yaml)');
      auth = { method: 'password', ...user };
      Object.assign(spec, this.project());
    } else if (APP_CREDENTIAL_TYPES.has(authType)) {
      const id = this.authStr('application_credential_id');
      const name = this.authStr('application_credential_name');
      if (!id && !name) {
        this.fail(
          ['auth', 'application_credential_id'],
          'is missing (and so is application_credential_name)',
          'add auth.application_credential_id (openstack application credential show NAME -c id)',
        );
      }
      secrets.applicationCredentialSecret = this.requiredAuth(
        'application_credential_secret',
        'add auth.application_credential_secret (or put it in secure.yaml beside clouds.yaml)',
      );
      // An application credential found by name is looked up among the user's own.
      const user = this.user(!id);
      auth = compact({
        method: 'application-credential' as const,
        applicationCredentialId: id,
        applicationCredentialName: name,
        username: user.username,
        userDomainName: user.userDomainName,
      });
      if (user.userId) extra.user_id = user.userId;
      if (['project_name', 'project_id'].some((k) => this.has(k))) {
        this.warnings.push(`${this.file}: cloud ${echo(this.cloud)}: the project settings are ignored; an application credential is bound to the project it was created in`);
      }
    } else {
      this.fail(
        ['auth_type'],
        `${echo(authType)} is not supported; vnfm supports password, v3password and v3applicationcredential`,
        'authenticate with a password or create an application credential (openstack application credential create vnfm) and use auth_type: v3applicationcredential',
      );
    }
    const userDomainId = this.authStr('user_domain_id');
    if (userDomainId) extra.user_domain_id = userDomainId;
    const projectDomainId = this.authStr('project_domain_id');
    if (projectDomainId && spec.projectName !== undefined) extra.project_domain_id = projectDomainId;

    const { verifyTls, caCert } = this.tls();
    if (caCert !== undefined) secrets.caCert = caCert;
    const regionName = this.region();
    const iface = this.interface();
    if (iface !== undefined) extra.interface = iface;

    const full: VimSpec = compact({ ...spec, auth, verifyTls, regionName, extra: Object.keys(extra).length ? extra : undefined });
    return { spec: full, secrets, warnings: this.warnings };
  }

  /** openstacksdk accepts auth settings at the entry's top level too, and lets those win. */
  private moveAuthKeys(): void {
    const aliases: Record<string, string> = { tenant_name: 'project_name', tenant_id: 'project_id', auth_token: 'token' };
    for (const [from, to] of Object.entries(aliases)) {
      for (const where of [this.auth, this.entry]) {
        if (where[from] !== undefined && where[to] === undefined) where[to] = where[from];
      }
    }
    if (this.entry.auth_type === undefined && this.entry.auth_plugin !== undefined) this.entry.auth_type = this.entry.auth_plugin;
    const keys = [
      'auth_url',
      'username',
      'user_id',
      'password',
      'project_name',
      'project_id',
      'user_domain_name',
      'user_domain_id',
      'project_domain_name',
      'project_domain_id',
      'domain_name',
      'domain_id',
      'application_credential_id',
      'application_credential_name',
      'application_credential_secret',
    ];
    for (const key of keys) {
      if (this.entry[key] !== undefined && this.entry[key] !== null) this.auth[key] = this.entry[key];
    }
    // A domain given once stands for both the user's and the project's.
    const scoped = this.auth.project_name !== undefined || this.auth.project_id !== undefined;
    for (const kind of ['id', 'name']) {
      const value = this.auth[`domain_${kind}`];
      if (value === undefined || value === null || !scoped) continue;
      for (const target of [`user_domain_${kind}`, `project_domain_${kind}`]) {
        if (this.auth[target] === undefined) this.auth[target] = value;
      }
    }
  }

  private authUrl(): string {
    const value = this.requiredAuth('auth_url', 'add auth.auth_url, the Keystone endpoint, e.g. https://keystone.example.com:5000/v3');
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || url.hostname === '') {
      this.fail(
        this.authField('auth_url'),
        `${echo(value)} is not an http(s):// URL with a host`,
        'write the full Keystone URL with its scheme, e.g. https://keystone.example.com:5000/v3',
      );
    }
    return value.replace(/\/+$/, '');
  }

  private user(required: boolean): { username?: string; userId?: string; userDomainName?: string } {
    const username = this.authStr('username');
    const userId = this.authStr('user_id');
    const userDomainName = this.authStr('user_domain_name');
    if (!username && !userId) {
      if (!required) return {};
      this.fail(['auth', 'username'], 'is missing (and so is user_id)', 'add auth.username with auth.user_domain_name, or auth.user_id');
    }
    if (username && !userId && !userDomainName && !this.authStr('user_domain_id')) {
      this.fail(
        ['auth', 'user_domain_name'],
        `is missing; Keystone v3 needs the domain of user ${echo(username)}`,
        'add auth.user_domain_name (often Default), auth.user_domain_id, or auth.domain_name for both user and project',
      );
    }
    return compact({ username, userId, userDomainName });
  }

  private project(): Pick<VimSpec, 'projectName' | 'projectId' | 'projectDomainName'> {
    const projectName = this.authStr('project_name');
    const projectId = this.authStr('project_id');
    const projectDomainName = this.authStr('project_domain_name');
    if (!projectName && !projectId) {
      this.fail(
        ['auth', 'project_name'],
        'is missing (and so is project_id); VNFs are deployed into a project',
        'add auth.project_name with auth.project_domain_name, or auth.project_id',
      );
    }
    if (projectName && !projectId && !projectDomainName && !this.authStr('project_domain_id')) {
      this.fail(
        ['auth', 'project_domain_name'],
        `is missing; Keystone v3 needs the domain of project ${echo(projectName)}`,
        'add auth.project_domain_name (often Default), auth.project_domain_id, or auth.domain_name for both user and project',
      );
    }
    return compact({ projectName, projectId, projectDomainName });
  }

  private tls(): { verifyTls: boolean; caCert?: string } {
    const verify = this.entry.verify;
    if (verify !== undefined && verify !== null && typeof verify !== 'boolean') {
      this.fail(['verify'], `must be true or false, not ${kindOf(verify)}`, 'write verify: false (unquoted) to skip verification, and cacert: PATH for a private CA');
    }
    const insecure = this.entry.insecure;
    let insecureFlag = false;
    if (insecure !== undefined && insecure !== null) {
      if (typeof insecure === 'boolean') insecureFlag = insecure;
      else if (typeof insecure === 'string' && /^(true|false)$/i.test(insecure)) insecureFlag = insecure.toLowerCase() === 'true';
      else this.fail(['insecure'], `must be true or false, not ${kindOf(insecure)}`, 'write insecure: true (unquoted), or better verify: false');
    }
    const cacertRef = this.str(['cacert']);
    if (verify === false || insecureFlag) {
      const why = verify === false ? 'verify: false' : 'insecure: true';
      this.warnings.push(
        `${this.file}: cloud ${echo(this.cloud)} has ${why}; TLS verification is off, so Keystone's identity is not checked and the credential could be sent to an impostor`,
      );
      if (cacertRef) this.warnings.push(`${this.file}: cloud ${echo(this.cloud)}: cacert is ignored because verification is off`);
      return { verifyTls: false };
    }
    if (!cacertRef) return { verifyTls: true };
    // requests opens a relative cacert path from the current directory.
    const path = isAbsolute(cacertRef) ? cacertRef : resolve(this.cwd, cacertRef);
    let text: string;
    try {
      text = readBoundedText(path, MAX_REFERENCED_BYTES);
    } catch (err) {
      if (!(err instanceof FileReadError)) throw err;
      this.fail(['cacert'], `points to ${err.path}, which ${err.problem}`, 'fix the path (relative paths are resolved against the current directory)');
    }
    try {
      return { verifyTls: true, caCert: parsePemCertificates(text).join('\n') + '\n' };
    } catch (err) {
      this.fail(
        ['cacert'],
        `points to ${path}, which is not a PEM certificate: ${(err as Error).message}`,
        "point cacert at the PEM file of the CA that signed Keystone's certificate",
      );
    }
  }

  private region(): string | undefined {
    const regions: string[] = [];
    const raw = this.entry.regions;
    if (raw !== undefined && raw !== null) {
      if (!Array.isArray(raw)) this.fail(['regions'], `must be a list, not ${kindOf(raw)}`, 'write regions: as a list of names');
      raw.forEach((r, i) => {
        const name = typeof r === 'string' ? r : isMapping(r) && typeof r.name === 'string' ? r.name : undefined;
        if (!name) this.fail(['regions', String(i)], 'must be a region name or a mapping with name', 'write "- RegionOne" or "- name: RegionOne"');
        regions.push(name);
      });
    }
    const regionName = this.entry.region_name;
    let chosen: string | undefined;
    if (regionName !== undefined && regionName !== null && regionName !== '') {
      const names = Array.isArray(regionName) ? regionName.map(String) : typeof regionName === 'string' ? regionName.split(',').map((s) => s.trim()) : undefined;
      if (!names || names.some((n) => n === '')) this.fail(['region_name'], `must be a region name, not ${kindOf(regionName)}`, 'write region_name: RegionOne');
      chosen = names[0];
      if (names.length > 1) regions.push(...names.slice(1));
    } else {
      chosen = regions[0];
    }
    const others = regions.filter((r) => r !== chosen);
    if (chosen && others.length > 0) {
      this.warnings.push(`${this.file}: cloud ${echo(this.cloud)} lists several regions; vnfm uses ${echo(chosen)} (set region_name to choose)`);
    }
    return chosen;
  }

  private interface(): string | undefined {
    // Legacy spellings: endpoint_type, and values such as publicURL.
    const value = this.str(['interface']) ?? this.str(['endpoint_type']);
    if (value === undefined || value === '') return undefined;
    const normalized = value.replace(/URL$/, '');
    if (!INTERFACES.has(normalized)) {
      this.fail(['interface'], `is ${echo(value)}; expected public, internal or admin`, 'write interface: public (or internal)');
    }
    return normalized;
  }

  private has(key: string): boolean {
    return this.auth[key] !== undefined && this.auth[key] !== null && this.auth[key] !== '';
  }

  /** Where an auth key was found: the entry's top level wins over `auth`. */
  private authField(key: string): string[] {
    return this.entry[key] !== undefined && this.entry[key] !== null ? [key] : ['auth', key];
  }

  private authStr(key: string): string | undefined {
    return this.scalar(this.auth[key], this.authField(key));
  }

  private requiredAuth(key: string, hint: string): string {
    const value = this.authStr(key);
    if (value === undefined || value === '') this.fail(this.authField(key), 'is missing', hint);
    return value;
  }

  private str(path: string[]): string | undefined {
    return this.scalar(this.entry[path[0]], path);
  }

  private scalar(value: unknown, path: string[]): string | undefined {
    if (value === undefined || value === null) return undefined;
    // openstacksdk turns numbers into strings (a numeric password or project id).
    if (typeof value === 'number') return String(value);
    if (typeof value !== 'string') this.fail(path, `must be a string, not ${kindOf(value)}`, `quote the value: ${path[path.length - 1]}: "..."`);
    return value;
  }

  /** Names the file the value came from: secure.yaml when it set this key, else clouds.yaml. */
  private fail(path: string[], problem: string, hint: string): never {
    let node: unknown = this.secureEntry;
    for (const key of path) node = isMapping(node) ? node[key] : undefined;
    const file = node !== undefined && this.secureFile ? this.secureFile : this.file;
    throw new ValidationError(file, ['clouds', this.cloud, ...path].join('.'), problem, { hint });
  }
}

function searchDirs(opts: ReadCloudsYamlOptions): string[] {
  return [opts.cwd, join(opts.home, '.config', 'openstack'), opts.siteDir ?? '/etc/openstack'];
}

function cloudsOf(doc: unknown, file: string, required: boolean): Record<string, unknown> {
  if (!isMapping(doc)) {
    throw new ValidationError(file, undefined, `is not a clouds file: expected a mapping, found ${kindOf(doc)}`, {
      hint: 'a clouds.yaml is a mapping with one key, clouds:, holding one entry per cloud',
    });
  }
  const clouds = doc.clouds;
  if (clouds === undefined || clouds === null) {
    if (!required) return {};
    throw new ValidationError(file, 'clouds', 'is missing', { hint: 'put the cloud entries under a top-level clouds: key' });
  }
  if (!isMapping(clouds)) {
    throw new ValidationError(file, 'clouds', `must be a mapping of cloud names to settings, not ${kindOf(clouds)}`, {
      hint: 'write clouds: followed by one indented entry per cloud name',
    });
  }
  return clouds;
}

/** openstacksdk treats `-` and `_` in keys alike. */
function normalizeKeys(value: unknown): Record<string, unknown> {
  if (!isMapping(value)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key.replace(/-/g, '_')] = isMapping(child) ? normalizeKeys(child) : child;
  return out;
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isMapping(current) && isMapping(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * Whether something is at `path`. Not only regular files: a FIFO or a folder
 * where clouds.yaml is looked for is named and refused by the reader rather
 * than skipped in silence.
 */
function present(path: string): boolean {
  return existsSync(path);
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function compact<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}
