/**
 * Checks of request bodies against the instance, the VNFD, the package and
 * the VIMs — all before anything changes. Each refusal is a ValidationError
 * (exit 2) naming the request's source and the field.
 */
import { echo, UsageError, ValidationError } from '../errors.js';
import { readinessOverrideProblems, type ReadinessOverrides } from '../infra/kubernetes/readiness-rules.js';
import type { Vim, VimSecrets } from '../vim/index.js';
import { unfoldPem } from '../vim/pem.js';
import type { Flavour, Vnfd } from '../vnfd/index.js';
import type {
  ChangeCurrentVnfPkgRequest,
  HealVnfRequest,
  InstantiateVnfRequest,
  ScaleVnfRequest,
  TerminateVnfRequest,
  VimConnection,
  VimConnectionInfo,
  VnfInstance,
  VnfcInfo,
} from './model.js';
import { scaledReplicas } from './replicas.js';

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function object(source: string, body: unknown, what: string): Json {
  if (!isObject(body)) throw new ValidationError(source, undefined, `is not a JSON object (a ${what})`, { hint: `see csar-samples/basic-cnf/requests/ for examples` });
  return body;
}

function optionalString(source: string, o: Json, field: string): string | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new ValidationError(source, field, `must be a non-empty string, not ${echo(v)}`);
  return v;
}

function requiredString(source: string, o: Json, field: string, hint: string): string {
  const v = optionalString(source, o, field);
  if (v === undefined) throw new ValidationError(source, field, 'is required', { hint });
  return v;
}

function optionalObject(source: string, o: Json, field: string): Json | undefined {
  const v = o[field];
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw new ValidationError(source, field, 'must be an object');
  return v;
}

const choices = (names: string[]) => (names.length ? names.join(', ') : '(none)');

/** A Kubernetes namespace name (RFC 1123 label). */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * `additionalParams.lcm-kubernetes-def-files` and `namespace`: every file a
 * member of the package. Absent files default to every Kubernetes definition
 * the package carries.
 */
function checkKubernetesParams(
  source: string,
  params: Json | undefined,
  pkg: { hasMember: (path: string) => boolean; kubernetesDefinitions: string[] },
): { defFiles: string[]; namespace?: string; readiness?: ReadinessOverrides } {
  const field = 'additionalParams.lcm-kubernetes-def-files';
  const raw = params?.['lcm-kubernetes-def-files'];
  let defFiles: string[];
  if (raw === undefined) {
    defFiles = pkg.kubernetesDefinitions;
    if (defFiles.length === 0) throw new ValidationError(source, field, 'is required: the package has no Kubernetes definitions to default to');
  } else {
    if (!Array.isArray(raw) || raw.length === 0) throw new ValidationError(source, field, 'must be a non-empty list of package paths');
    defFiles = raw.map((f, i) => {
      if (typeof f !== 'string' || f === '') throw new ValidationError(source, `${field}[${i}]`, 'must be a package path');
      if (f.startsWith('/') || f.split('/').includes('..') || !pkg.hasMember(f)) {
        throw new ValidationError(source, `${field}[${i}]`, `${echo(f)} is not a file of the package`, {
          hint: `choose from: ${choices(pkg.kubernetesDefinitions)}`,
        });
      }
      return f;
    });
  }
  const namespace = params?.['namespace'];
  if (namespace !== undefined && (typeof namespace !== 'string' || !NAMESPACE.test(namespace))) {
    throw new ValidationError(source, 'additionalParams.namespace', `${echo(namespace)} is not a Kubernetes namespace name`, {
      hint: 'lower-case letters, digits and "-", at most 63 characters',
    });
  }
  const readiness = params?.['vnfm_readiness'];
  if (readiness !== undefined) {
    const [problem] = readinessOverrideProblems(readiness);
    if (problem) {
      throw new ValidationError(source, `additionalParams.vnfm_readiness${problem[0]}`, problem[1], {
        hint: 'e.g. "vnfm_readiness": {"cluster.x-k8s.io/Cluster": {"jsonPath": ".status.phase", "values": ["Provisioned"]}, "controlplane.cluster.x-k8s.io/KubeadmControlPlane": {"condition": "Available"}}',
      });
    }
  }
  return { defFiles, ...(namespace ? { namespace } : {}), ...(readiness !== undefined ? { readiness: readiness as ReadinessOverrides } : {}) };
}

function checkVimConnectionInfoShape(source: string, o: Json): Record<string, VimConnectionInfo> | undefined {
  const map = optionalObject(source, o, 'vimConnectionInfo');
  if (!map) return undefined;
  for (const [key, entry] of Object.entries(map)) {
    if (!isObject(entry)) throw new ValidationError(source, `vimConnectionInfo.${key}`, 'must be an object with vimId (and vimType)');
  }
  return map as Record<string, VimConnectionInfo>;
}

export interface PackageView {
  hasMember: (path: string) => boolean;
  kubernetesDefinitions: string[];
}

/** A checked InstantiateVnfRequest, with the definition files resolved. */
export interface CheckedInstantiate {
  request: InstantiateVnfRequest;
  flavour: Flavour;
  defFiles: string[];
  namespace?: string;
  /** additionalParams.vnfm_readiness, checked. */
  readiness?: ReadinessOverrides;
}

export function checkInstantiateRequest(source: string, body: unknown, instance: VnfInstance, vnfd: Vnfd, pkg: PackageView): CheckedInstantiate {
  if (instance.instantiationState === 'INSTANTIATED') {
    throw new UsageError(`vnf instance ${instance.id} is already INSTANTIATED`, {
      hint: `terminate it first (vnfm vnf-terminate ${instance.id}), or create another instance`,
    });
  }
  const o = object(source, body, 'InstantiateVnfRequest');
  const flavours = Object.keys(vnfd.flavours);
  const flavourId = requiredString(source, o, 'flavourId', `choose from: ${choices(flavours)}`);
  const flavour = vnfd.flavours[flavourId];
  if (!flavour) throw new ValidationError(source, 'flavourId', `${echo(flavourId)} is not a flavour of VNFD ${vnfd.id}`, { hint: `choose from: ${choices(flavours)}` });
  const levelId = optionalString(source, o, 'instantiationLevelId');
  if (levelId && !flavour.instantiationLevels[levelId]) {
    throw new ValidationError(source, 'instantiationLevelId', `${echo(levelId)} is not an instantiation level of flavour ${flavourId}`, {
      hint: `choose from: ${choices(Object.keys(flavour.instantiationLevels))}`,
    });
  }
  const params = optionalObject(source, o, 'additionalParams');
  const k8s = checkKubernetesParams(source, params, pkg);
  checkVimConnectionInfoShape(source, o);
  return { request: o as unknown as InstantiateVnfRequest, flavour, ...k8s };
}

function requireInstantiated(instance: VnfInstance, operation: string) {
  if (instance.instantiationState !== 'INSTANTIATED' || !instance.instantiatedVnfInfo) {
    throw new UsageError(`vnf instance ${instance.id} is NOT_INSTANTIATED: there is nothing to ${operation}`, {
      hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} --request-file FILE`,
    });
  }
  return instance.instantiatedVnfInfo;
}

export function flavourOf(instance: VnfInstance, vnfd: Vnfd): Flavour {
  const flavourId = instance.instantiatedVnfInfo?.flavourId ?? '';
  const flavour = vnfd.flavours[flavourId];
  if (!flavour) throw new UsageError(`vnf instance ${instance.id} uses flavour ${echo(flavourId)}, which VNFD ${vnfd.id} no longer has`);
  return flavour;
}

export interface CheckedScale {
  request: ScaleVnfRequest;
  fromLevel: number;
  toLevel: number;
  /** VDU → replicas after the scale. */
  replicas: Record<string, number>;
}

export function checkScaleRequest(source: string, body: unknown, instance: VnfInstance, flavour: Flavour): CheckedScale {
  const info = requireInstantiated(instance, 'scale');
  const o = object(source, body, 'ScaleVnfRequest');
  const type = o['type'];
  if (type !== 'SCALE_OUT' && type !== 'SCALE_IN') {
    throw new ValidationError(source, 'type', `must be SCALE_OUT or SCALE_IN, not ${echo(type)}`);
  }
  const aspects = Object.keys(flavour.aspects);
  const aspectId = requiredString(source, o, 'aspectId', `choose from: ${choices(aspects)}`);
  const aspect = flavour.aspects[aspectId];
  if (!aspect) throw new ValidationError(source, 'aspectId', `${echo(aspectId)} is not a scaling aspect of flavour ${flavour.id}`, { hint: `choose from: ${choices(aspects)}` });
  const steps = o['numberOfSteps'] ?? 1;
  if (typeof steps !== 'number' || !Number.isInteger(steps) || steps < 1) {
    throw new ValidationError(source, 'numberOfSteps', `must be a positive integer, not ${echo(steps)}`);
  }
  const fromLevel = info.scaleStatus.find((s) => s.aspectId === aspectId)?.scaleLevel ?? 0;
  const toLevel = type === 'SCALE_OUT' ? fromLevel + steps : fromLevel - steps;
  if (toLevel > aspect.maxScaleLevel) {
    throw new ValidationError(source, 'numberOfSteps', `${type} by ${steps} would take aspect ${aspectId} from level ${fromLevel} to ${toLevel}, beyond its max_scale_level ${aspect.maxScaleLevel}`, {
      hint: aspect.maxScaleLevel > fromLevel ? `scale out by at most ${aspect.maxScaleLevel - fromLevel}` : 'the aspect is at its highest level: scale in first',
    });
  }
  if (toLevel < 0) {
    throw new ValidationError(source, 'numberOfSteps', `${type} by ${steps} would take aspect ${aspectId} from level ${fromLevel} to ${toLevel}, below 0`, {
      hint: fromLevel > 0 ? `scale in by at most ${fromLevel}` : 'the aspect is at level 0: scale out first',
    });
  }
  const replicas = scaledReplicas(flavour, info.metadata.vduReplicas, aspectId, fromLevel, toLevel);
  for (const vduId of Object.keys(aspect.vduDeltas)) {
    const profile = flavour.vdus[vduId]?.vduProfile;
    const n = replicas[vduId] ?? 0;
    if (profile && (n < profile.minNumberOfInstances || n > profile.maxNumberOfInstances)) {
      throw new ValidationError(source, 'numberOfSteps', `${type} would give ${vduId} ${n} instances, outside its vdu_profile (${profile.minNumberOfInstances}..${profile.maxNumberOfInstances})`);
    }
  }
  return { request: { ...(o as unknown as ScaleVnfRequest), numberOfSteps: steps }, fromLevel, toLevel, replicas };
}

export interface CheckedHeal {
  request: HealVnfRequest;
  /** The VNFCs to heal (all when the request names none). */
  vnfcs: VnfcInfo[];
}

/** `lenient` (a retry): ids no longer present are skipped, as their pods were already replaced. */
export function checkHealRequest(source: string, body: unknown, instance: VnfInstance, lenient = false): CheckedHeal {
  const info = requireInstantiated(instance, 'heal');
  const o = object(source, body, 'HealVnfRequest');
  const ids = o['vnfcInstanceId'];
  if (ids !== undefined && (!Array.isArray(ids) || ids.some((x) => typeof x !== 'string'))) {
    throw new ValidationError(source, 'vnfcInstanceId', 'must be a list of VNFC ids');
  }
  if (o['cause'] !== undefined && typeof o['cause'] !== 'string') throw new ValidationError(source, 'cause', 'must be a string');
  const wanted = (ids as string[] | undefined) ?? [];
  if (wanted.length === 0) return { request: o as HealVnfRequest, vnfcs: info.vnfcInfo };
  const vnfcs: VnfcInfo[] = [];
  wanted.forEach((id, i) => {
    const found = info.vnfcInfo.find((v) => v.id === id);
    if (found) vnfcs.push(found);
    else if (!lenient) {
      throw new ValidationError(source, `vnfcInstanceId[${i}]`, `${echo(id)} is not a VNFC of vnf instance ${instance.id}`, {
        hint: `choose from: ${choices(info.vnfcInfo.map((v) => v.id))}`,
      });
    }
  });
  return { request: o as HealVnfRequest, vnfcs };
}

export function checkTerminateRequest(source: string, body: unknown, instance: VnfInstance): TerminateVnfRequest {
  requireInstantiated(instance, 'terminate');
  const o = object(source, body, 'TerminateVnfRequest');
  const type = o['terminationType'] ?? 'GRACEFUL';
  if (type !== 'GRACEFUL' && type !== 'FORCEFUL') throw new ValidationError(source, 'terminationType', `must be GRACEFUL or FORCEFUL, not ${echo(type)}`);
  const timeout = o['gracefulTerminationTimeout'];
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 0)) {
    throw new ValidationError(source, 'gracefulTerminationTimeout', `must be a whole number of seconds, not ${echo(timeout)}`);
  }
  if (timeout !== undefined && type === 'FORCEFUL') {
    throw new ValidationError(source, 'gracefulTerminationTimeout', 'applies to GRACEFUL termination only', { hint: 'drop it, or use terminationType GRACEFUL' });
  }
  return { ...(o as unknown as TerminateVnfRequest), terminationType: type };
}

/** The shape of a ChangeCurrentVnfPkgRequest, before the new package is looked up. */
export function checkChangePackageShape(source: string, body: unknown, instance: VnfInstance): ChangeCurrentVnfPkgRequest {
  requireInstantiated(instance, 'change');
  const o = object(source, body, 'ChangeCurrentVnfPkgRequest');
  const vnfdId = requiredString(source, o, 'vnfdId', 'give the vnfdId of the onboarded package to change to (vnfm vnfpkg-list)');
  if (vnfdId === instance.vnfdId) {
    throw new ValidationError(source, 'vnfdId', `vnf instance ${instance.id} already uses VNFD ${vnfdId}`, { hint: 'name the vnfdId of another onboarded package' });
  }
  optionalObject(source, o, 'additionalParams');
  checkVimConnectionInfoShape(source, o);
  return o as unknown as ChangeCurrentVnfPkgRequest;
}

export interface CheckedChangePackage {
  flavour: Flavour;
  defFiles: string[];
  namespace?: string;
  readiness?: ReadinessOverrides;
}

export function checkChangePackage(source: string, request: ChangeCurrentVnfPkgRequest, instance: VnfInstance, newVnfd: Vnfd, pkg: PackageView): CheckedChangePackage {
  const flavourId = instance.instantiatedVnfInfo?.flavourId ?? '';
  const flavour = newVnfd.flavours[flavourId];
  if (!flavour) {
    throw new ValidationError(source, 'vnfdId', `VNFD ${newVnfd.id} has no flavour ${echo(flavourId)}, the flavour vnf instance ${instance.id} runs`, {
      hint: `its flavours: ${choices(Object.keys(newVnfd.flavours))}`,
    });
  }
  const k8s = checkKubernetesParams(source, request.additionalParams, pkg);
  return { flavour, ...k8s };
}

// ---------------------------------------------------------------------------
// VIMs

export interface VimLookup {
  find(ref: string): Vim | undefined;
  findDefault(): Vim | undefined;
  openSecrets(vim: Vim): Promise<VimSecrets>;
}

const KUBERNETES_TYPES = new Set(['kubernetes', 'etsinfv.kubernetes.v_1', 'etsinfv.helm.v_3']);
const OPENSTACK_TYPES = new Set(['openstack', 'etsinfv.openstack_keystone.v_3', 'etsinfv.openstack_keystone.v_2']);

/**
 * OpenStack operations are planned in openstack-plan.ts; these functions serve
 * the Kubernetes ones, so an OpenStack VIM here is a mix-up in the request (a
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
  if (type && OPENSTACK_TYPES.has(type)) notKubernetes(source, `${field}.vimType`, `${echo(entry.vimType)}`);
  if (type && !KUBERNETES_TYPES.has(type)) {
    throw new ValidationError(source, `${field}.vimType`, `${echo(entry.vimType)} is not a VIM type vnfm knows`, { hint: 'use kubernetes (or ETSINFV.KUBERNETES.V_1)' });
  }
  if (entry.interfaceInfo !== undefined) return inlineVim(source, field, key, entry);
  if (!entry.vimId) throw new ValidationError(source, `${field}.vimId`, 'is required: the id or name of a registered VIM', { hint: 'list them with: vnfm vim-list' });
  const vim = lookup.find(entry.vimId);
  if (!vim) {
    throw new ValidationError(source, `${field}.vimId`, `no VIM ${echo(entry.vimId)} is registered`, {
      hint: 'register it with vnfm vim-register, or give it inline with interfaceInfo.endpoint and accessInfo',
    });
  }
  return registeredVim(source, `${field}.vimId`, lookup, vim);
}

/** The default VIM, for requests that name none. */
export async function defaultVim(source: string, lookup: VimLookup): Promise<VimConnection> {
  const vim = lookup.findDefault();
  if (!vim) {
    throw new ValidationError(source, 'vimConnectionInfo', 'names no VIM and there is no default VIM', {
      hint: 'add "vimConnectionInfo": {"vim1": {"vimId": "NAME", "vimType": "kubernetes"}}, or register a VIM with --is-default',
    });
  }
  return registeredVim(source, 'vimConnectionInfo', lookup, vim);
}

/** What to give instead of a blank ssl_ca_cert in an inline VIM (OpenStack's too). */
export const INLINE_CA_HINT = 'give the CA certificate in PEM, "None" to skip TLS verification explicitly, or leave ssl_ca_cert out to verify against the system\'s trusted CAs';

function inlineVim(source: string, field: string, key: string, entry: VimConnectionInfo): VimConnection {
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
  if (typeof token !== 'string' && !(typeof username === 'string' && typeof password === 'string')) {
    throw new ValidationError(source, `${field}.accessInfo`, 'needs bearer_token, or username and password', {
      hint: 'credentials given inline are used for this operation only and never stored',
    });
  }
  const secrets: VimSecrets = {
    ...(typeof token === 'string' ? { bearerToken: token } : { password: password as string }),
    // A CA folded into one line (a quoted multi-line scalar) is rebuilt as Tacker v2's AuthContextManager does.
    ...(typeof ca === 'string' && !insecure ? { caCert: unfoldPem(ca).text } : {}),
  };
  return {
    name: entry.vimId ?? key,
    inline: true,
    spec: {
      type: 'kubernetes',
      authUrl: endpoint,
      auth: typeof token === 'string' ? { method: 'bearer-token' } : { method: 'basic', username: username as string },
      verifyTls: !insecure,
      ...(typeof access['project'] === 'string' ? { projectName: access['project'] } : {}),
    },
    secrets,
  };
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
