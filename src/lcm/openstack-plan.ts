/**
 * The LCM operations on an OpenStack VIM: a VNF is the Heat stack
 * `vnf-<instance id>` made from the package's Base HOT for the flavour, the
 * Heat environments, and the `nfv` JSON parameter built here the way Tacker's
 * v2 driver builds it (from the VNFD, the instantiation level or scale level,
 * and the request). The engine picks these plans when the instance's VIM is
 * an OpenStack one (`infraOf`).
 */
import { ConflictError, echo, UsageError, ValidationError, NotFoundError } from '../errors.js';
import type { NfvParameter, OpenStackInfraDriver } from '../infra/openstack/driver-contract.js';
import { stackNameOf } from '../infra/openstack/driver-contract.js';
import type { Vim, VimSecrets } from '../vim/index.js';
import type { Flavour } from '../vnfd/index.js';
import type { LcmDeps, OpenStackPlan, OperationOptions } from './engine.js';
import type {
  ChangeCurrentVnfPkgRequest,
  HealVnfRequest,
  InstantiateVnfRequest,
  InstantiatedVnfInfo,
  LcmOpOcc,
  LcmOperation,
  ScaleVnfRequest,
  VimConnection,
  VimConnectionInfo,
  VnfInstance,
} from './model.js';
import {
  dropInstanceEnvironments,
  loadInstanceEnvironments,
  readBaseHot,
  readHeatEnvironments,
  saveInstanceEnvironments,
  withEnvironments,
  type HeatEnvironments,
} from './heat-files.js';
import { openOnboarded, type OnboardedPackage } from './package-content.js';
import { levelReplicas } from './replicas.js';
import {
  checkHealRequest,
  checkedInline,
  INLINE_CA_HINT,
  checkScaleRequest,
  checkTerminateRequest,
  checkChangePackageShape,
  flavourOf,
  keepsCredentials,
  recordedVim,
} from './requests.js';
import { isSealed, openSealed } from '../mgmt/sealed.js';
import { vnfcRecords, vnfcsOf } from './vnfcs.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export const OPENSTACK_VIM_TYPES = new Set(['openstack', 'etsinfv.openstack_keystone.v_3', 'etsinfv.openstack_keystone.v_2']);
const RECORDED_VIM_TYPE = 'ETSINFV.OPENSTACK_KEYSTONE.V_3';

/** What the instance keeps about its stack, in instantiatedVnfInfo.metadata.heat. */
export interface HeatStackRecord {
  stackName: string;
  /** The Base HOT's top template in the package. */
  templatePath: string;
  /** The `nfv` parameter last sent. */
  nfv: NfvParameter;
  /** The request's extVirtualLinks and additionalParams.nfv, to build `nfv` again for a new package. */
  extVirtualLinks?: unknown[];
  nfvOverrides?: Json;
  /** The environment files the stack was made with (copies are kept under VNFM_HOME). */
  environments: string[];
}

type OpenStackInfo = InstantiatedVnfInfo & { metadata: InstantiatedVnfInfo['metadata'] & { heat: HeatStackRecord } };

// ---------------------------------------------------------------------------
// Which infra-driver

/** The infra-driver an operation on the instance goes to, from its VIM (or, for an instantiate, the request's). */
export function infraOf(deps: LcmDeps, instance: VnfInstance, body: unknown, recorded?: LcmOpOcc): 'kubernetes' | 'openstack' {
  const typeOfVim = (vim: Vim | undefined) => vim?.spec.type;
  if (instance.vimId) return typeOfVim(deps.store.vims.find(instance.vimId)) === 'openstack' ? 'openstack' : 'kubernetes';
  const fromInfo = (info: Record<string, VimConnectionInfo> | undefined): 'kubernetes' | 'openstack' | undefined => {
    const entry = Object.values(info ?? {})[0];
    if (!entry) return undefined;
    const type = entry.vimType?.toLowerCase();
    if (type) return OPENSTACK_VIM_TYPES.has(type) ? 'openstack' : 'kubernetes';
    if (entry.vimId) return typeOfVim(deps.store.vims.find(entry.vimId)) === 'openstack' ? 'openstack' : 'kubernetes';
    return undefined;
  };
  const known =
    fromInfo(instance.vimConnectionInfo) ??
    fromInfo((recorded?.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo> } | undefined)?.vimConnectionInfo) ??
    fromInfo(isObject(body) && isObject(body['vimConnectionInfo']) ? (body['vimConnectionInfo'] as Record<string, VimConnectionInfo>) : undefined);
  if (known) return known;
  if (instance.instantiationState === 'NOT_INSTANTIATED' && !recorded) return typeOfVim(deps.store.vims.findDefault()) === 'openstack' ? 'openstack' : 'kubernetes';
  return 'kubernetes';
}

// ---------------------------------------------------------------------------
// The nfv parameter

/** RFC 7386 JSON merge patch: Tacker merges additionalParams.nfv over the parameter it built this way. */
export function jsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Json = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = jsonMergePatch(out[k], v);
  }
  return out;
}

/**
 * The `nfv` parameter: for each VDU its `desired_capacity` (the replicas),
 * `computeFlavourId` (virtual_compute's requested_additional_capability_name),
 * `vcImageId` (sw_image_data.name) and `locationConstraints` (when a zone is
 * known); for each connection point on an external virtual link its
 * `network` (the link's resourceId), `port` (an extLinkPort's resource, when
 * the cpConfig names one) and `fixed_ips` (fixed addresses, or subnets);
 * then `additionalParams.nfv` merged over it.
 */
export function buildNfvParameter(
  flavour: Flavour,
  replicas: Record<string, number>,
  opts: { extVirtualLinks?: unknown[]; overrides?: Json; zone?: string } = {},
): NfvParameter {
  const VDU: NfvParameter['VDU'] = {};
  for (const [vduId, vdu] of Object.entries(flavour.vdus)) {
    VDU[vduId] = {
      desired_capacity: replicas[vduId] ?? vdu.vduProfile.minNumberOfInstances,
      ...(vdu.virtualCompute?.flavorName ? { computeFlavourId: vdu.virtualCompute.flavorName } : {}),
      ...(vdu.swImage?.name ? { vcImageId: vdu.swImage.name } : {}),
      ...(opts.zone ? { locationConstraints: opts.zone } : {}),
    };
    // Tacker names the image of a VDU's virtual storage after the storage node.
    for (const storageId of vdu.requirements.virtualStorage) {
      const image = flavour.storages[storageId]?.swImage?.name;
      if (image) VDU[storageId] = { vcImageId: image };
    }
  }
  const CP: NfvParameter['CP'] = {};
  for (const link of opts.extVirtualLinks ?? []) {
    if (!isObject(link)) continue;
    const ports = Array.isArray(link['extLinkPorts']) ? (link['extLinkPorts'] as Json[]) : [];
    for (const cp of Array.isArray(link['extCps']) ? (link['extCps'] as Json[]) : []) {
      const cpdId = cp['cpdId'];
      if (typeof cpdId !== 'string') continue;
      const entry: NfvParameter['CP'][string] = { ...(typeof link['resourceId'] === 'string' ? { network: link['resourceId'] } : {}) };
      const fixed: Array<{ ip_address?: string; subnet?: string }> = [];
      for (const config of Object.values(isObject(cp['cpConfig']) ? cp['cpConfig'] : {})) {
        if (!isObject(config)) continue;
        const portId = config['linkPortId'];
        const port = ports.find((p) => p['id'] === portId);
        const handle = port && isObject(port['resourceHandle']) ? port['resourceHandle']['resourceId'] : undefined;
        if (typeof handle === 'string') entry.port = handle;
        for (const proto of Array.isArray(config['cpProtocolData']) ? (config['cpProtocolData'] as Json[]) : []) {
          const ipOverEthernet = isObject(proto['ipOverEthernet']) ? proto['ipOverEthernet'] : {};
          for (const address of Array.isArray(ipOverEthernet['ipAddresses']) ? (ipOverEthernet['ipAddresses'] as Json[]) : []) {
            const subnet = typeof address['subnetId'] === 'string' ? address['subnetId'] : undefined;
            const fixedAddresses = Array.isArray(address['fixedAddresses']) ? address['fixedAddresses'].filter((a): a is string => typeof a === 'string') : [];
            if (fixedAddresses.length) fixed.push(...fixedAddresses.map((ip) => ({ ip_address: ip, ...(subnet ? { subnet } : {}) })));
            else if (subnet) fixed.push({ subnet });
          }
        }
      }
      if (fixed.length) entry.fixed_ips = fixed;
      CP[cpdId] = entry;
    }
  }
  const nfv: NfvParameter = { VDU, CP };
  return (opts.overrides ? jsonMergePatch(nfv, opts.overrides) : nfv) as NfvParameter;
}

/** The nfv parameter with new desired capacities. */
function withCapacities(nfv: NfvParameter, replicas: Record<string, number>, vduIds: string[]): NfvParameter {
  const VDU = { ...nfv.VDU };
  for (const vduId of vduIds) VDU[vduId] = { ...VDU[vduId], desired_capacity: replicas[vduId] ?? 0 };
  return { ...nfv, VDU };
}

/** Connection points of each VDU (the port resources whose addresses a VNFC records). */
export function cpsByVdu(flavour: Flavour): Record<string, string[]> {
  const out: Record<string, string[]> = Object.fromEntries(Object.keys(flavour.vdus).map((v) => [v, [] as string[]]));
  const cps = Object.values(flavour.cps).sort((a, b) => (a.order ?? 0) - (b.order ?? 0) || a.nodeName.localeCompare(b.nodeName));
  for (const cp of cps) if (cp.vdu && out[cp.vdu]) out[cp.vdu]!.push(cp.nodeName);
  return out;
}

// ---------------------------------------------------------------------------
// Request checks specific to OpenStack

function checkExtVirtualLinks(source: string, raw: unknown, flavour: Flavour): unknown[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw new ValidationError(source, 'extVirtualLinks', 'must be a list');
  raw.forEach((link, i) => {
    const field = `extVirtualLinks[${i}]`;
    if (!isObject(link)) throw new ValidationError(source, field, 'must be an object with resourceId and extCps');
    if (typeof link['resourceId'] !== 'string' || link['resourceId'] === '') {
      throw new ValidationError(source, `${field}.resourceId`, 'is required: the id of the Neutron network', { hint: 'openstack network show NETWORK -f value -c id' });
    }
    const cps = link['extCps'];
    if (!Array.isArray(cps)) throw new ValidationError(source, `${field}.extCps`, 'must be a list of {cpdId, cpConfig}');
    cps.forEach((cp, j) => {
      const cpdId = isObject(cp) ? cp['cpdId'] : undefined;
      if (typeof cpdId !== 'string' || !flavour.cps[cpdId]) {
        throw new ValidationError(source, `${field}.extCps[${j}].cpdId`, `${echo(cpdId)} is not a connection point of flavour ${flavour.id}`, {
          hint: `choose from: ${Object.keys(flavour.cps).join(', ') || '(none)'}`,
        });
      }
    });
  });
  return raw;
}

function checkNfvOverrides(source: string, params: unknown): Json | undefined {
  if (!isObject(params) || params['nfv'] === undefined) return undefined;
  if (!isObject(params['nfv'])) throw new ValidationError(source, 'additionalParams.nfv', 'must be an object (merged over the nfv parameter vnfm builds)');
  return params['nfv'];
}

// ---------------------------------------------------------------------------
// VIMs

/** The Keystone settings of an inline OpenStack VIM (Tacker v2's interfaceInfo/accessInfo). */
function inlineOpenStackVim(source: string, field: string, key: string, entry: VimConnectionInfo): VimConnection {
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
      hint: 'credentials given inline are kept with the instance, sealed with vnfm\'s keyring, for the operations that follow',
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

async function openVim(deps: LcmDeps, source: string, field: string, vim: Vim): Promise<VimConnection> {
  if (vim.spec.type !== 'openstack') {
    throw new ValidationError(source, field, `VIM "${vim.name}" is a ${vim.spec.type} VIM, not an OpenStack one`, { hint: 'name an OpenStack VIM (vnfm vim-list)' });
  }
  return { id: vim.id, name: vim.name, inline: false, spec: vim.spec, secrets: await deps.openVimSecrets(vim) };
}

/** The request's OpenStack VIM, else the instance's, else the default VIM. */
async function resolveOpenStackVim(deps: LcmDeps, source: string, given: Record<string, VimConnectionInfo> | undefined, instance: VnfInstance): Promise<VimConnection> {
  const entries = Object.entries(given ?? {});
  if (entries.length > 0) {
    const [key, entry] = entries[0]!;
    const field = `vimConnectionInfo.${key}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new ValidationError(source, field, 'must be an object with vimId (and vimType)');
    const type = entry.vimType?.toLowerCase();
    if (type && !OPENSTACK_VIM_TYPES.has(type)) {
      throw new ValidationError(source, `${field}.vimType`, `${echo(entry.vimType)} is not an OpenStack VIM type`, { hint: 'use ETSINFV.OPENSTACK_KEYSTONE.V_3 (or openstack)' });
    }
    if (entry.interfaceInfo !== undefined) return checkedInline(deps, inlineOpenStackVim(source, field, key, await openSealedEntry(deps, source, field, entry)));
    if (!entry.vimId) throw new ValidationError(source, `${field}.vimId`, 'is required: the id or name of a registered VIM', { hint: 'list them with: vnfm vim-list' });
    const vim = deps.store.vims.find(entry.vimId);
    if (!vim) throw new ValidationError(source, `${field}.vimId`, `no VIM ${echo(entry.vimId)} is registered`, { hint: 'register it with vnfm vim-register' });
    return openVim(deps, source, `${field}.vimId`, vim);
  }
  if (instance.vimId) {
    const vim = deps.store.vims.find(instance.vimId);
    if (!vim) throw new NotFoundError(`the VIM ${instance.vimId} of vnf instance ${instance.id} is no longer registered`, { hint: 'op-fail what is pending and instantiate again on a registered VIM' });
    return openVim(deps, source, 'vimConnectionInfo', vim);
  }
  const [key, entry] = Object.entries(instance.vimConnectionInfo ?? {})[0] ?? [];
  if (key && entry) {
    // Kept sealed with the instance since it was instantiated with them.
    if (keepsCredentials(entry)) {
      const field = `vimConnectionInfo.${key}`;
      return checkedInline(deps, inlineOpenStackVim(source, field, key, await openSealedEntry(deps, source, field, entry)));
    }
    const endpoint = entry.interfaceInfo?.['endpoint'];
    throw new UsageError(`vnf instance ${instance.id} runs on an inline VIM (${String(endpoint)}) whose credentials it does not keep (it was instantiated by an older vnfm)`, {
      hint: 'give them again in the request\'s vimConnectionInfo (interfaceInfo and accessInfo), or register the cloud with vnfm vim-register',
    });
  }
  const vim = deps.store.vims.findDefault();
  if (!vim) {
    throw new ValidationError(source, 'vimConnectionInfo', 'names no VIM and there is no default VIM', {
      hint: `add "vimConnectionInfo": {"vim1": {"vimId": "NAME", "vimType": "${RECORDED_VIM_TYPE}"}}, or register a VIM with --is-default`,
    });
  }
  return openVim(deps, source, 'vimConnectionInfo', vim);
}

async function openSealedEntry(deps: LcmDeps, source: string, field: string, entry: VimConnectionInfo): Promise<VimConnectionInfo> {
  const sealed = [entry.accessInfo, entry.interfaceInfo].some((part) => Object.values(part ?? {}).some(isSealed));
  if (!sealed) return entry;
  if (!deps.open) throw new UsageError(`${source}: ${field} holds sealed credentials and the keyring is not available to open them`);
  return openSealed(entry, deps.open);
}

// ---------------------------------------------------------------------------
// Environments

/**
 * `--heat-environment` files when given, else (on instantiate) the VIM's
 * `extra.heat_environments`, else the instance's own. A retried instantiate
 * uses the ones its first attempt kept (the stack was made with them).
 */
async function environmentsFor(deps: LcmDeps, instance: VnfInstance, vim: VimConnection, opts: OperationOptions, first: boolean, retry = false): Promise<{ envs: HeatEnvironments; given: boolean }> {
  if (opts.heatEnvironments?.length) return { envs: await readHeatEnvironments(opts.heatEnvironments, deps.home), given: true };
  if (first && retry) {
    const kept = await loadInstanceEnvironments(deps.home, instance.id);
    if (kept.paths.length > 0) return { envs: kept, given: false };
  }
  if (first) {
    const defaults = vim.spec.extra?.['heat_environments'];
    const list = Array.isArray(defaults) ? defaults.filter((p): p is string => typeof p === 'string') : typeof defaults === 'string' ? [defaults] : [];
    return { envs: await readHeatEnvironments(list, deps.home), given: list.length > 0 };
  }
  return { envs: await loadInstanceEnvironments(deps.home, instance.id), given: false };
}

// ---------------------------------------------------------------------------
// Plans

const packageOf = (deps: LcmDeps, pkgId: string): Promise<OnboardedPackage> => openOnboarded(deps.home, deps.store.packages.get(pkgId));

async function refreshed(driver: OpenStackInfraDriver, ctx: Parameters<OpenStackInfraDriver['listVnfcs']>[0], instanceId: string, flavour: Flavour, vimId: string | undefined) {
  return vnfcRecords(await driver.listVnfcs(ctx, { instanceId, vdus: cpsByVdu(flavour) }), vimId);
}

function openStackInfo(instance: VnfInstance): OpenStackInfo {
  const info = instance.instantiatedVnfInfo as OpenStackInfo | undefined;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED`, { hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} --request-file FILE` });
  if (!info.metadata.heat) throw new UsageError(`vnf instance ${instance.id} has no Heat stack recorded`, { hint: 'it was not instantiated on an OpenStack VIM' });
  return info;
}

type OpenStackPlanner = (deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean, opts: OperationOptions) => Promise<OpenStackPlan>;

const planInstantiate: OpenStackPlanner = async (deps, instance, body, source, retry, opts) => {
  if (instance.instantiationState === 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is already INSTANTIATED`, { hint: `terminate it first (vnfm vnf-terminate ${instance.id}), or create another instance` });
  }
  if (!isObject(body)) throw new ValidationError(source, undefined, 'is not a JSON object (an InstantiateVnfRequest)', { hint: 'see csar-samples/heat-vnf/requests/instantiate.json' });
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavours = Object.keys(pkg.vnfd.flavours);
  const flavourId = body['flavourId'];
  if (typeof flavourId !== 'string' || !pkg.vnfd.flavours[flavourId]) {
    throw new ValidationError(source, 'flavourId', flavourId === undefined ? 'is required' : `${echo(flavourId)} is not a flavour of VNFD ${pkg.vnfd.id}`, { hint: `choose from: ${flavours.join(', ')}` });
  }
  const flavour = pkg.vnfd.flavours[flavourId]!;
  const levelId = body['instantiationLevelId'];
  if (levelId !== undefined && (typeof levelId !== 'string' || !flavour.instantiationLevels[levelId])) {
    throw new ValidationError(source, 'instantiationLevelId', `${echo(levelId)} is not an instantiation level of flavour ${flavourId}`, {
      hint: `choose from: ${Object.keys(flavour.instantiationLevels).join(', ') || '(none)'}`,
    });
  }
  if (body['additionalParams'] !== undefined && !isObject(body['additionalParams'])) throw new ValidationError(source, 'additionalParams', 'must be an object');
  const extVirtualLinks = checkExtVirtualLinks(source, body['extVirtualLinks'], flavour);
  const overrides = checkNfvOverrides(source, body['additionalParams']);
  const given = isObject(body['vimConnectionInfo']) ? (body['vimConnectionInfo'] as Record<string, VimConnectionInfo>) : undefined;
  const vim = await resolveOpenStackVim(deps, source, given, instance);
  const hot = await readBaseHot(pkg.dir, flavourId, source, pkg.pkg.id);
  const { envs } = await environmentsFor(deps, instance, vim, opts, true, retry);
  const templates = withEnvironments(hot, envs);
  const level = levelReplicas(flavour, levelId as string | undefined);
  const zone = typeof vim.spec.extra?.['availability_zone'] === 'string' ? (vim.spec.extra['availability_zone'] as string) : undefined;
  const nfv = buildNfvParameter(flavour, level.replicas, { ...(extVirtualLinks ? { extVirtualLinks } : {}), ...(overrides ? { overrides } : {}), ...(zone ? { zone } : {}) });
  const vimRecord = await recordedVim(deps, vim, given, RECORDED_VIM_TYPE);
  return {
    infra: 'openstack',
    operation: 'INSTANTIATE',
    params: { ...(body as unknown as InstantiateVnfRequest), vimConnectionInfo: vimRecord },
    vim,
    flavour,
    packageDir: pkg.dir,
    hooks: ['instantiate_start', 'instantiate_end'],
    async run(driver, ctx) {
      await saveInstanceEnvironments(deps.home, instance.id, envs);
      const resources = await driver.deploy(ctx, { instanceId: instance.id, templates, nfv });
      const heat: HeatStackRecord = {
        stackName: stackNameOf(instance.id),
        templatePath: hot.templatePath,
        nfv,
        ...(extVirtualLinks ? { extVirtualLinks } : {}),
        ...(overrides ? { nfvOverrides: overrides } : {}),
        environments: envs.paths,
      };
      const info: OpenStackInfo = {
        flavourId,
        ...(level.instantiationLevelId ? { instantiationLevelId: level.instantiationLevelId } : {}),
        vnfState: 'STARTED',
        scaleStatus: level.scaleStatus,
        maxScaleLevels: level.maxScaleLevels,
        ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)),
        resources,
        metadata: { namespace: '', 'lcm-kubernetes-def-files': [], vduReplicas: level.replicas, heat },
      };
      const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'INSTANTIATED', ...(vim.inline ? { vimConnectionInfo: vimRecord } : { vimId: vim.id! }), instantiatedVnfInfo: info };
    },
  };
};

async function current(deps: LcmDeps, instance: VnfInstance, source: string, given: Record<string, VimConnectionInfo> | undefined) {
  const info = openStackInfo(instance);
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = flavourOf(instance, pkg.vnfd);
  const vim = await resolveOpenStackVim(deps, source, given, instance);
  return { info, pkg, flavour, vim, params: given ? { vimConnectionInfo: await recordedVim(deps, vim, given, RECORDED_VIM_TYPE) } : {} };
}

const planScale: OpenStackPlanner = async (deps, instance, body, source, _retry, opts) => {
  const given = (body as ScaleVnfRequest | undefined)?.vimConnectionInfo;
  const cur = await current(deps, instance, source, given);
  const checked = checkScaleRequest(source, body, instance, cur.flavour);
  const aspect = cur.flavour.aspects[checked.request.aspectId]!;
  const vduIds = Object.keys(aspect.vduDeltas);
  const nfv = withCapacities(cur.info.metadata.heat.nfv, checked.replicas, vduIds);
  const remove = Object.fromEntries(vduIds.map((v) => [v, Math.max(0, (cur.info.metadata.vduReplicas[v] ?? 0) - (checked.replicas[v] ?? 0))]));
  const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
  return {
    infra: 'openstack',
    operation: 'SCALE',
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.dir,
    hooks: ['scale_start', 'scale_end'],
    removing: remove,
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      await driver.scale(ctx, { instanceId: instance.id, nfv, remove, ...(newEnvs ? { environments: envs } : {}) });
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: cur.info.scaleStatus.map((s) => (s.aspectId === aspect.id ? { ...s, scaleLevel: checked.toLevel } : s)),
          ...(await refreshed(driver, ctx, instance.id, cur.flavour, cur.vim.id)),
          metadata: { ...cur.info.metadata, vduReplicas: checked.replicas, heat: { ...cur.info.metadata.heat, nfv, ...(newEnvs ? { environments: envs.paths } : {}) } },
        } as OpenStackInfo,
      };
    },
  };
};

const planHeal: OpenStackPlanner = async (deps, instance, body, source, retry, opts) => {
  const given = (body as HealVnfRequest | undefined)?.vimConnectionInfo;
  const cur = await current(deps, instance, source, given);
  const checked = checkHealRequest(source, body, instance, retry);
  const params = isObject(checked.request.additionalParams) ? checked.request.additionalParams : {};
  const all = params['all'] === true && !(checked.request.vnfcInstanceId?.length);
  const wanted = new Set(checked.vnfcs.map((v) => v.id));
  const vnfcs = vnfcsOf(cur.info).filter((v) => wanted.has(v.id));
  const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
  const hot = await readBaseHot(cur.pkg.dir, cur.flavour.id, source, cur.pkg.pkg.id);
  const templates = withEnvironments(hot, envs);
  return {
    infra: 'openstack',
    operation: 'HEAL',
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.dir,
    hooks: ['heal_start', 'heal_end'],
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      await driver.heal(ctx, { instanceId: instance.id, vnfcs, all, templates, nfv: cur.info.metadata.heat.nfv, ...(checked.request.cause ? { cause: checked.request.cause } : {}) });
      const heat = { ...cur.info.metadata.heat, ...(newEnvs ? { environments: envs.paths } : {}) };
      return {
        ...instance,
        instantiatedVnfInfo: { ...cur.info, ...(await refreshed(driver, ctx, instance.id, cur.flavour, cur.vim.id)), metadata: { ...cur.info.metadata, heat } } as OpenStackInfo,
      };
    },
  };
};

const planTerminate: OpenStackPlanner = async (deps, instance, body, source) => {
  const request = checkTerminateRequest(source, body, instance);
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const grace = request.terminationType === 'FORCEFUL' ? 0 : (request.gracefulTerminationTimeout ?? 0);
  return {
    infra: 'openstack',
    operation: 'TERMINATE',
    params: { ...request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.dir,
    hooks: ['terminate_start', 'terminate_end'],
    async run(driver, ctx) {
      await driver.remove(ctx, { instanceId: instance.id, gracePeriodSeconds: grace });
      await dropInstanceEnvironments(deps.home, instance.id);
      const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
    },
  };
};

const planChangePackage: OpenStackPlanner = async (deps, instance, body, source, _retry, opts) => {
  const request = checkChangePackageShape(source, body, instance);
  const record = deps.store.packages.find(request.vnfdId);
  if (!record || record.vnfdId !== request.vnfdId) {
    throw new ValidationError(source, 'vnfdId', `no onboarded package has vnfdId ${request.vnfdId}`, { hint: 'onboard it first (vnfm vnfpkg-onboard), then check with vnfm vnfpkg-list' });
  }
  if (record.onboardingState !== 'ONBOARDED' || record.operationalState !== 'ENABLED') {
    throw new ValidationError(source, 'vnfdId', `package ${record.id} is ${record.onboardingState}/${record.operationalState}`, { hint: `enable it: vnfm vnfpkg-update ${record.id} --operational-state ENABLED` });
  }
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const newPkg = await openOnboarded(deps.home, record);
  const flavour = newPkg.vnfd.flavours[cur.info.flavourId];
  if (!flavour) {
    throw new ValidationError(source, 'vnfdId', `VNFD ${newPkg.vnfd.id} has no flavour ${echo(cur.info.flavourId)}, the flavour vnf instance ${instance.id} runs`, {
      hint: `its flavours: ${Object.keys(newPkg.vnfd.flavours).join(', ')}`,
    });
  }
  const heatRecord = cur.info.metadata.heat;
  const extVirtualLinks = checkExtVirtualLinks(source, (request as ChangeCurrentVnfPkgRequest).extVirtualLinks, flavour) ?? heatRecord.extVirtualLinks;
  const overrides = checkNfvOverrides(source, request.additionalParams) ?? heatRecord.nfvOverrides;
  const replicas = Object.fromEntries(Object.keys(flavour.vdus).map((v) => [v, cur.info.metadata.vduReplicas[v] ?? levelReplicas(flavour, cur.info.instantiationLevelId).replicas[v] ?? 1]));
  const nfv = buildNfvParameter(flavour, replicas, { ...(extVirtualLinks ? { extVirtualLinks } : {}), ...(overrides ? { overrides } : {}) });
  const { envs, given: newEnvs } = await environmentsFor(deps, instance, cur.vim, opts, false);
  const hot = await readBaseHot(newPkg.dir, flavour.id, source, record.id);
  const templates = withEnvironments(hot, envs);
  const levels = levelReplicas(flavour);
  return {
    infra: 'openstack',
    operation: 'CHANGE_VNFPKG',
    params: { ...request, ...cur.params } as ChangeCurrentVnfPkgRequest,
    vim: cur.vim,
    flavour,
    packageDir: newPkg.dir,
    hooks: ['change_current_package_start', 'change_current_package_end'],
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      const resources = await driver.changePackage(ctx, { instanceId: instance.id, templates, nfv });
      return {
        ...instance,
        vnfPkgId: record.id,
        vnfdId: record.vnfdId,
        vnfProvider: record.vnfProvider,
        vnfProductName: record.vnfProductName,
        vnfSoftwareVersion: record.vnfSoftwareVersion,
        vnfdVersion: record.vnfdVersion,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: levels.scaleStatus.map((s) => cur.info.scaleStatus.find((c) => c.aspectId === s.aspectId) ?? s),
          maxScaleLevels: levels.maxScaleLevels,
          ...(await refreshed(driver, ctx, instance.id, flavour, cur.vim.id)),
          resources,
          metadata: {
            ...cur.info.metadata,
            vduReplicas: replicas,
            heat: { ...heatRecord, templatePath: hot.templatePath, nfv, ...(extVirtualLinks ? { extVirtualLinks } : {}), ...(newEnvs ? { environments: envs.paths } : {}) },
          },
        } as OpenStackInfo,
      };
    },
  };
};

/** The OpenStack plans, by operation. */
export const OPENSTACK_PLANNERS: Record<LcmOperation, OpenStackPlanner> = {
  INSTANTIATE: planInstantiate,
  SCALE: planScale,
  HEAL: planHeal,
  TERMINATE: planTerminate,
  CHANGE_VNFPKG: planChangePackage,
};

/** The way back from a FAILED_TEMP INSTANTIATE (delete the stack), SCALE_OUT (the newest members go) or CHANGE_VNFPKG (the old templates again). */
export async function planOpenStackRollback(deps: LcmDeps, instance: VnfInstance, op: LcmOpOcc, source: string): Promise<OpenStackPlan> {
  const params = op.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo> };
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const vim = await resolveOpenStackVim(deps, source, instance.instantiationState === 'NOT_INSTANTIATED' ? params.vimConnectionInfo : undefined, instance);
  const base = { infra: 'openstack' as const, operation: op.operation, params: op.operationParams, vim, packageDir: pkg.dir };
  if (op.operation === 'INSTANTIATE') {
    return {
      ...base,
      async run(driver, ctx) {
        await driver.remove(ctx, { instanceId: instance.id });
        await dropInstanceEnvironments(deps.home, instance.id);
        const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
        return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
      },
    };
  }
  const info = openStackInfo(instance);
  const flavour = flavourOf(instance, pkg.vnfd);
  const prior = (deps.store.opOccs.priorState(op.id)?.instantiatedVnfInfo as OpenStackInfo | undefined) ?? info;
  if (op.operation === 'SCALE') {
    const aspect = flavour.aspects[(op.operationParams as ScaleVnfRequest).aspectId];
    const vduIds = Object.keys(aspect?.vduDeltas ?? {});
    return {
      ...base,
      flavour,
      async run(driver, ctx) {
        // How far the scale-out got is what Heat has now, not what the record says.
        const now = await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) });
        const remove = Object.fromEntries(vduIds.map((v) => [v, Math.max(0, now.filter((c) => c.vduId === v).length - (prior.metadata.vduReplicas[v] ?? 0))]));
        await driver.scale(ctx, { instanceId: instance.id, nfv: prior.metadata.heat.nfv, remove });
        return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)) } };
      },
    };
  }
  const envs = await loadInstanceEnvironments(deps.home, instance.id);
  const templates = withEnvironments(await readBaseHot(pkg.dir, flavour.id, source, pkg.pkg.id), envs);
  return {
    ...base,
    flavour,
    async run(driver, ctx) {
      const resources = await driver.changePackage(ctx, { instanceId: instance.id, templates, nfv: prior.metadata.heat.nfv });
      return { ...instance, instantiatedVnfInfo: { ...prior, ...(await refreshed(driver, ctx, instance.id, flavour, vim.id)), resources } };
    },
  };
}
