/**
 * Checks of request bodies against the instance, the VNFD, the package and
 * the VIMs — all before anything changes. Each refusal is a ValidationError
 * (exit 2) naming the request's source and the field.
 */
import { ConflictError, echo, UsageError, ValidationError } from '../errors.js';
import { isSealed, openSealed, sealFields, type Open, type Seal } from '../mgmt/sealed.js';
import { readinessOverrideProblems, type ReadinessOverrides } from '../infra/kubernetes/readiness-rules.js';
import type { Vim, VimSecrets, VimSpec } from '../vim/index.js';
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
} from '../model/lcm.js';
import { scaledReplicas } from './replicas.js';
import type { VimLookup } from './vim-connection.js';

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
): { defFiles: string[]; namespace?: string; createNamespace?: boolean; readiness?: ReadinessOverrides } {
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
  const createNamespace = params?.['vnfm_create_namespace'];
  if (createNamespace !== undefined && typeof createNamespace !== 'boolean') {
    throw new ValidationError(source, 'additionalParams.vnfm_create_namespace', `${echo(createNamespace)} is not true or false`, {
      hint: 'true creates the namespace when the cluster lacks it (as helm install --create-namespace); absent or false refuses to instantiate into a missing namespace',
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
  return {
    defFiles,
    ...(namespace ? { namespace } : {}),
    ...(createNamespace === true ? { createNamespace: true } : {}),
    ...(readiness !== undefined ? { readiness: readiness as ReadinessOverrides } : {}),
  };
}

function checkVimConnectionInfoShape(source: string, o: Json): Record<string, VimConnectionInfo> | undefined {
  return normalizeVimConnectionInfo(source, o['vimConnectionInfo']);
}

const V1_FORM = 'the v1 array [{"id": ..., "vimId": ..., "vimType": ..., "interfaceInfo": ..., "accessInfo": ...}]';
const V2_FORM = 'the v2 map {"KEY": {"vimId": ..., "vimType": ..., "interfaceInfo": ..., "accessInfo": ..., "extra": ...}}';
const ONE_FORM = `write vimConnectionInfo in one form: ${V1_FORM} (Tacker v1, SOL003 2.6.1), or ${V2_FORM} (Tacker v2)`;

/**
 * vimConnectionInfo in either of Tacker's forms, as the v2 map: the v1 array
 * (SOL003 2.6.1, each entry with its own `id`) becomes a map keyed by those
 * ids, each entry as Tacker v1 reads it (tackerV1Entry). A map entry with
 * v1's `id` is a request mixing the two forms: refused.
 */
export function normalizeVimConnectionInfo(source: string, raw: unknown): Record<string, VimConnectionInfo> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (Array.isArray(raw)) {
    const out: Record<string, VimConnectionInfo> = {};
    raw.forEach((entry, i) => {
      const field = `vimConnectionInfo[${i}]`;
      if (!isObject(entry)) throw new ValidationError(source, field, 'must be an object with id, vimId, vimType (v1 form)', { hint: ONE_FORM });
      const id = entry['id'];
      if (typeof id !== 'string' || id === '')
        throw new ValidationError(source, `${field}.id`, 'is required in the v1 (array) form: the id other fields of the request refer to', { hint: ONE_FORM });
      if (out[id]) throw new ValidationError(source, `${field}.id`, `${echo(id)} is given twice`);
      out[id] = tackerV1Entry(source, field, entry);
    });
    return out;
  }
  if (!isObject(raw)) throw new ValidationError(source, 'vimConnectionInfo', `must be ${V2_FORM}, or ${V1_FORM}`);
  for (const [key, entry] of Object.entries(raw)) {
    if (!isObject(entry)) throw new ValidationError(source, `vimConnectionInfo.${key}`, 'must be an object with vimId (and vimType)', { hint: ONE_FORM });
    if (entry['id'] !== undefined) {
      throw new ValidationError(
        source,
        `vimConnectionInfo.${key}.id`,
        'is a field of the v1 array form, in a v2 (map) vimConnectionInfo, whose keys are the ids: the request mixes the v1 and v2 forms',
        { hint: ONE_FORM },
      );
    }
  }
  return raw as Record<string, VimConnectionInfo>;
}

/**
 * A v1 (array) entry as Tacker v1 reads it (vnflcm/utils.py _get_vim,
 * vnfm/vim_client.py get_vim): the registered VIM its vimId names, or the
 * default VIM without one, and of accessInfo the region alone. Its
 * interfaceInfo and the rest of accessInfo (in Tacker's own bodies, the
 * endpoint and credentials of its test cloud) are not an inline VIM, and its
 * extra gives way to the registered VIM's (the v1 controller's
 * _validate_vim_connection): none of them is kept.
 */
function tackerV1Entry(source: string, field: string, entry: Json): VimConnectionInfo {
  const vimId = optionalString(source, entry, 'vimId');
  const vimType = optionalString(source, entry, 'vimType');
  const region = isObject(entry['accessInfo']) ? entry['accessInfo']['region'] : undefined;
  if (region !== undefined && region !== null && typeof region !== 'string') {
    throw new ValidationError(source, `${field}.accessInfo.region`, `must be a region name, not ${echo(region)}`);
  }
  return { ...(vimId ? { vimId } : {}), ...(vimType ? { vimType } : {}), ...(region ? { accessInfo: { region } } : {}) };
}

/** What of a v1 entry Tacker v1 leaves unused: interfaceInfo, accessInfo but its region, extra. */
function unusedOfV1Entry(entry: Json): string[] {
  const keys = (v: unknown, but?: string) => (isObject(v) ? Object.keys(v).filter((k) => k !== but) : []);
  const iface = keys(entry['interfaceInfo']);
  const access = keys(entry['accessInfo'], 'region');
  return [
    ...(iface.length ? [`interfaceInfo (${iface.join(', ')})`] : []),
    ...(access.length ? [`accessInfo (${access.join(', ')})`] : []),
    ...(entry['extra'] !== undefined ? ['extra'] : []),
  ];
}

/**
 * The notice for a request whose v1 (array) vimConnectionInfo entry carries what
 * Tacker v1 does not use (an endpoint, credentials), naming the VIM used
 * instead; none when there is nothing unused, or no such VIM (the request is
 * then refused where the VIM is looked up).
 */
export async function v1VimNotices(lookup: Pick<VimLookup, 'find' | 'findDefault'>, body: unknown): Promise<string[]> {
  const raw = isObject(body) ? body['vimConnectionInfo'] : undefined;
  const entry: unknown = Array.isArray(raw) ? raw[0] : undefined;
  if (!isObject(entry)) return [];
  const unused = unusedOfV1Entry(entry);
  const vimId = typeof entry['vimId'] === 'string' && entry['vimId'] !== '' ? entry['vimId'] : undefined;
  const vim = vimId ? await lookup.find(vimId) : await lookup.findDefault();
  if (unused.length === 0 || !vim) return [];
  const access = isObject(entry['accessInfo']) ? entry['accessInfo'] : {};
  const region = vim.spec.type === 'openstack' && typeof access['region'] === 'string' && access['region'] ? ` in region ${echo(access['region'])} (accessInfo.region)` : '';
  return [
    `vimConnectionInfo[0]: ${unused.join(', ')} not used, as in Tacker v1, where a v1 (array) entry names a registered VIM by vimId (none: the default VIM) ` +
      `and only accessInfo.region is read: ${vimId ? 'VIM' : 'the default VIM'} "${vim.name}" (${vim.id}) is used${region}; ` +
      'to give a VIM inline, write vimConnectionInfo in the v2 map form {"vim1": {"vimType": ..., "interfaceInfo": {"endpoint": ...}, "accessInfo": {...}}}',
  ];
}

/** A request body with its vimConnectionInfo in the v2 map form (see normalizeVimConnectionInfo). */
export function normalizeRequest(source: string, body: unknown): unknown {
  if (!isObject(body) || body['vimConnectionInfo'] === undefined || body['vimConnectionInfo'] === null) return body;
  return { ...body, vimConnectionInfo: normalizeVimConnectionInfo(source, body['vimConnectionInfo']) };
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
  /** additionalParams.vnfm_create_namespace: create the namespace when the cluster lacks it. */
  createNamespace?: boolean;
  /** additionalParams.vnfm_readiness, checked. */
  readiness?: ReadinessOverrides;
}

/** additionalParams of Tacker v2's Helm driver (tacker/sol_refactored/infra_drivers/kubernetes/helm.py). */
const HELM_PARAMS = ['helm_chart_path', 'helm_value_names', 'helm_parameters'];

export function checkInstantiateRequest(source: string, body: unknown, instance: VnfInstance, vnfd: Vnfd, pkg: PackageView): CheckedInstantiate {
  if (instance.instantiationState === 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is already INSTANTIATED`, {
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
  const helm = HELM_PARAMS.find((k) => params?.[k] !== undefined);
  if (helm) {
    // The Helm planner (planners/helm.ts) claims such requests before they get here; this guards the manifest path.
    throw new ValidationError(source, `additionalParams.${helm}`, "asks for a Helm chart deployment (Tacker's Helm driver), which manifest deployment does not do", {
      hint: 'a Helm request goes to the Helm planner (docs/helm-cnf.md); to deploy manifests instead, give additionalParams.lcm-kubernetes-def-files',
    });
  }
  const k8s = checkKubernetesParams(source, params, pkg);
  checkVimConnectionInfoShape(source, o);
  return { request: o as unknown as InstantiateVnfRequest, flavour, ...k8s };
}

function requireInstantiated(instance: VnfInstance, operation: string) {
  if (instance.instantiationState !== 'INSTANTIATED' || !instance.instantiatedVnfInfo) {
    throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: there is nothing to ${operation}`, {
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
    throw new ValidationError(
      source,
      'numberOfSteps',
      `${type} by ${steps} would take aspect ${aspectId} from level ${fromLevel} to ${toLevel}, beyond its max_scale_level ${aspect.maxScaleLevel}`,
      {
        hint: aspect.maxScaleLevel > fromLevel ? `scale out by at most ${aspect.maxScaleLevel - fromLevel}` : 'the aspect is at its highest level: scale in first',
      },
    );
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
      throw new ValidationError(
        source,
        'numberOfSteps',
        `${type} would give ${vduId} ${n} instances, outside its vdu_profile (${profile.minNumberOfInstances}..${profile.maxNumberOfInstances})`,
      );
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
  // Tacker v1 names VNFCs by their vnfcResourceInfo ids (the pods), v2 by their vnfcInfo ids (<vduId>-<pod>).
  const v1 = wanted.findIndex((id) => !info.vnfcInfo.some((v) => v.id === id) && info.vnfcResourceInfo.some((r) => r.id === id));
  const v2 = wanted.findIndex((id) => info.vnfcInfo.some((v) => v.id === id));
  if (v1 >= 0 && v2 >= 0) {
    throw new ValidationError(source, 'vnfcInstanceId', `mixes a v1 id (${echo(wanted[v1])}, a vnfcResourceInfo id) and a v2 id (${echo(wanted[v2])}, a vnfcInfo id)`, {
      hint: 'name VNFCs in one form: the v1 vnfcResourceInfo ids (the POD column of vnfm vnf-show) or the v2 vnfcInfo ids (the VNFC column)',
    });
  }
  const vnfcs: VnfcInfo[] = [];
  wanted.forEach((id, i) => {
    const found = info.vnfcInfo.find((v) => v.id === id) ?? info.vnfcInfo.find((v) => v.vnfcResourceInfoId === id && info.vnfcResourceInfo.some((r) => r.id === id));
    if (found) vnfcs.push(found);
    else if (!lenient) {
      throw new ValidationError(source, `vnfcInstanceId[${i}]`, `${echo(id)} is not a VNFC of vnf instance ${instance.id}`, {
        hint: `choose from: ${choices(info.vnfcInfo.map((v) => v.id))} (v2 vnfcInfo ids), or ${choices(info.vnfcResourceInfo.map((r) => r.id))} (v1 vnfcResourceInfo ids)`,
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
