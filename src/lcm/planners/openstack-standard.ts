/**
 * The OpenStack planner's side of Tacker v2's StandardUserData
 * (heat-standard.ts): the first indexes of a stack, and a scale, which
 * sends the whole stack's templates (resources <VDU>-<index> added or
 * removed) and nfv, as Tacker patches the same into the stack.
 */
import { ValidationError } from '../../errors.js';
import type { NfvParameter, OpenStackInfraDriver } from '../../infra/openstack/driver-contract.js';
import type { VimConnection, VnfInstance } from '../../model/lcm.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import type { Flavour } from '../../vnfd/index.js';
import type { LcmDeps, OpenStackPlan } from '../engine.js';
import { generatedPath, readStackTemplates, saveInstanceEnvironments, withEnvironments, type HeatEnvironments } from '../heat-files.js';
import type { HeatStackRecord, OpenStackInfo } from '../heat-nfv.js';
import { firstIndexes, scaleIn, scaleOut, standardTemplates, type VduIndexes } from '../heat-standard.js';
import type { OnboardedPackage } from '../package-content.js';
import type { checkScaleRequest } from '../requests.js';

/** The instance as the planner reads it (openstack.ts `current`). */
export interface StandardCurrent {
  info: OpenStackInfo;
  pkg: Pick<OnboardedPackage, 'zip' | 'pkg' | 'vnfd' | 'workDir'>;
  flavour: Flavour;
  vim: VimConnection;
  params: Record<string, unknown>;
}

export interface StandardScaleInput {
  deps: LcmDeps;
  instance: VnfInstance;
  source: string;
  cur: StandardCurrent;
  checked: ReturnType<typeof checkScaleRequest>;
  indexes: VduIndexes;
  envs: HeatEnvironments;
  /** Environments given with the operation (kept for the instance when it completes). */
  newEnvs: boolean;
}

/** What the planner lends: its driver connection, the VNFC refresh, and the check of the servers after a scale. */
export interface PlannerTools {
  connect(deps: LcmDeps, vim: VimConnection): Promise<OpenStackInfraDriver>;
  refreshed(
    driver: OpenStackInfraDriver,
    ctx: Parameters<OpenStackInfraDriver['listVnfcs']>[0],
    instanceId: string,
    flavour: Flavour,
    vimId: string | undefined,
  ): Promise<Pick<OpenStackInfo, 'vnfcResourceInfo' | 'vnfcInfo'>>;
  checkScaledVnfcs(instanceId: string, vduIds: string[], before: readonly { vduId: string }[], after: readonly { vduId: string }[], replicas: Record<string, number>): void;
}

/** The first indexes of a StandardUserData stack; it is made from the package's Base HOT only (Tacker: BaseHOTNotDefined). */
export function standardIndexes(source: string, templatePath: string, flavour: Flavour, replicas: Record<string, number>): VduIndexes {
  if (templatePath === generatedPath(flavour)) {
    throw new ValidationError(
      source,
      'additionalParams.lcm-operation-user-data',
      `names Tacker's StandardUserData, which makes the stack from the package's Base HOT, and the package has none for flavour ${flavour.id} (BaseHOT/${flavour.id}/)`,
      { hint: 'remove lcm-operation-user-data and lcm-operation-user-data-class: vnfm then makes the HOT from the VNFD' },
    );
  }
  return firstIndexes(flavour, replicas);
}

/** The images a StandardUserData stack was given: node → the vcImageId of any of its indexes (Glance ids vnfm uploaded, or names). */
function standardImages(nfv: NfvParameter, flavour: Flavour): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(nfv.VDU)) {
    const node = name.slice(0, Math.max(0, name.lastIndexOf('-')));
    if ((flavour.vdus[node] || flavour.storages[node]) && typeof value?.vcImageId === 'string') out[node] ??= value.vcImageId;
  }
  return out;
}

/** A scale of a StandardUserData stack: resources <VDU>-<index> added or removed, the whole stack's templates and nfv sent (Tacker patches the same into the stack). */
export async function planStandardScale(input: StandardScaleInput, tools: PlannerTools): Promise<OpenStackPlan> {
  const { deps, instance, source, cur, checked, indexes, envs, newEnvs } = input;
  const { connect, refreshed, checkScaledVnfcs } = tools;
  const heatRecord = cur.info.metadata.heat;
  const aspect = cur.flavour.aspects[checked.request.aspectId]!;
  const vduIds = Object.keys(aspect.vduDeltas);
  const before = cur.info.metadata.vduReplicas;
  const delta = (v: string) => (checked.replicas[v] ?? 0) - (before[v] ?? 0);
  const hot = await readStackTemplates(cur.pkg.zip, cur.flavour, source, cur.pkg.pkg.id, cur.pkg.vnfd.id);
  const zone = typeof cur.vim.spec.extra?.['availability_zone'] === 'string' ? (cur.vim.spec.extra['availability_zone'] as string) : undefined;
  const next =
    checked.request.type === 'SCALE_OUT'
      ? scaleOut(hot, cur.flavour, indexes, Object.fromEntries(vduIds.map((v) => [v, Math.max(0, delta(v))])), heatRecord.nfv, {
          ...(heatRecord.extVirtualLinks ? { extVirtualLinks: heatRecord.extVirtualLinks } : {}),
          ...(zone ? { zone } : {}),
          images: standardImages(heatRecord.nfv, cur.flavour),
        })
      : scaleIn(cur.flavour, indexes, Object.fromEntries(vduIds.map((v) => [v, Math.max(0, -delta(v))])), vnfcsOf(cur.info), heatRecord.nfv);
  const templates = withEnvironments(standardTemplates(hot, cur.flavour, next.indexes, heatRecord.extManagedVirtualLinks), envs);
  return {
    connect,
    operation: 'SCALE',
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['scale_start', 'scale_end'],
    removing: Object.fromEntries(vduIds.map((v) => [v, Math.max(0, -delta(v))])),
    async run(driver, ctx) {
      if (newEnvs) await saveInstanceEnvironments(deps.home, instance.id, envs);
      await driver.changePackage(ctx, { instanceId: instance.id, templates, nfv: next.nfv });
      const vnfcs = await refreshed(driver, ctx, instance.id, cur.flavour, cur.vim.id);
      checkScaledVnfcs(instance.id, vduIds, vnfcsOf(cur.info), vnfcs.vnfcInfo, checked.replicas);
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: cur.info.scaleStatus.map((s) => (s.aspectId === aspect.id ? { ...s, scaleLevel: checked.toLevel } : s)),
          ...vnfcs,
          metadata: {
            ...cur.info.metadata,
            vduReplicas: checked.replicas,
            heat: { ...heatRecord, nfv: next.nfv, vduIndexes: next.indexes, ...(newEnvs ? { environments: envs.paths } : {}) },
          },
        } as OpenStackInfo,
      };
    },
  };
}

/** A stack record without StandardUserData's form. */
export function withoutStandard(heat: HeatStackRecord): HeatStackRecord {
  const { vduIndexes: _i, extManagedVirtualLinks: _m, ...rest } = heat;
  return rest;
}
