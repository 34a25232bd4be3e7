/**
 * The Helm planner's plans: a VNF is a Helm release of a chart from its
 * package, or several (Tacker v1's using_helm_install_param of several
 * entries, each its own release, installed in the request's order and
 * uninstalled in reverse), as Tacker's Helm drivers take v2 and v1 requests
 * (helm-request.ts reads both). Helm installs, upgrades, rolls back and
 * uninstalls; vnfm reads each release's manifest and watches every object
 * with the Kubernetes driver, as for a manifest CNF (Helm never runs with
 * --wait). Each plan renders the charts first (helm template, offline), so a
 * template that fails, or a replica value that does not set the VDU's
 * replicas, is refused before a release is touched. Change of package:
 * helm-change-package.ts.
 */
import { join } from 'node:path';
import { ConflictError, echo, UsageError, ValidationError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../../infra/driver.js';
import type { HelmRelease, HelmSetValues } from '../../infra/helm/contract.js';
import { isMapping } from '../../yaml.js';
import type { Flavour } from '../../vnfd/index.js';
import type { LcmDeps, OperationOptions, Plan } from '../engine.js';
import { checkHelmRequest, type HelmChartRelease, type HelmDeployment } from '../helm-request.js';
import type { InstantiateVnfRequest, InstantiatedVnfInfo, LcmOpOcc, ScaleVnfRequest, VimConnectionInfo, VnfInstance } from '../../model/lcm.js';
import { packageOf } from '../package-content.js';
import { levelReplicas } from '../replicas.js';
import { checkHealRequest, checkScaleRequest, checkTerminateRequest, flavourOf } from '../requests.js';
import { checkedInline, defaultVim, instanceVim, kubernetesVims, recordedVim, resolveVimConnection, vimLookup } from '../vim-connection.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import type { HelmDrivers } from './helm.js';
import { planChangePackage } from './helm-change-package.js';
import { deploymentOf, helmMetadata, vduReleases, withRevisions, type RecordedRelease } from './helm-deployment.js';
import {
  assignVdus,
  connect,
  current,
  holds,
  manifestObjects,
  noticeOf,
  packageCharts,
  pickOf,
  refOf,
  rehearse,
  releaseRef,
  releaseReplicaValues,
  replicaField,
  report,
  setValues,
  settle,
  standing,
  vnfcsNow,
} from './helm-release.js';
import { assertReleaseFree, checkNamespace, journaledReleases, prepareNamespace, recoverPending, uninstallAll } from './helm-release-state.js';
import type { Planner } from './planner.js';

type HelmPlan = Plan<HelmDrivers>;

// ---------------------------------------------------------------------------
// Plans

async function planInstantiate(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean, opts?: OperationOptions): Promise<HelmPlan> {
  if (instance.instantiationState === 'INSTANTIATED') {
    throw new ConflictError(`vnf instance ${instance.id} is already INSTANTIATED`, { hint: `terminate it first (vnfm vnf-terminate ${instance.id}), or create another instance` });
  }
  if (!isMapping(body))
    throw new ValidationError(source, undefined, 'is not a JSON object (an InstantiateVnfRequest)', { hint: 'see csar-samples/helm-cnf/requests/instantiate.json' });
  const request = body as unknown as InstantiateVnfRequest;
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavours = Object.keys(pkg.vnfd.flavours);
  const flavour = typeof request.flavourId === 'string' ? pkg.vnfd.flavours[request.flavourId] : undefined;
  if (!flavour)
    throw new ValidationError(source, 'flavourId', `${echo(request.flavourId)} is not a flavour of VNFD ${pkg.vnfd.id}`, { hint: `choose from: ${flavours.join(', ')}` });
  const levelId = request.instantiationLevelId;
  if (levelId !== undefined && !flavour.instantiationLevels[levelId]) {
    throw new ValidationError(source, 'instantiationLevelId', `${echo(levelId)} is not an instantiation level of flavour ${flavour.id}`, {
      hint: `choose from: ${Object.keys(flavour.instantiationLevels).join(', ')}`,
    });
  }
  const lookup = vimLookup(deps);
  const vim = await checkedInline(deps, await resolveVimConnection(source, request.vimConnectionInfo, lookup, () => defaultVim(source, lookup)));
  const params = isMapping(request.additionalParams) ? request.additionalParams : undefined;
  const helm = checkHelmRequest(source, params, { instanceId: instance.id, flavour, pkg: { helmCharts: await packageCharts(pkg.zip) }, vim });
  const level = levelReplicas(flavour, levelId);
  const releases = await plannedReleases(deps, source, helm, flavour, level.replicas, pkg.workDir, noticeOf(opts));
  const vimType = Object.values(request.vimConnectionInfo ?? {})[0]?.vimType ?? 'kubernetes';
  const vimRecord = await recordedVim(deps, vim, request.vimConnectionInfo, vimType);
  return {
    operation: 'INSTANTIATE',
    connect,
    params: { ...request, vimConnectionInfo: vimRecord },
    vim,
    flavour,
    packageDir: pkg.workDir,
    hooks: ['instantiate_start', 'instantiate_end'],
    // A retry finds its own releases (Tacker upgrades them then); a new instantiate takes no one's.
    check: retry
      ? undefined
      : async (d, signal) => {
          for (const r of releases) await assertReleaseFree(d, r.releaseName, helm.namespace, signal);
          await checkNamespace(d, vim, helm.namespace, helm.createNamespace === true, signal);
        },
    async run(d, ctx) {
      await prepareNamespace(d, ctx, vim, helm.namespace, helm.createNamespace === true);
      // In the request's order, as Tacker installs them; each release is waited for once all are installed.
      const installed: HelmRelease[] = [];
      for (const r of releases) installed.push(await installRelease(d, ctx, { ...r, namespace: helm.namespace, set: setValues(r, helm.replicaValues, level.replicas), retry }));
      const settled = await Promise.all(
        releases.map((r, i) =>
          settle(d, ctx, {
            release: r.releaseName,
            namespace: helm.namespace,
            flavour,
            pick: pickOf(helm, r),
            ...(installed[i]!.manifest !== undefined ? { manifest: installed[i]!.manifest } : {}),
          }),
        ),
      );
      const info: InstantiatedVnfInfo = {
        flavourId: flavour.id,
        ...(level.instantiationLevelId ? { instantiationLevelId: level.instantiationLevelId } : {}),
        vnfState: 'STARTED',
        scaleStatus: level.scaleStatus,
        maxScaleLevels: level.maxScaleLevels,
        ...(await vnfcsNow(d, ctx, settled, vim.id)),
        resources: settled.flatMap((s) => s.resources),
        metadata: {
          namespace: helm.namespace,
          'lcm-kubernetes-def-files': [],
          vduReplicas: level.replicas,
          ...helmMetadata(
            helm,
            releases.map((r, i) => ({
              releaseName: r.releaseName,
              chartPath: r.chartPath,
              parameters: r.parameters,
              revision: installed[i]!.revision,
              ...(r.vdus ? { vdus: r.vdus } : {}),
            })),
          ),
        },
      };
      const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'INSTANTIATED', ...(vim.inline ? { vimConnectionInfo: vimRecord } : { vimId: vim.id! }), instantiatedVnfInfo: info };
    },
  };
}

/**
 * The request's releases with the VDUs each holds and its chart on disk,
 * each chart rendered with the values it will be installed with (in
 * parallel; the warnings and the first refusal in the request's order).
 */
async function plannedReleases(
  deps: LcmDeps,
  source: string,
  helm: HelmDeployment,
  flavour: Flavour,
  replicas: Record<string, number>,
  workDir: (prefix: string) => Promise<string>,
  notice: (message: string) => void,
): Promise<Array<HelmChartRelease & { chart: string; vdus?: string[] }>> {
  const charts = await Promise.all(helm.releases.map(async (r) => join(await workDir(r.chartPath), r.chartPath)));
  const field = replicaField(helm, flavour);
  const owned = await assignVdus(deps, source, helm, flavour, field, charts);
  const releases = helm.releases.map((r, i) => ({ ...r, chart: charts[i]!, ...(owned[i] ? { vdus: owned[i] } : {}) }));
  const notices = releases.map(() => [] as string[]);
  const rehearsed = await Promise.allSettled(
    releases.map((r, i) =>
      rehearse(deps, source, {
        chart: r.chart,
        chartPath: r.chartPath,
        release: r.releaseName,
        namespace: helm.namespace,
        set: setValues(r, helm.replicaValues, replicas),
        flavour,
        replicaValues: releaseReplicaValues(r, helm.replicaValues),
        replicas,
        field,
        pick: pickOf(helm, r),
        reach: { strict: helm.strict === true, notice: (m) => notices[i]!.push(m) },
      }),
    ),
  );
  for (const [i, r] of rehearsed.entries()) {
    notices[i]!.forEach(notice);
    if (r.status === 'rejected') throw r.reason;
  }
  return releases;
}

/**
 * Installs one release of an instantiate, journaled. A retry takes up a
 * release its earlier runs journaled (recovered when left pending, then
 * upgraded with the request's values, as Tacker does) and no other: a
 * release of that name it never installed is someone else's.
 */
async function installRelease(
  d: HelmDrivers,
  ctx: DriverContext,
  r: { releaseName: string; chart: string; namespace: string; set: HelmSetValues; retry: boolean },
): Promise<HelmRelease> {
  const ref = releaseRef(r.releaseName, r.namespace);
  const mine = r.retry && journaledReleases(ctx.journal.steps()).has(r.releaseName);
  if (mine) await recoverPending(d, ctx, r.releaseName, r.namespace);
  else await assertReleaseFree(d, r.releaseName, r.namespace, ctx.signal);
  const existing = mine ? await d.helm.status({ release: r.releaseName, namespace: r.namespace, signal: ctx.signal }) : undefined;
  ctx.journal.record({ action: existing ? 'update' : 'create', resource: ref, state: 'intended' });
  const opts = { release: r.releaseName, chart: r.chart, namespace: r.namespace, set: r.set, signal: ctx.signal };
  const release = existing ? await d.helm.upgrade({ ...opts, resetValues: true }) : await d.helm.install(opts);
  ctx.journal.record({ action: existing ? 'update' : 'create', resource: ref, state: 'done', detail: `revision ${release.revision}` });
  report(ctx, ref, `${existing ? 'upgraded' : 'installed'} chart ${release.chart} (revision ${release.revision})`);
  return release;
}

async function planScale(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean): Promise<HelmPlan> {
  const cur = await current(deps, instance, source, (body as ScaleVnfRequest | undefined)?.vimConnectionInfo);
  const checked = checkScaleRequest(source, body, instance, cur.flavour);
  const aspect = cur.flavour.aspects[checked.request.aspectId]!;
  const moving = Object.keys(aspect.vduDeltas).filter((vduId) => checked.replicas[vduId] !== cur.info.metadata.vduReplicas[vduId]);
  const field = replicaField(cur.helm, cur.flavour);
  for (const vduId of moving) {
    if (!cur.helm.replicaValues[vduId]) {
      const named = cur.helm.form === 'v2' ? `helm_value_names.${vduId}.replica` : `helm_replica_values.${aspect.id}`;
      throw new ValidationError(
        source,
        'aspectId',
        `aspect ${aspect.id} scales ${vduId}, and the instance was instantiated without ${named}: vnfm does not know which chart value holds its replicas`,
        {
          hint: `instantiate with additionalParams.${named} naming the chart value (Tacker refuses this scale too: HelmParameterNotFound)`,
        },
      );
    }
    if (!cur.helm.releases.some((r) => holds(r, vduId))) {
      throw new ValidationError(source, 'aspectId', `aspect ${aspect.id} scales ${vduId}, whose workload none of the instance's releases holds`, {
        hint: `see its releases and VDUs: vnfm vnf-show ${instance.id} (instantiatedVnfInfo.metadata.helm_releases)`,
      });
    }
  }
  // Each release holding a VDU that moves is upgraded with its new replica counts (in install order).
  const groups = await Promise.all(
    cur.helm.releases
      .filter((r) => moving.some((v) => holds(r, v)))
      .map(async (r) => {
        const vdus = moving.filter((v) => holds(r, v));
        return {
          r,
          vdus,
          chart: join(await cur.pkg.workDir(r.chartPath), r.chartPath),
          moves: Object.fromEntries(vdus.map((v) => [cur.helm.replicaValues[v]!, checked.replicas[v]!])),
        };
      }),
  );
  for (const g of groups) {
    await rehearse(deps, source, {
      chart: g.chart,
      chartPath: g.r.chartPath,
      release: g.r.releaseName,
      namespace: cur.helm.namespace,
      set: setValues(g.r, cur.helm.replicaValues, checked.replicas),
      flavour: cur.flavour,
      replicaValues: Object.fromEntries(g.vdus.map((v) => [v, cur.helm.replicaValues[v]!])),
      replicas: checked.replicas,
      field,
      pick: pickOf(cur.helm, g.r),
    });
  }
  return {
    operation: 'SCALE',
    connect,
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['scale_start', 'scale_end'],
    async run(d, ctx) {
      const upgraded = new Map<string, HelmRelease>();
      for (const { r, chart, moves } of groups) {
        const ref = releaseRef(r.releaseName, cur.helm.namespace);
        if (retry) await recoverPending(d, ctx, r.releaseName, cur.helm.namespace);
        ctx.journal.record({ action: 'scale', resource: ref, state: 'intended', detail: JSON.stringify(moves) });
        const release = await d.helm.upgrade({ release: r.releaseName, chart, namespace: cur.helm.namespace, reuseValues: true, set: moves, signal: ctx.signal });
        ctx.journal.record({ action: 'scale', resource: ref, state: 'done', detail: `revision ${release.revision}` });
        const set = Object.entries(moves).map(([k, v]) => `${k}=${v}`);
        report(ctx, ref, `upgraded with ${set.join(', ')} (revision ${release.revision})`);
        upgraded.set(r.releaseName, release);
      }
      const states = await Promise.all(
        cur.helm.releases.map((r) => {
          const release = upgraded.get(r.releaseName);
          if (!release) return standing(d, ctx, cur.flavour, cur.helm, r, cur.info.resources);
          const manifest = release.manifest !== undefined ? { manifest: release.manifest } : {};
          const vdus = groups.find((g) => g.r === r)!.vdus;
          return settle(d, ctx, { release: r.releaseName, namespace: cur.helm.namespace, flavour: cur.flavour, pick: pickOf(cur.helm, r), info: cur.info, vdus, ...manifest });
        }),
      );
      const revisions = Object.fromEntries([...upgraded].map(([name, release]) => [name, release.revision]));
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: cur.info.scaleStatus.map((s) => (s.aspectId === aspect.id ? { ...s, scaleLevel: checked.toLevel } : s)),
          ...(await vnfcsNow(d, ctx, states, cur.vim.id)),
          resources: states.flatMap((s) => s.resources),
          metadata: withRevisions({ ...cur.info.metadata, vduReplicas: checked.replicas }, revisions),
        },
      };
    },
  };
}

async function planHeal(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean): Promise<HelmPlan> {
  const cur = await current(deps, instance, source, (body as { vimConnectionInfo?: Record<string, VimConnectionInfo> } | undefined)?.vimConnectionInfo);
  const checked = checkHealRequest(source, body, instance, retry);
  const wanted = new Set(checked.vnfcs.map((v) => v.id));
  const vnfcs = vnfcsOf(cur.info).filter((v) => wanted.has(v.id));
  const releaseOf = vduReleases(cur.info, Object.keys(cur.flavour.vdus));
  return {
    operation: 'HEAL',
    connect,
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['heal_start', 'heal_end'],
    async run(d, ctx) {
      // The pods of each release's workloads, release by release: the driver checks each workload is that release's.
      for (const r of cur.helm.releases) {
        const mine = vnfcs.filter((v) => (releaseOf[v.vduId] ?? cur.helm.releases[0]!.releaseName) === r.releaseName);
        if (mine.length === 0) continue;
        await d.kube.heal(ctx, {
          instanceId: instance.id,
          vnfcs: mine,
          barePods: {},
          release: r.releaseName,
          ...(cur.info.metadata.vnfm_readiness ? { readiness: cur.info.metadata.vnfm_readiness } : {}),
        });
      }
      const targets = await Promise.all(cur.helm.releases.map((r) => standing(d, ctx, cur.flavour, cur.helm, r, [])));
      return { ...instance, instantiatedVnfInfo: { ...cur.info, ...(await vnfcsNow(d, ctx, targets, cur.vim.id)) } };
    },
  };
}

async function planTerminate(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string): Promise<HelmPlan> {
  const request = checkTerminateRequest(source, body, instance);
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  return {
    operation: 'TERMINATE',
    connect,
    params: { ...request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['terminate_start', 'terminate_end'],
    async run(d, ctx) {
      await uninstallAll(
        d,
        ctx,
        cur.helm.releases.map((r) => r.releaseName),
        cur.helm.namespace,
        cur.info.resources,
      );
      const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
    },
  };
}

/**
 * The way back: an instantiate's releases are uninstalled (those its journal
 * shows it installed, in reverse order); a scale out or a change of package
 * is `helm rollback` of each release to the revision the instance records
 * (it changes only when an operation completes), then watched as an upgrade
 * is.
 */
async function planRollback(deps: LcmDeps, instance: VnfInstance, op: LcmOpOcc, source: string): Promise<HelmPlan> {
  const params = op.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo>; additionalParams?: Record<string, unknown> };
  const lookup = vimLookup(deps);
  const vim = await resolveVimConnection(source, params.vimConnectionInfo, lookup, () => instanceVim(deps, instance, source, kubernetesVims));
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const base = { operation: op.operation, params: op.operationParams, vim, packageDir: pkg.workDir, connect };
  if (op.operation === 'INSTANTIATE') {
    const flavour = pkg.vnfd.flavours[(op.operationParams as InstantiateVnfRequest).flavourId];
    if (!flavour)
      throw new UsageError(`occurrence ${op.id} names flavour ${echo((op.operationParams as InstantiateVnfRequest).flavourId)}, which VNFD ${pkg.vnfd.id} does not have`);
    const helm = checkHelmRequest(source, params.additionalParams, { instanceId: instance.id, flavour, pkg: { helmCharts: await packageCharts(pkg.zip) }, vim });
    return {
      ...base,
      async run(d, ctx) {
        // Only what this occurrence installed: a release of the same name it never touched is someone else's.
        const ours = journaledReleases(ctx.journal.steps());
        const names = helm.releases.map((r) => r.releaseName).filter((name) => ours.has(name));
        await uninstallAll(d, ctx, names, helm.namespace, []);
        const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
        return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
      },
    };
  }
  const info = instance.instantiatedVnfInfo;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: there is nothing to roll back`, { hint: `vnfm op-fail ${op.id}` });
  const flavour = flavourOf(instance, pkg.vnfd);
  const helm = deploymentOf(instance);
  return {
    ...base,
    flavour,
    async run(d, ctx) {
      const back = await Promise.all(helm.releases.map((r) => rollBackRelease(d, ctx, helm.namespace, r)));
      // A release the failed operation never changed stands as it is; the others are watched as after an upgrade.
      const settled = await Promise.all(
        helm.releases.map((r, i) =>
          back[i]!.changed || helm.releases.length === 1
            ? settle(d, ctx, { release: r.releaseName, namespace: helm.namespace, flavour, pick: pickOf(helm, r), info })
            : standing(d, ctx, flavour, helm, r, info.resources),
        ),
      );
      const kept = new Set(settled.flatMap((s) => s.resources).map((r) => `${r.kind}|${r.namespace ?? ''}|${r.name}`));
      await d.kube.awaitGone(ctx, { resources: back.flatMap((b) => b.before).filter((r) => !kept.has(`${r.kind}|${r.namespace ?? ''}|${r.name}`)) });
      const revisions = Object.fromEntries(helm.releases.map((r, i) => [r.releaseName, back[i]!.revision]));
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...info,
          ...(await vnfcsNow(d, ctx, settled, vim.id)),
          resources: settled.flatMap((s) => s.resources),
          metadata: withRevisions(info.metadata, revisions),
        },
      };
    },
  };
}

/**
 * `helm rollback` of one release to the revision the instance records, when
 * it is at another; returns the objects the failed operation's revision has
 * (for those the rollback removes), the revision now and whether it was
 * rolled back.
 */
async function rollBackRelease(d: HelmDrivers, ctx: DriverContext, namespace: string, r: RecordedRelease): Promise<{ before: ResourceRef[]; revision: number; changed: boolean }> {
  const release = r.releaseName;
  const ref = releaseRef(release, namespace);
  const now = await d.helm.status({ release, namespace, signal: ctx.signal });
  // Not rolled back: nothing of it goes away.
  if (!now || now.revision === r.revision) return { before: [], revision: r.revision, changed: false };
  const manifest = await d.helm.getManifest({ release, namespace, signal: ctx.signal });
  const before = manifestObjects(manifest, `the manifest of release ${release}`).map((o) => ({ ...refOf(o), namespace: o.metadata.namespace ?? namespace }));
  ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: `rollback to revision ${r.revision}` });
  await d.helm.rollback({ release, namespace, revision: r.revision, signal: ctx.signal });
  const revision = (await d.helm.status({ release, namespace, signal: ctx.signal }))?.revision ?? r.revision;
  ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `revision ${revision}` });
  report(ctx, ref, `rolled back to revision ${r.revision} (now revision ${revision})`);
  return { before, revision, changed: true };
}

/** The plans of the Helm planner (helm.ts loads them when an operation needs them). */
export const helmPlans: Pick<Planner<HelmDrivers>, 'connect' | 'instantiate' | 'scale' | 'heal' | 'terminate' | 'changePackage' | 'rollback'> = {
  connect,
  instantiate: planInstantiate,
  scale: planScale,
  heal: planHeal,
  terminate: planTerminate,
  changePackage: planChangePackage,
  rollback: planRollback,
};
