/**
 * Reads Tacker's `vim-config.yaml`, with the rules python-tackerclient
 * applies, into a VimConfig. Every problem names the file, the field and the
 * fix; nothing here touches the store or the network.
 */
import { clip, echo, ValidationError } from '../errors.js';
import type { VimAuth, VimConfig, VimSecrets, VimSpec, VimType } from '../model/vim.js';
import { parsePemCertificates, unfoldPem } from './pem.js';
import { readBoundedText, readConfigYaml, MAX_CONFIG_BYTES } from '../yaml.js';

const KNOWN_KEYS = new Set([
  'auth_url',
  'type',
  'project_name',
  'project_id',
  'project_domain_name',
  'username',
  'user_id',
  'password',
  'user_domain_name',
  'cert_verify',
  'bearer_token',
  'ssl_ca_cert',
  'oidc_token_url',
  'client_id',
  'client_secret',
  'application_credential_id',
  'application_credential_secret',
  'region_name',
  'extra',
]);

/** Reads a vim-config file. */
export function readVimConfigFile(path: string): VimConfig {
  const doc = readConfigYaml(path, 'check the path given to --config-file');
  return parseVimConfig(doc, path, readBoundedText(path, MAX_CONFIG_BYTES));
}

/** The 1-based line where `key:` first appears, for messages. */
function lineOfKey(text: string, key: string): number | undefined {
  const re = new RegExp(`^\\s*["']?${key}["']?\\s*:`);
  const i = text.split('\n').findIndex((l) => re.test(l));
  return i < 0 ? undefined : i + 1;
}

/**
 * Turns a parsed vim-config document into a VimConfig.
 * `text` (the file's source) lets messages give line numbers.
 */
export function parseVimConfig(doc: unknown, file: string, text = ''): VimConfig {
  const at = (key: string) => {
    const line = lineOfKey(text, key);
    return line ? `${key} (line ${line})` : key;
  };
  const fail = (key: string, problem: string, hint: string): never => {
    throw new ValidationError(file, at(key), problem, { hint });
  };
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ValidationError(file, undefined, `is not a YAML mapping (found ${doc === null ? 'an empty document' : Array.isArray(doc) ? 'a list' : typeof doc})`, {
      hint: 'a vim-config.yaml is a mapping such as: auth_url: https://10.0.0.1:6443, type: kubernetes, bearer_token: ..., project_name: default',
    });
  }
  const cfg = doc as Record<string, unknown>;
  const str = (key: string, required: false | string = false): string | undefined => {
    const v = cfg[key];
    if (v === undefined || v === null || v === '') {
      if (required) fail(key, 'is required', required);
      return undefined;
    }
    if (typeof v === 'number') return String(v);
    if (typeof v !== 'string') fail(key, `must be a string, not ${Array.isArray(v) ? 'a list' : typeof v}`, `write ${key}: "value"`);
    return v as string;
  };

  const warnings: string[] = [];
  for (const key of Object.keys(cfg)) {
    if (!KNOWN_KEYS.has(key)) warnings.push(`${file}: unknown field ${echo(key)} ignored`);
  }

  const authUrl = str('auth_url', 'add the VIM endpoint, e.g. auth_url: https://192.168.0.10:6443 (Kubernetes) or http://keystone:5000/v3 (OpenStack)')!;
  let url: URL;
  try {
    url = new URL(authUrl);
  } catch {
    return fail('auth_url', `${echo(authUrl)} is not a URL with a scheme and a host`, 'write it as https://HOST:PORT[/path]');
  }
  if (!['http:', 'https:'].includes(url.protocol) || !url.hostname) {
    fail('auth_url', `${echo(authUrl)} must use http:// or https:// and name a host`, 'write it as https://HOST:PORT[/path]');
  }

  const typeRaw = str('type') ?? 'openstack';
  if (typeRaw !== 'openstack' && typeRaw !== 'kubernetes') {
    fail('type', `${echo(typeRaw)} is not a VIM type`, 'use type: openstack or type: kubernetes');
  }
  const type = typeRaw as VimType;

  const extraRaw = cfg['extra'];
  if (extraRaw !== undefined && extraRaw !== null && (typeof extraRaw !== 'object' || Array.isArray(extraRaw))) {
    fail('extra', 'must be a mapping', 'write extra: as key: value pairs, or remove it');
  }
  const extra = (extraRaw ?? undefined) as Record<string, unknown> | undefined;

  const secrets: VimSecrets = {};
  const ca = readCaCert(
    cfg['ssl_ca_cert'],
    (problem, hint) => fail('ssl_ca_cert', problem, hint),
    () =>
      warnings.push(
        `${file}: ${at('ssl_ca_cert')} is PEM folded into one line (a quoted multi-line scalar); its line breaks were rebuilt from the BEGIN/END markers, as Tacker does — write it as a block scalar (ssl_ca_cert: |) to keep them`,
      ),
  );
  let verifyTls = true;
  if (ca === null) {
    verifyTls = false;
    warnings.push(`${file}: ssl_ca_cert is None: the VIM's TLS certificate will not be verified`);
  } else if (ca) {
    secrets.caCert = ca;
  }

  const fields: ConfigFields = { cfg, file, str, fail, warnings, secrets };
  const common = { authUrl, verifyTls, extra };
  const spec = type === 'openstack' ? openstackSpec(fields, common) : kubernetesSpec(fields, common, url);
  return { spec, secrets, warnings };
}

/** What the two VIM types' readers share: the document, its string fields, where warnings and secrets go. */
interface ConfigFields {
  cfg: Record<string, unknown>;
  file: string;
  str(key: string, required?: false | string): string | undefined;
  fail(key: string, problem: string, hint: string): never;
  warnings: string[];
  secrets: VimSecrets;
}

/** The fields read before the VIM type's own. */
interface CommonFields {
  authUrl: string;
  /** False when ssl_ca_cert is None. */
  verifyTls: boolean;
  extra?: Record<string, unknown>;
}

/** An OpenStack VIM: the project, then an application credential or a Keystone user. */
function openstackSpec(fields: ConfigFields, common: CommonFields): VimSpec {
  const { cfg, file, str, fail, warnings, secrets } = fields;
  const { authUrl, extra } = common;
  let verifyTls = common.verifyTls;
  const projectName = str('project_name');
  const projectId = str('project_id');
  if (!projectName && !projectId) fail('project_name', 'is required for an OpenStack VIM', 'add project_name: (or project_id:) naming the project VNFs are deployed in');
  const certVerify = parseBool(cfg['cert_verify'], true, (problem) => fail('cert_verify', problem, "use cert_verify: 'True' or cert_verify: 'False'"));
  if (!certVerify) {
    verifyTls = false;
    warnings.push(`${file}: cert_verify is False: Keystone's TLS certificate will not be verified`);
  }
  let auth: VimAuth;
  const appCredId = str('application_credential_id');
  if (appCredId) {
    const secret = str('application_credential_secret', 'add application_credential_secret: for the application credential');
    secrets.applicationCredentialSecret = secret;
    auth = { method: 'application-credential', applicationCredentialId: appCredId };
  } else {
    const username = str('username');
    const userId = str('user_id');
    if (!username && !userId) fail('username', 'is required for an OpenStack VIM', 'add username: (or user_id:) of the Keystone user');
    secrets.password = str('password', 'add password: for the Keystone user (or use application_credential_id/_secret)');
    auth = {
      method: 'password',
      ...(username ? { username } : {}),
      ...(userId ? { userId } : {}),
      userDomainName: str('user_domain_name') ?? 'Default',
    };
  }
  return {
    type: 'openstack',
    authUrl,
    ...(projectName ? { projectName } : {}),
    ...(projectId ? { projectId } : {}),
    projectDomainName: str('project_domain_name') ?? 'Default',
    auth,
    verifyTls,
    ...(str('region_name') ? { regionName: str('region_name') } : {}),
    ...(extra ? { extra } : {}),
  };
}

/** A Kubernetes VIM: the default namespace, then OIDC, basic, or bearer-token authentication. */
function kubernetesSpec(fields: ConfigFields, common: CommonFields, url: URL): VimSpec {
  const { cfg, file, str, fail, warnings, secrets } = fields;
  const { authUrl, verifyTls, extra } = common;
  const projectName = str('project_name', 'add project_name: the default namespace for CNFs on this cluster (e.g. default)')!;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(projectName)) {
    fail('project_name', `${echo(projectName)} is not a valid Kubernetes namespace name`, 'use lower-case letters, digits and "-", at most 63 characters');
  }
  let auth: VimAuth;
  if (cfg['oidc_token_url'] !== undefined) {
    const tokenUrl = str('oidc_token_url', 'add the OIDC token endpoint URL')!;
    const hint = 'OIDC needs oidc_token_url, username, password and client_id (client_secret is optional)';
    const username = str('username', hint)!;
    secrets.password = str('password', hint);
    const clientId = str('client_id', hint)!;
    const clientSecret = str('client_secret');
    if (clientSecret) secrets.clientSecret = clientSecret;
    auth = { method: 'oidc', tokenUrl, username, clientId };
  } else if (cfg['username'] !== undefined && cfg['password'] !== undefined) {
    auth = { method: 'basic', username: str('username', 'add username:')! };
    secrets.password = str('password', 'add password:');
  } else if (cfg['bearer_token'] !== undefined) {
    secrets.bearerToken = str('bearer_token', 'add the ServiceAccount token, e.g. from: kubectl create token SA -n NS')!;
    auth = { method: 'bearer-token' };
  } else {
    return fail(
      'bearer_token',
      'no usable authentication: give bearer_token, or username and password, or oidc_token_url with username, password and client_id',
      'add bearer_token: (a ServiceAccount token from: kubectl create token SA -n NS)',
    );
  }
  if (url.protocol === 'http:') warnings.push(`${file}: auth_url uses http://: credentials will cross the network unencrypted`);
  return { type: 'kubernetes', authUrl, projectName, auth, verifyTls, ...(extra ? { extra } : {}) };
}

/**
 * `ssl_ca_cert`: PEM text (one or more certificates; folded into one line
 * is repaired as Tacker repairs it), or `None` for an
 * explicitly unverified connection (returns null), or absent (undefined:
 * verify against the system's trusted CAs). A blank one (YAML null: the key
 * with nothing after it) is refused: it reads like a certificate left out by
 * mistake, and must not quietly turn verification off.
 */
function readCaCert(value: unknown, fail: (problem: string, hint: string) => never, noteFolded: () => void): string | null | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === 'None') return null;
  if (value === null) return fail('is blank', BLANK_CA_CERT_HINT);
  if (typeof value !== 'string') return fail('must be PEM text or None', 'paste the CA certificate as a block scalar: ssl_ca_cert: |');
  const { text, folded } = unfoldPem(value);
  try {
    const certs = parsePemCertificates(text).join('\n');
    if (folded) noteFolded();
    return certs;
  } catch (err) {
    return fail(
      `is not a PEM certificate (${clip((err as Error).message)})`,
      'paste the cluster CA (-----BEGIN CERTIFICATE----- ...) as a block scalar "ssl_ca_cert: |", or use ssl_ca_cert: None to skip verification',
    );
  }
}

/** What to write instead of a blank `ssl_ca_cert:` (also for inline VIMs in requests). */
export const BLANK_CA_CERT_HINT =
  "paste the CA certificate as a block scalar (ssl_ca_cert: |), write ssl_ca_cert: None to skip TLS verification explicitly, or remove the line to verify against the system's trusted CAs";

function parseBool(value: unknown, dflt: boolean, fail: (problem: string) => never): boolean {
  if (value === undefined || value === null) return dflt;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return fail(`${echo(value)} is not True or False`);
}
