/**
 * The VIM an operation runs on, secrets opened: a registered VIM by id or
 * name, one given inline in vimConnectionInfo (its credentials sealed with
 * vnfm's keyring wherever they are kept), the instance's own, or the
 * default; the recorded form of each; and the one set of messages and hints
 * for a VIM that is gone, missing or of the wrong kind. Each planner reads
 * VIMs of its kind through a VimKind (planners/planner.ts).
 */
import { echo, NotFoundError, TlsVerifyError, UsageError, ValidationError, VimCheckError } from '../errors.js';
import { isSealed, openSealed, sealFields, type Open, type Seal } from '../mgmt/sealed.js';
import type { Vim, VimSecrets, VimSpec } from '../vim/index.js';
import { unfoldPem } from '../vim/pem.js';
import type { LcmDeps } from './engine.js';
import type { VimConnection, VimConnectionInfo, VnfInstance } from '../model/lcm.js';

export interface VimLookup {
  find(ref: string): Promise<Vim | undefined>;
  findDefault(): Promise<Vim | undefined>;
  openSecrets(vim: Vim): Promise<VimSecrets>;
  /** Opens the sealed credentials of an inline VIM kept with an instance or an occurrence. */
  open?: Open;
}

/** The lookup over the store and the keyring that the functions below read VIMs through. */
export function vimLookup(deps: LcmDeps): VimLookup {
  return {
    find: async (ref) => await deps.store.vims.find(ref),
    findDefault: async () => await deps.store.vims.findDefault(),
    openSecrets: (vim) => deps.openVimSecrets(vim),
    ...(deps.open ? { open: deps.open } : {}),
  };
}

/** vimType values (lower case) of the Kubernetes VIMs. */
export const KUBERNETES_VIM_TYPES: ReadonlySet<string> = new Set(['kubernetes', 'etsinfv.kubernetes.v_1', 'etsinfv.helm.v_3']);
/** vimType values (lower case) of the OpenStack VIMs. */
export const OPENSTACK_VIM_TYPES: ReadonlySet<string> = new Set(['openstack', 'etsinfv.openstack_keystone.v_3', 'etsinfv.openstack_keystone.v_2']);

/** How the VIMs of one kind are read; each planner has one (planners/planner.ts). */
export interface VimReader {
  /** A registered VIM of this kind, secrets opened; a VIM of another kind is refused, naming `field`. */
  registered(source: string, field: string, lookup: VimLookup, vim: Vim): Promise<VimConnection>;
  /** An inline VIM from a vimConnectionInfo entry whose secrets are open. */
  inline(source: string, field: string, key: string, entry: VimConnectionInfo): VimConnection;
}

// ---------------------------------------------------------------------------
// Kubernetes VIMs

/**
 * planners/openstack.ts reads OpenStack VIMs; these functions read the
 * Kubernetes ones, so an OpenStack VIM here is a mix-up in the request (a
 * Kubernetes instance pointed at an OpenStack VIM, or vimType kubernetes on one).
 */
function notKubernetes(source: string, field: string, what: string): never {
  throw new ValidationError(source, field, `${what} is an OpenStack VIM, where this operation needs a Kubernetes VIM`, {
    hint: 'name a Kubernetes VIM (vnfm vim-list), or give an OpenStack VIM with vimType ETSINFV.OPENSTACK_KEYSTONE.V_3 to an instance that runs on OpenStack',
  });
}

/** A registered Kubernetes VIM, secrets opened. */
export async function registeredVim(source: string, field: string, lookup: VimLookup, vim: Vim): Promise<VimConnection> {
  if (vim.spec.type !== 'kubernetes') notKubernetes(source, field, `VIM "${vim.name}"`);
  return { id: vim.id, name: vim.name, inline: false, spec: vim.spec, secrets: await lookup.openSecrets(vim) };
}

/**
 * The VIM of a request's vimConnectionInfo (a registered VIM by id or name,
 * or inline with interfaceInfo + accessInfo), else `fallback`.
 */
export async function resolveVimConnection(
  source: string,
  info: Record<string, VimConnectionInfo> | undefined,
  lookup: VimLookup,
  fallback: () => Promise<VimConnection>,
): Promise<VimConnection> {
  const entries = Object.entries(info ?? {});
  if (entries.length === 0) return fallback();
  const [key, entry] = entries[0]!;
  const field = `vimConnectionInfo.${key}`;
  const type = entry.vimType?.toLowerCase();
  if (type && OPENSTACK_VIM_TYPES.has(type)) notKubernetes(source, `${field}.vimType`, `${echo(entry.vimType)}`);
  if (type && !KUBERNETES_VIM_TYPES.has(type)) {
    throw new ValidationError(source, `${field}.vimType`, `${echo(entry.vimType)} is not a VIM type vnfm knows`, { hint: 'use kubernetes (or ETSINFV.KUBERNETES.V_1)' });
  }
  if (entry.interfaceInfo !== undefined) return inlineVim(source, field, key, await openInlineEntry(source, field, entry, lookup.open));
  return registeredVim(source, `${field}.vimId`, lookup, await registeredEntryVim(source, field, lookup, entry));
}

/**
 * The registered VIM of an entry that is not inline: the one its vimId
 * names (by id or name), else the default VIM, as Tacker's get_vim reads
 * one (vnfm/vim_client.py) for a v1 entry, whatever else it holds, and for a
 * v2 entry without interfaceInfo and accessInfo.
 */
export async function registeredEntryVim(source: string, field: string, lookup: Pick<VimLookup, 'find' | 'findDefault'>, entry: VimConnectionInfo): Promise<Vim> {
  if (!entry.vimId) {
    const vim = await lookup.findDefault();
    if (!vim) throw new ValidationError(source, `${field}.vimId`, 'is absent, which means the default VIM, and there is no default VIM', { hint: REGISTER_HINT });
    return vim;
  }
  const vim = await lookup.find(entry.vimId);
  if (!vim) throw new ValidationError(source, `${field}.vimId`, `no VIM ${echo(entry.vimId)} is registered`, { hint: REGISTER_HINT });
  return vim;
}

const REGISTER_HINT =
  'name a registered VIM (vnfm vim-list) or register one (vnfm vim-register, --is-default for the default); ' +
  'a VIM given inline is an entry of the v2 map form with interfaceInfo and accessInfo (a v1 array entry always names a registered VIM, as in Tacker v1)';

/** accessInfo.region of an entry naming a registered VIM: the region an OpenStack VIM is used in (of accessInfo, all Tacker v1 reads). */
export function entryRegion(source: string, field: string, entry: VimConnectionInfo | undefined): string | undefined {
  const region = entry?.accessInfo?.['region'];
  if (region === undefined || region === null || region === '') return undefined;
  if (typeof region !== 'string') throw new ValidationError(source, `${field}.accessInfo.region`, `must be a region name, not ${echo(region)}`);
  return region;
}

/** A registered OpenStack VIM in the region an entry names (its region_name for this use); other VIMs as they are. */
const inRegion = (vim: VimConnection, region: string | undefined): VimConnection =>
  region && vim.spec.type === 'openstack' ? { ...vim, spec: { ...vim.spec, regionName: region } } : vim;

/** The default VIM, for requests that name none. */
export async function defaultVim(source: string, lookup: VimLookup): Promise<VimConnection> {
  const vim = await lookup.findDefault();
  if (!vim) {
    throw new ValidationError(source, 'vimConnectionInfo', 'names no VIM and there is no default VIM', {
      hint: 'add "vimConnectionInfo": {"vim1": {"vimId": "NAME", "vimType": "kubernetes"}}, or register a VIM with --is-default',
    });
  }
  return registeredVim(source, 'vimConnectionInfo', lookup, vim);
}

/** What to give instead of a blank ssl_ca_cert in an inline VIM (OpenStack's too). */
export const INLINE_CA_HINT = 'give the CA certificate in PEM, "None" to skip TLS verification explicitly, or leave ssl_ca_cert out to verify against the system\'s trusted CAs';

/**
 * Where an inline VIM's secrets sit in a vimConnectionInfo entry: sealed
 * with vnfm's keyring wherever the entry is kept (the instance, the
 * occurrence), as a registered VIM's are. The CA too, which Tacker treats as
 * a secret.
 */
const INLINE_SECRET_PATHS = [
  'accessInfo.bearer_token',
  'accessInfo.password',
  'accessInfo.client_secret',
  'accessInfo.client_key',
  'accessInfo.client_cert',
  'interfaceInfo.ssl_ca_cert',
  'interfaceInfo.cacert',
];

/** vimConnectionInfo with every inline VIM's secrets sealed: the form kept with an instance and recorded on its occurrences. */
export async function sealVimConnectionInfo(info: Record<string, VimConnectionInfo>, seal: Seal): Promise<Record<string, VimConnectionInfo>> {
  const out: Record<string, VimConnectionInfo> = {};
  for (const [k, v] of Object.entries(info)) out[k] = v.interfaceInfo !== undefined ? await sealFields(v, INLINE_SECRET_PATHS, seal) : v;
  return out;
}

/** Whether the entry still holds the credentials of an inline VIM (instances made before they were kept have none). */
export const keepsCredentials = (entry: VimConnectionInfo): boolean => entry.accessInfo !== undefined && Object.keys(entry.accessInfo).length > 0;

/** The entry with its sealed credentials opened (those of an inline VIM kept with an instance or an occurrence). */
export async function openInlineEntry(source: string, field: string, entry: VimConnectionInfo, open: Open | undefined): Promise<VimConnectionInfo> {
  const sealed = [entry.accessInfo, entry.interfaceInfo].some((part) => Object.values(part ?? {}).some(isSealed));
  if (!sealed) return entry;
  if (!open) throw new UsageError(`${source}: ${field} holds sealed credentials and the keyring is not available to open them`);
  return openSealed(entry, open);
}

/** An inline VIM (Kubernetes unless another reader is given) from a vimConnectionInfo entry whose secrets are sealed (kept with an instance). */
export async function openInlineVim(source: string, key: string, entry: VimConnectionInfo, open: Open | undefined, reader: VimReader = kubernetesVims): Promise<VimConnection> {
  const field = `vimConnectionInfo.${key}`;
  return reader.inline(source, field, key, await openInlineEntry(source, field, entry, open));
}

export function inlineVim(source: string, field: string, key: string, entry: VimConnectionInfo): VimConnection {
  const iface = entry.interfaceInfo ?? {};
  const access = entry.accessInfo ?? {};
  const endpoint = iface['endpoint'];
  if (typeof endpoint !== 'string' || !/^https?:\/\//.test(endpoint)) {
    throw new ValidationError(source, `${field}.interfaceInfo.endpoint`, 'must be the API server URL (https://HOST:PORT)');
  }
  const ca = iface['ssl_ca_cert'];
  // Only the explicit "None" turns verification off; a blank (null) one reads like a certificate left out.
  if (ca === null) throw new ValidationError(source, `${field}.interfaceInfo.ssl_ca_cert`, 'is blank (null)', { hint: INLINE_CA_HINT });
  const insecure = ca === 'None';
  if (ca !== undefined && !insecure && (typeof ca !== 'string' || !ca.includes('-----BEGIN CERTIFICATE-----'))) {
    throw new ValidationError(source, `${field}.interfaceInfo.ssl_ca_cert`, 'is not a PEM certificate', { hint: 'give the cluster CA in PEM, or "None" to skip verification' });
  }
  const token = access['bearer_token'];
  const username = access['username'];
  const password = access['password'];
  const clientCert = access['client_cert'];
  const clientKey = access['client_key'];
  const certAuth = typeof clientCert === 'string' && typeof clientKey === 'string';
  if (typeof token !== 'string' && !(typeof username === 'string' && typeof password === 'string') && !certAuth) {
    throw new ValidationError(source, `${field}.accessInfo`, 'needs bearer_token, username and password, or client_cert and client_key', {
      hint: "credentials given inline are kept with the instance, sealed with vnfm's keyring, for the operations that follow",
    });
  }
  const secrets: VimSecrets = {
    ...(typeof token === 'string' ? { bearerToken: token } : typeof password === 'string' ? { password } : {}),
    ...(certAuth ? { clientCert: unfoldPem(clientCert).text, clientKey } : {}),
    // A CA folded into one line (a quoted multi-line scalar) is rebuilt as Tacker v2's AuthContextManager does.
    ...(typeof ca === 'string' && !insecure ? { caCert: unfoldPem(ca).text } : {}),
  };
  const auth: VimSpec['auth'] =
    typeof token === 'string'
      ? { method: 'bearer-token' }
      : typeof username === 'string' && typeof password === 'string'
        ? { method: 'basic', username }
        : { method: 'client-certificate' };
  return {
    name: entry.vimId ?? key,
    inline: true,
    spec: {
      type: 'kubernetes',
      authUrl: endpoint,
      auth,
      verifyTls: !insecure,
      ...(typeof access['project'] === 'string' ? { projectName: access['project'] } : {}),
      ...(entry.extra ? { extra: entry.extra } : {}),
    },
    secrets,
  };
}

/**
 * The recorded form of the VIM: a registered VIM by id; an inline one with
 * its secrets sealed (without them when no keyring is wired), so every later
 * operation, retry and rollback reaches it.
 */
export async function recordedVim(
  deps: { seal?: Seal },
  vim: VimConnection,
  given: Record<string, VimConnectionInfo> | undefined,
  vimType = 'kubernetes',
): Promise<Record<string, VimConnectionInfo>> {
  const key = Object.keys(given ?? {})[0] ?? 'vim1';
  if (vim.inline) return deps.seal ? sealVimConnectionInfo(given ?? {}, deps.seal) : redactVimConnectionInfo(given ?? {});
  // The region an OpenStack VIM is used in, when the entry names one: kept for the operations that follow.
  const region = vim.spec.type === 'openstack' ? entryRegion('request', `vimConnectionInfo.${key}`, given?.[key]) : undefined;
  return { [key]: { vimId: vim.id!, vimType, ...(region ? { accessInfo: { region } } : {}) } };
}

/**
 * What an instance records of its VIM (`record`, from recordedVim): a
 * registered one by id, with its entry when that names a region to use it
 * in; an inline one's entry, credentials sealed.
 */
export function instanceVimFields(vim: VimConnection, record: Record<string, VimConnectionInfo>): Pick<VnfInstance, 'vimId' | 'vimConnectionInfo'> {
  if (vim.inline) return { vimConnectionInfo: record };
  const regional = Object.values(record).some((e) => e.accessInfo?.['region'] !== undefined);
  return { vimId: vim.id!, ...(regional ? { vimConnectionInfo: record } : {}) };
}

/** What trying an inline VIM needs: the check, and the registered VIMs whose CA an inline one without its own may take. */
export type InlineCheckDeps = Pick<LcmDeps, 'checkInlineVim' | 'insecureInlineVims'> & Partial<Pick<LcmDeps, 'store' | 'openVimSecrets'>>;

/**
 * Credentials given inline are tried before anything is recorded: wrong
 * ones are refused (VimCheckError, exit 6) rather than recorded on an
 * occurrence that fails. An inline Kubernetes VIM without ssl_ca_cert is
 * verified against the CA of a registered VIM with the same endpoint, else
 * the system's trusted CAs; Tacker turns verification off for it
 * (kubernetes_utils.py AuthContextManager), vnfm only when the operator
 * says so (--insecure-inline-vims), with a warning each time. Returns the
 * VIM as it was reached.
 */
export async function checkedInline(deps: InlineCheckDeps, vim: VimConnection): Promise<VimConnection> {
  if (!vim.inline) return vim;
  if (!withoutCa(vim)) {
    await deps.checkInlineVim?.(vim);
    return vim;
  }
  const { tried, registered } = await withRegisteredCa(deps, vim);
  try {
    await deps.checkInlineVim?.(tried);
    return tried;
  } catch (err) {
    if (!(err instanceof TlsVerifyError)) throw err;
    if (!deps.insecureInlineVims) throw unverifiedInline(vim, err, registered);
    deps.insecureInlineVims.warn(
      `inline VIM ${vim.spec.authUrl} is used without TLS verification (--insecure-inline-vims), as Tacker uses an inline VIM without ssl_ca_cert: its certificate is not checked, and its credentials go to whoever answers there`,
    );
    const insecure: VimConnection = { ...vim, spec: { ...vim.spec, verifyTls: false } };
    await deps.checkInlineVim?.(insecure);
    return insecure;
  }
}

/** An inline Kubernetes VIM that verifies TLS and was given no CA of its own (interfaceInfo without ssl_ca_cert). */
const withoutCa = (vim: VimConnection) => vim.inline && vim.spec.type === 'kubernetes' && vim.spec.verifyTls && vim.secrets.caCert === undefined;

/** The inline VIM without a CA of its own with the CA of a registered VIM at its endpoint, when there is one (`registered` names it). */
async function withRegisteredCa(deps: InlineCheckDeps, vim: VimConnection): Promise<{ tried: VimConnection; registered?: string }> {
  if (!withoutCa(vim)) return { tried: vim };
  const found = await registeredCa(deps, vim.spec.authUrl);
  return found ? { tried: { ...vim, secrets: { ...vim.secrets, caCert: found.caCert } }, registered: found.name } : { tried: vim };
}

/** The CA of a registered Kubernetes VIM at `endpoint` (the same scheme, host, port and path), the first registered that has one. */
async function registeredCa(deps: InlineCheckDeps, endpoint: string): Promise<{ name: string; caCert: string } | undefined> {
  if (!deps.store || !deps.openVimSecrets) return undefined;
  const key = endpointKey(endpoint);
  for (const vim of await deps.store.vims.list({ type: 'kubernetes' })) {
    if (!vim.secretNames.includes('caCert') || endpointKey(vim.spec.authUrl) !== key) continue;
    const caCert = (await deps.openVimSecrets(vim)).caCert;
    if (caCert) return { name: vim.name, caCert };
  }
  return undefined;
}

/** An endpoint as compared: scheme, host (lower case), port (the scheme's default when absent) and path without a trailing slash. */
function endpointKey(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    return `${u.protocol}//${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return endpoint;
  }
}

/** The refusal of an inline VIM without ssl_ca_cert whose certificate nothing vnfm may use verifies, with the three ways out. */
function unverifiedInline(vim: VimConnection, err: TlsVerifyError, registered: string | undefined): VimCheckError {
  const tried = registered
    ? `the CA of registered VIM "${registered}", which has the same endpoint, does not verify it either`
    : "no registered VIM has this endpoint to take a CA from, and the system's trusted CAs do not verify it";
  return new VimCheckError(`inline VIM ${vim.spec.authUrl}: ${err.message}: the request gives no interfaceInfo.ssl_ca_cert, and ${tried}`, {
    hint:
      'add "ssl_ca_cert": "<the cluster CA in PEM>" to the vimConnectionInfo entry\'s interfaceInfo (certificate-authority-data of its kubeconfig, base64-decoded); ' +
      `or register the VIM with its CA (vnfm vim-register --config-file FILE NAME, auth_url ${vim.spec.authUrl}), whose CA inline VIMs at that endpoint then take; ` +
      'or, to skip verification as Tacker does, give --insecure-inline-vims to the command',
    cause: err,
  });
}

/** vimConnectionInfo as it may be stored: no accessInfo (secrets), and no CA (Tacker treats it as secret). */
export function redactVimConnectionInfo(info: Record<string, VimConnectionInfo>): Record<string, VimConnectionInfo> {
  return Object.fromEntries(
    Object.entries(info).map(([k, v]) => {
      const { accessInfo: _a, interfaceInfo, ...rest } = v;
      const iface = interfaceInfo ? Object.fromEntries(Object.entries(interfaceInfo).filter(([name]) => name !== 'ssl_ca_cert')) : undefined;
      return [k, { ...rest, ...(iface ? { interfaceInfo: iface } : {}) }];
    }),
  );
}

/** The Kubernetes planner's VIMs. */
export const kubernetesVims: VimReader = { registered: registeredVim, inline: inlineVim };

// ---------------------------------------------------------------------------
// OpenStack VIMs

/** How an OpenStack VIM is recorded on an instance and its occurrences. */
export const RECORDED_OPENSTACK_VIM_TYPE = 'ETSINFV.OPENSTACK_KEYSTONE.V_3';

/** The Keystone settings of an inline OpenStack VIM (Tacker v2's interfaceInfo/accessInfo). */
export function inlineOpenStackVim(source: string, field: string, key: string, entry: VimConnectionInfo): VimConnection {
  const iface = entry.interfaceInfo ?? {};
  const access = entry.accessInfo ?? {};
  const endpoint = iface['endpoint'];
  if (typeof endpoint !== 'string' || !/^https?:\/\//.test(endpoint)) {
    throw new ValidationError(source, `${field}.interfaceInfo.endpoint`, 'must be the Keystone URL (http(s)://HOST:5000/v3)');
  }
  for (const name of ['ssl_ca_cert', 'cacert']) {
    // Only the explicit "None" (or cert_verify false) turns verification off; a blank (null) CA reads like one left out.
    if (iface[name] === null) throw new ValidationError(source, `${field}.interfaceInfo.${name}`, 'is blank (null)', { hint: INLINE_CA_HINT });
  }
  const ca = iface['ssl_ca_cert'] ?? iface['cacert'];
  const insecure = ca === 'None' || iface['cert_verify'] === false || iface['cert_verify'] === 'False';
  const str = (k: string) => (typeof access[k] === 'string' && access[k] !== '' ? (access[k] as string) : undefined);
  const username = str('username');
  const password = str('password');
  if (!username || !password) {
    throw new ValidationError(source, `${field}.accessInfo`, 'needs username and password (and project, projectDomain, userDomain)', {
      hint: "credentials given inline are kept with the instance, sealed with vnfm's keyring, for the operations that follow",
    });
  }
  const secrets: VimSecrets = { password, ...(typeof ca === 'string' && !insecure ? { caCert: ca } : {}) };
  return {
    name: entry.vimId ?? key,
    inline: true,
    spec: {
      type: 'openstack',
      authUrl: endpoint,
      auth: { method: 'password', username, userDomainName: str('userDomain') ?? 'Default' },
      projectName: str('project'),
      projectDomainName: str('projectDomain') ?? 'Default',
      ...(str('region') ? { regionName: str('region') } : {}),
      verifyTls: !insecure,
    },
    secrets,
  };
}

/** A registered OpenStack VIM, secrets opened. */
export async function registeredOpenStackVim(source: string, field: string, lookup: VimLookup, vim: Vim): Promise<VimConnection> {
  if (vim.spec.type !== 'openstack') {
    throw new ValidationError(source, field, `VIM "${vim.name}" is a ${vim.spec.type} VIM, not an OpenStack one`, { hint: 'name an OpenStack VIM (vnfm vim-list)' });
  }
  return { id: vim.id, name: vim.name, inline: false, spec: vim.spec, secrets: await lookup.openSecrets(vim) };
}

/** The OpenStack planner's VIMs. */
export const openStackVims: VimReader = { registered: registeredOpenStackVim, inline: inlineOpenStackVim };

/** The request's OpenStack VIM, else the instance's, else the default VIM. */
export async function resolveOpenStackVim(deps: LcmDeps, source: string, given: Record<string, VimConnectionInfo> | undefined, instance: VnfInstance): Promise<VimConnection> {
  const lookup = vimLookup(deps);
  const entries = Object.entries(given ?? {});
  if (entries.length > 0) {
    const [key, entry] = entries[0]!;
    const field = `vimConnectionInfo.${key}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ValidationError(source, field, 'must be an object with vimId (and vimType)');
    const type = entry.vimType?.toLowerCase();
    if (type && !OPENSTACK_VIM_TYPES.has(type)) {
      throw new ValidationError(source, `${field}.vimType`, `${echo(entry.vimType)} is not an OpenStack VIM type`, { hint: 'use ETSINFV.OPENSTACK_KEYSTONE.V_3 (or openstack)' });
    }
    if (entry.interfaceInfo !== undefined) return checkedInline(deps, inlineOpenStackVim(source, field, key, await openInlineEntry(source, field, entry, deps.open)));
    const vim = await registeredEntryVim(source, field, lookup, entry);
    return inRegion(await registeredOpenStackVim(source, `${field}.vimId`, lookup, vim), entryRegion(source, field, entry));
  }
  if (instance.vimId || Object.keys(instance.vimConnectionInfo ?? {}).length > 0) return instanceVim(deps, instance, source, openStackVims);
  const vim = await deps.store.vims.findDefault();
  if (!vim) {
    throw new ValidationError(source, 'vimConnectionInfo', 'names no VIM and there is no default VIM', {
      hint: `add "vimConnectionInfo": {"vim1": {"vimId": "NAME", "vimType": "${RECORDED_OPENSTACK_VIM_TYPE}"}}, or register a VIM with --is-default`,
    });
  }
  return registeredOpenStackVim(source, 'vimConnectionInfo', lookup, vim);
}

// ---------------------------------------------------------------------------
// The instance's VIM

/**
 * The VIM an instance runs on, for the operations after instantiate, read
 * with its planner's `reader`: the registered VIM it records, or the inline
 * one whose credentials it keeps sealed, tried before use as a request's
 * unless `tried` is false (vnf-update tries only the VIM it is given).
 */
export async function instanceVim(deps: LcmDeps, instance: VnfInstance, source: string, reader: VimReader, tried = true): Promise<VimConnection> {
  if (instance.vimId) {
    const vim = await deps.store.vims.find(instance.vimId);
    if (!vim) {
      throw new NotFoundError(`the VIM ${instance.vimId} of vnf instance ${instance.id} is no longer registered`, {
        hint: `a VIM cannot be registered again under its old id: give up on what is pending (vnfm op-fail OP) and instantiate again on a registered VIM`,
      });
    }
    // The region it was instantiated (or moved) in, when its entry named one.
    const kept = Object.entries(instance.vimConnectionInfo ?? {}).find(([, e]) => e.vimId === instance.vimId);
    return inRegion(await reader.registered(source, 'vimConnectionInfo', vimLookup(deps), vim), kept && entryRegion(source, `vimConnectionInfo.${kept[0]}`, kept[1]));
  }
  const [key, entry] = Object.entries(instance.vimConnectionInfo ?? {})[0] ?? [];
  if (key && entry) {
    // Kept sealed with the instance since it was instantiated with them.
    if (keepsCredentials(entry)) {
      const vim = await openInlineVim(source, key, entry, deps.open, reader);
      return tried ? checkedInline(deps, vim) : (await withRegisteredCa(deps, vim)).tried;
    }
    const endpoint = entry.interfaceInfo?.['endpoint'];
    throw new UsageError(`vnf instance ${instance.id} runs on an inline VIM (${String(endpoint)}) whose credentials it does not keep (it was instantiated by an older vnfm)`, {
      hint: 'give them again in the request\'s vimConnectionInfo ({"vim1": {"interfaceInfo": {...}, "accessInfo": {...}}}), or register the VIM with vnfm vim-register',
    });
  }
  throw new UsageError(`vnf instance ${instance.id} has no VIM`, { hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} --request-file FILE` });
}
