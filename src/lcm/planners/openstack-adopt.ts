/**
 * Adopting a VNF Tacker instantiated on an OpenStack VIM: the Heat stack
 * Tacker named for it (v2: `vnf-<instance id>`, heat_utils.get_stack_name;
 * v1: the stack id it recorded as instantiatedVnfInfo.instanceId) must be
 * *_COMPLETE, carry the `nfv` parameter Tacker v2 (and vnfm) pass the VDUs'
 * flavors, images and capacities in, and have the capacities Tacker's scale
 * levels give. Nothing at the VIM changes: the instance is recorded with the
 * stack, its servers as VNFCs and that `nfv`, as an instantiate would have
 * recorded them, so the next scale is a stack update like any other.
 */
import { UsageError } from '../../errors.js';
import type { NfvParameter, OpenStackInfraDriver } from '../../infra/openstack/driver-contract.js';
import { stackNameOf } from '../../infra/openstack/driver-contract.js';
import type { DriverContext, ResourceRef } from '../../infra/driver.js';
import type { InstantiateVnfRequest, VimConnection, VnfInstance } from '../../model/lcm.js';
import { vnfcRecords } from '../../model/vnfcs.js';
import type { LcmDeps } from '../engine.js';
import { readStackTemplates } from '../heat-files.js';
import { cpsByVdu, type HeatStackRecord, type OpenStackInfo } from '../heat-nfv.js';
import { packageOf } from '../package-content.js';
import { levelReplicas } from '../replicas.js';
import type { TackerInstance } from '../tacker-instance.js';
import { instanceVimFields, RECORDED_OPENSTACK_VIM_TYPE, recordedVim } from '../vim-connection.js';
import { ADOPT, adoptedFlavour, adoptedScale, adoptionRefused } from './adoption.js';
import type { AdoptionPlan } from './planner.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `nfv` parameter as Heat shows it (a JSON parameter comes back as its text). */
function nfvOf(value: unknown): NfvParameter | undefined {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      return undefined;
    }
  }
  return isObject(v) && isObject(v['VDU']) ? (v as unknown as NfvParameter) : undefined;
}

export async function planOpenStackAdoption(deps: LcmDeps, instance: VnfInstance, tacker: TackerInstance, vim: VimConnection): Promise<AdoptionPlan<OpenStackInfraDriver>> {
  const source = tacker.source;
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = adoptedFlavour(tacker, pkg.vnfd.flavours, pkg.vnfd.id);
  const hot = await readStackTemplates(pkg.zip, flavour, source, pkg.pkg.id, pkg.vnfd.id);
  const name = stackNameOf(instance.id);
  // v2 names the stack after the instance (and may record its id too); v1 records only the id.
  const lookup = tacker.api === 'v2' ? name : (tacker.stackId ?? name);
  const stackRef: ResourceRef = { apiVersion: 'orchestration/v1', kind: 'Stack', name };
  const inspect = async (driver: OpenStackInfraDriver, signal: AbortSignal) => {
    if (!driver.findStack) throw new UsageError('the OpenStack driver in use cannot adopt', { hint: 'use the driver vnfm ships' });
    const stack = await driver.findStack(lookup, signal);
    if (!stack) throw adoptionRefused(tacker, `the VIM ${vim.name}`, [`Heat stack ${lookup}: missing`]);
    const what = `Heat stack ${stack.name}`;
    const differences: string[] = [];
    if (stack.name !== name) differences.push(`${what} (${stack.id}): vnfm keeps a VNF's stack under the name Tacker v2 gives it, ${name}`);
    if (tacker.stackId && stack.id !== tacker.stackId) differences.push(`${what}: its id is ${stack.id}, Tacker recorded ${tacker.stackId}`);
    if (!stack.status.endsWith('_COMPLETE') || stack.status.startsWith('DELETE')) {
      differences.push(`${what}: ${stack.status}${stack.statusReason ? ` (${stack.statusReason})` : ''}, not CREATE_COMPLETE or UPDATE_COMPLETE`);
    }
    const nfv = nfvOf(stack.parameters['nfv']);
    if (!nfv) differences.push(`${what}: has no nfv parameter (the VDUs' flavors, images and capacities, as Tacker v2 passes them)`);
    const indexed = Object.keys(nfv?.VDU ?? {}).filter((k) => !flavour.vdus[k] && /-\d+$/.test(k) && flavour.vdus[k.replace(/-\d+$/, '')]);
    if (indexed.length > 0) differences.push(`${what}: a StandardUserData stack (nfv.VDU has ${indexed.join(', ')}), which vnf-adopt does not take over`);
    const live: Record<string, number> = {};
    for (const [vduId, v] of Object.entries(nfv?.VDU ?? {})) {
      const n = Number((v as { desired_capacity?: unknown } | undefined)?.desired_capacity);
      if (flavour.vdus[vduId] && (v as { desired_capacity?: unknown }).desired_capacity !== undefined && Number.isInteger(n)) live[vduId] = n;
    }
    const scale = adoptedScale(tacker, flavour, live, (vduId, n) => `${what}: nfv.VDU.${vduId}.desired_capacity is ${n}`);
    differences.push(...scale.differences);
    if (differences.length > 0) throw adoptionRefused(tacker, `the VIM ${vim.name}'s Heat stack`, differences);
    return { stack, nfv: nfv!, scale };
  };
  const vimRecord = await recordedVim(deps, vim, undefined, RECORDED_OPENSTACK_VIM_TYPE);
  const params: InstantiateVnfRequest = {
    flavourId: flavour.id,
    ...(tacker.instantiationLevelId ? { instantiationLevelId: tacker.instantiationLevelId } : {}),
    vimConnectionInfo: vimRecord,
    additionalParams: { vnfm_adopted_from: { vnfInstanceId: tacker.id, api: tacker.api, file: source, stack: lookup } },
  };
  const quiet = (signal: AbortSignal): DriverContext => ({ journal: { record: () => undefined, steps: () => [] }, report: () => undefined, signal });
  const connect = async (d: LcmDeps, v: VimConnection): Promise<OpenStackInfraDriver> => {
    if (!d.openstackDriver) throw new UsageError(`VIM "${v.name}" is an OpenStack VIM, and this vnfm was set up without the OpenStack infra-driver`);
    return d.openstackDriver(v);
  };
  return {
    operation: ADOPT,
    connect,
    params,
    vim,
    flavour,
    packageDir: pkg.workDir,
    check: async (driver, signal) => {
      await inspect(driver, signal);
    },
    async summary(driver, signal) {
      const f = await inspect(driver, signal);
      const vnfcs = await driver.listVnfcs(quiet(signal), { instanceId: instance.id, vdus: cpsByVdu(flavour) });
      return { stack: { name: f.stack.name, id: f.stack.id, status: f.stack.status }, resources: [stackRef], vnfcs: vnfcs.map((v) => v.id), scaleStatus: f.scale.scaleStatus };
    },
    async run(driver, ctx) {
      // Checked again as it runs: the stack may have changed since the check.
      const f = await inspect(driver, ctx.signal);
      ctx.report({ resource: stackRef, message: `adopted (${f.stack.status})`, done: true });
      const heat: HeatStackRecord = { stackName: name, templatePath: hot.templatePath, nfv: f.nfv, environments: [] };
      const info: OpenStackInfo = {
        flavourId: flavour.id,
        ...(tacker.instantiationLevelId ? { instantiationLevelId: tacker.instantiationLevelId } : {}),
        vnfState: tacker.vnfState ?? 'STARTED',
        scaleStatus: f.scale.scaleStatus,
        maxScaleLevels: levelReplicas(flavour).maxScaleLevels,
        ...vnfcRecords(await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) }), vim.id),
        resources: [stackRef],
        metadata: {
          namespace: '',
          'lcm-kubernetes-def-files': [],
          vduReplicas: f.scale.replicas,
          heat,
          vnfm_adopted: { tacker: tacker.api, at: deps.now().toISOString() },
        },
      };
      const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'INSTANTIATED', ...instanceVimFields(vim, vimRecord), instantiatedVnfInfo: info };
    },
  };
}
