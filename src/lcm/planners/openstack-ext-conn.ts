/**
 * Change external connectivity of an OpenStack VNF, as Tacker v2
 * (vnflcm_driver_v2.change_ext_conn_process): the request's extVirtualLinks
 * replace the recorded links of the same id (others are added), the
 * connection points they name get new entries in the stack's `nfv`
 * parameter (network, port, fixed IPs), and the stack is updated with it;
 * everything else in `nfv` stays. Rollback updates the stack with the `nfv`
 * recorded before (the instance's, which changes only on COMPLETED).
 */
import { UsageError } from '../../errors.js';
import type { LcmDeps, OpenStackPlan } from '../engine.js';
import type { OpenStackInfraDriver } from '../../infra/openstack/driver-contract.js';
import type { VimConnection, VnfInstance } from '../../model/lcm.js';
import { buildNfvParameter, cpsByVdu, type HeatStackRecord } from '../heat-nfv.js';
import { readStackTemplates } from '../heat-files.js';
import { standardExtConnCps } from '../heat-standard.js';
import { vnfcRecords } from '../../model/vnfcs.js';
import { CHANGE_EXT_CONN, type ExtConnChange, type ExtConnRollback, type ExtConnWork } from './planner.js';

type Connect = (deps: LcmDeps, vim: VimConnection) => Promise<OpenStackInfraDriver>;
type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function heatOf(instance: VnfInstance): HeatStackRecord {
  const heat = (instance.instantiatedVnfInfo?.metadata as { heat?: HeatStackRecord } | undefined)?.heat;
  if (!heat) throw new UsageError(`vnf instance ${instance.id} has no Heat stack recorded`, { hint: 'it was not instantiated on an OpenStack VIM' });
  return heat;
}

async function planChangeExtConn(connect: Connect, change: ExtConnChange): Promise<OpenStackPlan> {
  const { instance, pkg, flavour, extVirtualLinks, vim } = change;
  const heat = heatOf(instance);
  const ids = new Set(extVirtualLinks.map((l) => l['id']));
  const links = [...(heat.extVirtualLinks ?? []).filter((l) => !isObject(l) || !ids.has(l['id'])), ...extVirtualLinks];
  // A StandardUserData stack reads each connection point per index (VDU1_CP1-0): Tacker's change_ext_conn fills those.
  const CP = heat.vduIndexes
    ? standardExtConnCps(await readStackTemplates(pkg.zip, flavour, change.source, pkg.pkg.id, pkg.vnfd.id), flavour, heat.vduIndexes, extVirtualLinks)
    : buildNfvParameter(flavour, {}, { extVirtualLinks }).CP;
  const nfv = { ...heat.nfv, CP: { ...heat.nfv.CP, ...CP } };
  return {
    operation: CHANGE_EXT_CONN,
    connect,
    params: change.params,
    vim,
    flavour,
    packageDir: pkg.workDir,
    hooks: ['change_external_connectivity_start', 'change_external_connectivity_end'],
    async run(driver, ctx) {
      await driver.scale(ctx, { instanceId: instance.id, nfv, remove: {} });
      const info = instance.instantiatedVnfInfo!;
      const fresh = vnfcRecords(await driver.listVnfcs(ctx, { instanceId: instance.id, vdus: cpsByVdu(flavour) }), vim.id);
      const metadata = { ...info.metadata, heat: { ...heat, nfv, extVirtualLinks: links } } as typeof info.metadata;
      return change.recordVim({ ...instance, instantiatedVnfInfo: { ...info, ...fresh, metadata } });
    },
  };
}

async function planExtConnRollback(connect: Connect, back: ExtConnRollback): Promise<OpenStackPlan> {
  const { instance } = back;
  const heat = heatOf(instance);
  return {
    operation: CHANGE_EXT_CONN,
    connect,
    params: back.op.operationParams,
    vim: back.vim,
    flavour: back.flavour,
    packageDir: back.pkg.workDir,
    async run(driver, ctx) {
      await driver.scale(ctx, { instanceId: instance.id, nfv: heat.nfv, remove: {} });
      return instance;
    },
  };
}

/** change-ext-conn on the OpenStack planner's driver. */
export function openStackExtConn(connect: Connect): ExtConnWork<OpenStackInfraDriver> {
  return { plan: (_deps, change) => planChangeExtConn(connect, change), rollback: (_deps, back) => planExtConnRollback(connect, back) };
}
