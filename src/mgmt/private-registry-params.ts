/**
 * `additionalParams.private_registry_installation_param` of the
 * private-registry-mgmt driver: checked and normalised as the request gives
 * it (port defaulted, the key file read, proxies checked), and sealed for
 * the record.
 */
import { statSync } from 'node:fs';
import { isAbsolute, posix, resolve } from 'node:path';
import { echo, ValidationError } from '../errors.js';
import { FileReadError, readInputText } from '../input-file.js';
import { isObject } from './request.js';
import { isSealed, type SealedValue } from './sealed.js';

export const PRIVATE_REGISTRY_PARAM = 'private_registry_installation_param';
export const FIELD = `additionalParams.${PRIVATE_REGISTRY_PARAM}`;

/** The container, its image and the server directory holding the registry's data. */
export const REGISTRY_CONTAINER = 'private_registry';
export const REGISTRY_IMAGE = 'registry:latest';
export const REGISTRY_DATA_DIR = '/var/lib/private-registry';
export const DEFAULT_REGISTRY_PORT = 5000;
/** Largest ssh_private_key_file read: keys are a few KiB. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

const KNOWN_FIELDS = ['ssh_cp_name', 'ssh_username', 'ssh_password', 'ssh_private_key', 'ssh_private_key_file', 'image_path', 'port_no', 'proxy'] as const;
export const PROXY_FIELDS = ['http_proxy', 'https_proxy', 'no_proxy'] as const;

export type Secret = string | SealedValue;

export interface RegistryProxy {
  http_proxy?: Secret;
  https_proxy?: Secret;
  no_proxy?: string;
}

/**
 * `private_registry_installation_param` after checking. In the recorded
 * request and on the instance the password, the private key and proxy URLs
 * with credentials are sealed; a key given as `ssh_private_key_file` is read
 * at prepare and kept (sealed) as `ssh_private_key`, the path only for
 * messages.
 */
export interface PrivateRegistryParams {
  ssh_cp_name: string;
  ssh_username: string;
  ssh_password?: Secret;
  ssh_private_key?: Secret;
  ssh_private_key_file?: string;
  image_path?: string;
  port_no: number;
  proxy?: RegistryProxy;
}

/** The parameters with every secret opened (in memory only). */
export interface OpenedParams extends PrivateRegistryParams {
  ssh_password?: string;
  ssh_private_key?: string;
  proxy?: { http_proxy?: string; https_proxy?: string; no_proxy?: string };
}

/** How long the registry may take to answer /v2/ after `docker run`, and the pauses between asks. */
export interface RegistryWait {
  totalMs: number;
  minMs: number;
  maxMs: number;
}
export const DEFAULT_WAIT: RegistryWait = { totalMs: 120_000, minMs: 500, maxMs: 5_000 };

const PEM_KEY = /-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----[\s\S]+-----END ([A-Z0-9]+ )*PRIVATE KEY-----/;

/**
 * Checks `private_registry_installation_param` as the request gives it and
 * returns it normalised (port defaulted, the key file read). Values already
 * sealed are accepted for the secrets.
 */
export function parsePrivateRegistryParams(source: string, raw: unknown, packageDir: string): PrivateRegistryParams {
  const fail = (field: string | undefined, problem: string, hint?: string): never => {
    throw new ValidationError(source, field ? `${FIELD}.${field}` : FIELD, problem, hint ? { hint } : {});
  };
  if (!isObject(raw)) {
    return fail(undefined, 'must be an object', '"private_registry_installation_param": {"ssh_cp_name": "CP1", "ssh_username": "ubuntu", "ssh_password": "..."}');
  }
  for (const key of Object.keys(raw)) {
    if (!(KNOWN_FIELDS as readonly string[]).includes(key)) fail(key, 'is not a parameter of the private registry', `known parameters: ${KNOWN_FIELDS.join(', ')}`);
  }
  const name = (field: 'ssh_cp_name' | 'ssh_username', hint: string): string => {
    const v = raw[field];
    if (v === undefined) return fail(field, 'is required', hint);
    if (typeof v !== 'string' || v.trim() === '') return fail(field, 'must be a non-empty string', hint);
    return v;
  };
  const ssh_cp_name = name('ssh_cp_name', 'the connection point (VduCp) of the registry server vnfm logs in through, e.g. "ssh_cp_name": "CP1"');
  const ssh_username = name('ssh_username', 'the user vnfm logs in as over SSH, e.g. "ssh_username": "ubuntu"');
  const out: PrivateRegistryParams = { ssh_cp_name, ssh_username, port_no: DEFAULT_REGISTRY_PORT };

  const password = raw['ssh_password'];
  if (password !== undefined) {
    if (!(typeof password === 'string' && password !== '') && !isSealed(password)) fail('ssh_password', 'must be a non-empty string');
    out.ssh_password = password as Secret;
  }
  const key = raw['ssh_private_key'];
  const keyFile = raw['ssh_private_key_file'];
  if (key !== undefined && keyFile !== undefined)
    fail('ssh_private_key_file', 'cannot be given with ssh_private_key', 'give the key either as PEM text (ssh_private_key) or as a file on this machine (ssh_private_key_file)');
  if (key !== undefined) {
    if (!isSealed(key) && !(typeof key === 'string' && PEM_KEY.test(key))) {
      fail(
        'ssh_private_key',
        'must be a private key in PEM or OpenSSH format (-----BEGIN ... PRIVATE KEY-----)',
        'or give the path of the key file on this machine as ssh_private_key_file',
      );
    }
    out.ssh_private_key = key as Secret;
  }
  if (keyFile !== undefined) {
    if (typeof keyFile !== 'string' || keyFile === '') return fail('ssh_private_key_file', 'must be the path of a private key file on this machine');
    let text: string;
    try {
      text = readInputText(keyFile, MAX_KEY_FILE_BYTES);
    } catch (err) {
      const problem = err instanceof FileReadError ? `${keyFile} ${err.problem}` : `cannot read ${keyFile}: ${(err as Error).message}`;
      return fail('ssh_private_key_file', problem, 'the file is read on the machine vnfm runs on, when the operation starts');
    }
    if (!PEM_KEY.test(text)) fail('ssh_private_key_file', `${keyFile} holds no private key in PEM or OpenSSH format`);
    out.ssh_private_key = text;
    out.ssh_private_key_file = keyFile;
  }
  if (out.ssh_password === undefined && out.ssh_private_key === undefined) {
    fail(undefined, 'gives no SSH credentials', 'add ssh_password, ssh_private_key (PEM text) or ssh_private_key_file (a key file on this machine)');
  }

  const image = raw['image_path'];
  if (image !== undefined) {
    if (typeof image !== 'string' || image === '') return fail('image_path', 'must be the path of a file in the VNF package, e.g. "Files/images/private_registry.tar"');
    out.image_path = checkImagePath(source, image, packageDir);
  }

  const port = raw['port_no'];
  if (port !== undefined) {
    const n = typeof port === 'string' && /^\d+$/.test(port) ? Number(port) : port;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535) {
      fail('port_no', `must be a TCP port number from 1 to 65535, not ${echo(port)}`, `leave it out for the default ${DEFAULT_REGISTRY_PORT}`);
    }
    out.port_no = n as number;
  }

  const proxy = raw['proxy'];
  if (proxy !== undefined) {
    if (!isObject(proxy)) return fail('proxy', 'must be an object {"http_proxy": "...", "https_proxy": "...", "no_proxy": "..."}');
    const p: RegistryProxy = {};
    for (const [k, v] of Object.entries(proxy)) {
      if (!(PROXY_FIELDS as readonly string[]).includes(k)) fail(`proxy.${k}`, 'is not a proxy setting', `known settings: ${PROXY_FIELDS.join(', ')}`);
      if (k === 'no_proxy') {
        if (typeof v !== 'string') fail('proxy.no_proxy', 'must be a string (comma-separated hosts)');
        p.no_proxy = v as string;
        continue;
      }
      if (isSealed(v)) {
        p[k as 'http_proxy' | 'https_proxy'] = v;
        continue;
      }
      if (typeof v !== 'string' || !isProxyUrl(v)) fail(`proxy.${k}`, 'must be a proxy URL, e.g. "http://proxy.example.com:3128"');
      p[k as 'http_proxy' | 'https_proxy'] = v as string;
    }
    out.proxy = p;
  }
  return out;
}

function isProxyUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'socks5:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** A proxy URL that carries a user or password is a secret. */
export function hasCredentials(url: string): boolean {
  try {
    const u = new URL(url);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/** `image_path` is a regular file inside the package: relative, no `..`, present. Returns it normalised. */
function checkImagePath(source: string, image: string, packageDir: string): string {
  const field = `${FIELD}.image_path`;
  const norm = image.replace(/\\/g, '/');
  if (isAbsolute(image) || posix.isAbsolute(norm)) {
    throw new ValidationError(source, field, `${image} is an absolute path; it must be a file inside the VNF package`, {
      hint: 'give the path relative to the package root, e.g. Files/images/private_registry.tar',
    });
  }
  if (norm.split('/').includes('..')) {
    throw new ValidationError(source, field, `${image} leads out of the VNF package (..)`, {
      hint: 'give the path relative to the package root, e.g. Files/images/private_registry.tar',
    });
  }
  const rel = posix.normalize(norm);
  let isFile = false;
  try {
    isFile = statSync(resolve(packageDir, rel)).isFile();
  } catch {
    isFile = false;
  }
  if (!isFile) {
    throw new ValidationError(source, field, `${rel} is not a file of the VNF package`, {
      hint: 'put the registry image (made with docker save registry:latest -o private_registry.tar) in the package, e.g. under Files/images/, and name it here',
    });
  }
  return rel;
}

/** The parameters as recorded: password, key and proxy URLs with credentials sealed. */
export async function sealParams(p: PrivateRegistryParams, seal: (plain: string) => Promise<SealedValue>): Promise<PrivateRegistryParams> {
  const sealed = async (v: Secret | undefined): Promise<SealedValue | undefined> => (v === undefined ? undefined : typeof v === 'string' ? seal(v) : v);
  const out: PrivateRegistryParams = { ...p };
  if (p.ssh_password !== undefined) out.ssh_password = (await sealed(p.ssh_password))!;
  if (p.ssh_private_key !== undefined) out.ssh_private_key = (await sealed(p.ssh_private_key))!;
  if (p.proxy) {
    const proxy: RegistryProxy = { ...p.proxy };
    for (const k of ['http_proxy', 'https_proxy'] as const) {
      const v = proxy[k];
      if (typeof v === 'string' && hasCredentials(v)) proxy[k] = await seal(v);
    }
    out.proxy = proxy;
  }
  return out;
}
