/**
 * The Helm planner's plans: a VNF is one Helm release of a chart from its package
 * (Tacker's Helm driver, v2 and v1 requests; helm-request.ts reads both).
 * Helm installs, upgrades, rolls back and uninstalls; vnfm reads the
 * release's manifest and watches every object with the Kubernetes driver,
 * as for a manifest CNF (Helm never runs with --wait). Each plan renders the
 * chart first (helm template, offline), so a template that fails, or a
 * replica value that does not set the VDU's replicas, is refused before the
 * release is touched.
 */
import { join } from 'node:path';
import { ConflictError, echo, UsageError, ValidationError } from '../../errors.js';
import type { HelmRelease } from '../../infra/helm/contract.js';
import { isMapping } from '../../yaml.js';
import type { LcmDeps, OperationOptions, Plan } from '../engine.js';
import { checkHelmRequest, strictParam } from '../helm-request.js';
import type { ChangeCurrentVnfPkgRequest, InstantiateVnfRequest, InstantiatedVnfInfo, LcmOpOcc, ScaleVnfRequest, VimConnectionInfo, VnfInstance } from '../../model/lcm.js';
import { openOnboarded, packageOf } from '../package-content.js';
import { carriedScaleLevels, levelReplicas } from '../replicas.js';
import { checkChangePackageShape, checkHealRequest, checkScaleRequest, checkTerminateRequest, flavourOf } from '../requests.js';
import { checkedInline, defaultVim, instanceVim, kubernetesVims, recordedVim, resolveVimConnection, vimLookup } from '../vim-connection.js';
import { packageIdentity } from '../../model/package.js';
import { vnfcsOf } from '../../model/vnfcs.js';
import type { HelmDrivers } from './helm.js';
import type { Planner } from './planner.js';
import {
  assertReleaseFree,
  checkNamespace,
  connect,
  deploymentOf,
  helmMetadata,
  manifestObjects,
  packageCharts,
  prepareNamespace,
  recoverPending,
  refOf,
  rehearse,
  releaseRef,
  replicaField,
  report,
  setValues,
  settle,
  uninstall,
  vduTargets,
  vnfcsNow,
} from './helm-release.js';

type HelmPlan = Plan<HelmDrivers>;

// ---------------------------------------------------------------------------
// Plans

/** Warnings of a plan, as the operation's notices. */
const noticeOf = (opts: OperationOptions | undefined) => (message: string) => opts?.onEvent?.({ type: 'notice', message });

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
  const chart = join(await pkg.workDir(helm.chartPath), helm.chartPath);
  const set = setValues(helm, level.replicas);
  await rehearse(deps, source, {
    chart,
    chartPath: helm.chartPath,
    release: helm.releaseName,
    namespace: helm.namespace,
    set,
    flavour,
    replicaValues: helm.replicaValues,
    replicas: level.replicas,
    field: replicaField(helm, flavour),
    reach: { strict: helm.strict === true, notice: noticeOf(opts) },
  });
  const vimType = Object.values(request.vimConnectionInfo ?? {})[0]?.vimType ?? 'kubernetes';
  const vimRecord = await recordedVim(deps, vim, request.vimConnectionInfo, vimType);
  const ref = releaseRef(helm.releaseName, helm.namespace);
  return {
    operation: 'INSTANTIATE',
    connect,
    params: { ...request, vimConnectionInfo: vimRecord },
    vim,
    flavour,
    packageDir: pkg.workDir,
    hooks: ['instantiate_start', 'instantiate_end'],
    // A retry finds its own release (Tacker upgrades it then); a new instantiate takes no one's.
    check: retry
      ? undefined
      : async (d, signal) => {
          await assertReleaseFree(d, helm.releaseName, helm.namespace, signal);
          await checkNamespace(d, vim, helm.namespace, helm.createNamespace === true, signal);
        },
    async run(d, ctx) {
      if (retry) await recoverPending(d, ctx, helm.releaseName, helm.namespace);
      const existing = retry ? await d.helm.status({ release: helm.releaseName, namespace: helm.namespace, signal: ctx.signal }) : undefined;
      if (!retry) await assertReleaseFree(d, helm.releaseName, helm.namespace, ctx.signal);
      await prepareNamespace(d, ctx, vim, helm.namespace, helm.createNamespace === true);
      ctx.journal.record({ action: existing ? 'update' : 'create', resource: ref, state: 'intended' });
      const opts = { release: helm.releaseName, chart, namespace: helm.namespace, set, signal: ctx.signal };
      const release: HelmRelease = existing ? await d.helm.upgrade({ ...opts, resetValues: true }) : await d.helm.install(opts);
      ctx.journal.record({ action: existing ? 'update' : 'create', resource: ref, state: 'done', detail: `revision ${release.revision}` });
      report(ctx, ref, `${existing ? 'upgraded' : 'installed'} chart ${release.chart} (revision ${release.revision})`);
      const { resources, targets } = await settle(d, ctx, {
        release: helm.releaseName,
        namespace: helm.namespace,
        flavour,
        ...(release.manifest !== undefined ? { manifest: release.manifest } : {}),
      });
      const info: InstantiatedVnfInfo = {
        flavourId: flavour.id,
        ...(level.instantiationLevelId ? { instantiationLevelId: level.instantiationLevelId } : {}),
        vnfState: 'STARTED',
        scaleStatus: level.scaleStatus,
        maxScaleLevels: level.maxScaleLevels,
        ...(await vnfcsNow(d, ctx, targets, vim.id)),
        resources,
        metadata: { namespace: helm.namespace, 'lcm-kubernetes-def-files': [], vduReplicas: level.replicas, ...helmMetadata(helm, release.revision) },
      };
      const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'INSTANTIATED', ...(vim.inline ? { vimConnectionInfo: vimRecord } : { vimId: vim.id! }), instantiatedVnfInfo: info };
    },
  };
}

async function current(deps: LcmDeps, instance: VnfInstance, source: string, given: Record<string, VimConnectionInfo> | undefined) {
  const info = instance.instantiatedVnfInfo;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED`, { hint: `instantiate it first: vnfm vnf-instantiate ${instance.id} --request-file FILE` });
  const pkg = await packageOf(deps, instance.vnfPkgId);
  const flavour = flavourOf(instance, pkg.vnfd);
  const lookup = vimLookup(deps);
  const vim = given
    ? await checkedInline(deps, await resolveVimConnection(source, given, lookup, () => instanceVim(deps, instance, source, kubernetesVims)))
    : await instanceVim(deps, instance, source, kubernetesVims);
  const helm = deploymentOf(instance);
  return { info, pkg, flavour, vim, helm, params: given ? { vimConnectionInfo: await recordedVim(deps, vim, given) } : {} };
}

async function planScale(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean): Promise<HelmPlan> {
  const cur = await current(deps, instance, source, (body as ScaleVnfRequest | undefined)?.vimConnectionInfo);
  const checked = checkScaleRequest(source, body, instance, cur.flavour);
  const aspect = cur.flavour.aspects[checked.request.aspectId]!;
  const moving = Object.keys(aspect.vduDeltas).filter((vduId) => checked.replicas[vduId] !== cur.info.metadata.vduReplicas[vduId]);
  for (const vduId of moving) {
    if (!cur.helm.replicaValues[vduId]) {
      const field = cur.helm.form === 'v2' ? `helm_value_names.${vduId}.replica` : `helm_replica_values.${aspect.id}`;
      throw new ValidationError(
        source,
        'aspectId',
        `aspect ${aspect.id} scales ${vduId}, and the instance was instantiated without ${field}: vnfm does not know which chart value holds its replicas`,
        {
          hint: `instantiate with additionalParams.${field} naming the chart value (Tacker refuses this scale too: HelmParameterNotFound)`,
        },
      );
    }
  }
  const chart = join(await cur.pkg.workDir(cur.helm.chartPath), cur.helm.chartPath);
  const moves = Object.fromEntries(moving.map((vduId) => [cur.helm.replicaValues[vduId]!, checked.replicas[vduId]!]));
  await rehearse(deps, source, {
    chart,
    chartPath: cur.helm.chartPath,
    release: cur.helm.releaseName,
    namespace: cur.helm.namespace,
    set: setValues(cur.helm, checked.replicas),
    flavour: cur.flavour,
    replicaValues: Object.fromEntries(moving.map((v) => [v, cur.helm.replicaValues[v]!])),
    replicas: checked.replicas,
    field: replicaField(cur.helm, cur.flavour),
  });
  const ref = releaseRef(cur.helm.releaseName, cur.helm.namespace);
  return {
    operation: 'SCALE',
    connect,
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['scale_start', 'scale_end'],
    async run(d, ctx) {
      if (retry) await recoverPending(d, ctx, cur.helm.releaseName, cur.helm.namespace);
      ctx.journal.record({ action: 'scale', resource: ref, state: 'intended', detail: JSON.stringify(moves) });
      const release = await d.helm.upgrade({ release: cur.helm.releaseName, chart, namespace: cur.helm.namespace, reuseValues: true, set: moves, signal: ctx.signal });
      ctx.journal.record({ action: 'scale', resource: ref, state: 'done', detail: `revision ${release.revision}` });
      report(
        ctx,
        ref,
        `upgraded with ${Object.entries(moves)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ')} (revision ${release.revision})`,
      );
      const { resources, targets } = await settle(d, ctx, {
        release: cur.helm.releaseName,
        namespace: cur.helm.namespace,
        flavour: cur.flavour,
        info: cur.info,
        vdus: moving,
        ...(release.manifest !== undefined ? { manifest: release.manifest } : {}),
      });
      return {
        ...instance,
        instantiatedVnfInfo: {
          ...cur.info,
          scaleStatus: cur.info.scaleStatus.map((s) => (s.aspectId === aspect.id ? { ...s, scaleLevel: checked.toLevel } : s)),
          ...(await vnfcsNow(d, ctx, targets, cur.vim.id)),
          resources,
          metadata: { ...cur.info.metadata, vduReplicas: checked.replicas, revision: release.revision },
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
  return {
    operation: 'HEAL',
    connect,
    params: { ...checked.request, ...cur.params },
    vim: cur.vim,
    flavour: cur.flavour,
    packageDir: cur.pkg.workDir,
    hooks: ['heal_start', 'heal_end'],
    async run(d, ctx) {
      await d.kube.heal(ctx, {
        instanceId: instance.id,
        vnfcs,
        barePods: {},
        release: cur.helm.releaseName,
        ...(cur.info.metadata.vnfm_readiness ? { readiness: cur.info.metadata.vnfm_readiness } : {}),
      });
      const manifest = await d.helm.getManifest({ release: cur.helm.releaseName, namespace: cur.helm.namespace, signal: ctx.signal });
      const targets = vduTargets(cur.flavour, manifestObjects(manifest, `the manifest of release ${cur.helm.releaseName}`), cur.helm.releaseName, cur.helm.namespace);
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
      await uninstall(d, ctx, cur.helm.releaseName, cur.helm.namespace, cur.info.resources);
      const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
      return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
    },
  };
}

async function planChangePackage(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean, opts?: OperationOptions): Promise<HelmPlan> {
  const request = checkChangePackageShape(source, body, instance);
  const strict = strictParam(source, request.additionalParams);
  const record = deps.store.packages.find(request.vnfdId);
  if (!record || record.vnfdId !== request.vnfdId)
    throw new ValidationError(source, 'vnfdId', `no onboarded package has vnfdId ${request.vnfdId}`, {
      hint: 'onboard it first (vnfm vnfpkg-onboard), then check with vnfm vnfpkg-list',
    });
  if (record.onboardingState !== 'ONBOARDED' || record.operationalState !== 'ENABLED') {
    throw new ValidationError(source, 'vnfdId', `package ${record.id} is ${record.onboardingState}/${record.operationalState}`, {
      hint: `enable it: vnfm vnfpkg-update ${record.id} --operational-state ENABLED`,
    });
  }
  const cur = await current(deps, instance, source, request.vimConnectionInfo);
  const newPkg = await openOnboarded(deps, record);
  const flavour = newPkg.vnfd.flavours[cur.info.flavourId];
  if (!flavour) {
    throw new ValidationError(source, 'vnfdId', `VNFD ${newPkg.vnfd.id} has no flavour ${echo(cur.info.flavourId)}, the flavour vnf instance ${instance.id} runs`, {
      hint: `its flavours: ${Object.keys(newPkg.vnfd.flavours).join(', ')}`,
    });
  }
  const given = request.additionalParams?.['helm_chart_path'];
  const charts = await packageCharts(newPkg.zip);
  const chartPath = typeof given === 'string' ? given.replace(/\/+$/, '') : cur.helm.chartPath;
  if (!charts.includes(chartPath)) {
    throw new ValidationError(
      source,
      'additionalParams.helm_chart_path',
      `${echo(chartPath)} is not a Helm chart of package ${record.id}${given === undefined ? " (the chart path the instance runs; give the new package's in helm_chart_path)" : ''}`,
      {
        hint: charts.length ? `its charts: ${charts.join(', ')}` : 'that package has no Helm chart',
      },
    );
  }
  const chart = join(await newPkg.workDir(chartPath), chartPath);
  const replicas = cur.info.metadata.vduReplicas;
  const targets = await rehearse(deps, source, {
    chart,
    chartPath,
    release: cur.helm.releaseName,
    namespace: cur.helm.namespace,
    set: setValues(cur.helm, replicas),
    flavour,
    replicaValues: cur.helm.replicaValues,
    replicas,
    field: replicaField(cur.helm, flavour),
    reach: { strict, notice: noticeOf(opts) },
  });
  const ref = releaseRef(cur.helm.releaseName, cur.helm.namespace);
  return {
    operation: 'CHANGE_VNFPKG',
    connect,
    params: { ...request, ...cur.params } as ChangeCurrentVnfPkgRequest,
    vim: cur.vim,
    flavour,
    packageDir: newPkg.workDir,
    hooks: ['change_current_package_start', 'change_current_package_end'],
    async run(d, ctx) {
      if (retry) await recoverPending(d, ctx, cur.helm.releaseName, cur.helm.namespace);
      ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: chartPath });
      // The new chart's defaults with the values the instance was given: --reuse-values would keep the old chart's defaults (Helm 3 reuses the whole old values).
      const release = await d.helm.upgrade({
        release: cur.helm.releaseName,
        chart,
        namespace: cur.helm.namespace,
        resetValues: true,
        set: setValues(cur.helm, replicas),
        signal: ctx.signal,
      });
      ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `revision ${release.revision}` });
      report(ctx, ref, `upgraded to chart ${release.chart} (revision ${release.revision})`);
      const settled = await settle(d, ctx, {
        release: cur.helm.releaseName,
        namespace: cur.helm.namespace,
        flavour,
        info: cur.info,
        vdus: targets.map((t) => t.vduId),
        ...(release.manifest !== undefined ? { manifest: release.manifest } : {}),
      });
      const kept = new Set(settled.resources.map((r) => `${r.kind}|${r.namespace ?? ''}|${r.name}`));
      await d.kube.awaitGone(ctx, { resources: cur.info.resources.filter((r) => !kept.has(`${r.kind}|${r.namespace ?? ''}|${r.name}`)) });
      return {
        ...instance,
        ...packageIdentity(record),
        instantiatedVnfInfo: {
          ...cur.info,
          ...carriedScaleLevels(flavour, cur.info.scaleStatus),
          ...(await vnfcsNow(d, ctx, settled.targets, cur.vim.id)),
          resources: settled.resources,
          metadata: { ...cur.info.metadata, revision: release.revision, helm_chart_path: chartPath },
        },
      };
    },
  };
}

/**
 * The way back: an instantiate is uninstalled; a scale out or a change of
 * package is `helm rollback` to the revision the instance records (it
 * changes only when an operation completes), then watched as an upgrade is.
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
        await uninstall(d, ctx, helm.releaseName, helm.namespace, []);
        const { instantiatedVnfInfo: _i, vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
        return { ...rest, instantiationState: 'NOT_INSTANTIATED' };
      },
    };
  }
  const info = instance.instantiatedVnfInfo;
  if (!info) throw new ConflictError(`vnf instance ${instance.id} is NOT_INSTANTIATED: there is nothing to roll back`, { hint: `vnfm op-fail ${op.id}` });
  const flavour = flavourOf(instance, pkg.vnfd);
  const helm = deploymentOf(instance);
  const ref = releaseRef(helm.releaseName, helm.namespace);
  return {
    ...base,
    flavour,
    async run(d, ctx) {
      const now = await d.helm.status({ release: helm.releaseName, namespace: helm.namespace, signal: ctx.signal });
      let revision = helm.revision;
      // What the failed operation's revision has, for the objects the rollback removes.
      const before = now
        ? manifestObjects(
            await d.helm.getManifest({ release: helm.releaseName, namespace: helm.namespace, signal: ctx.signal }),
            `the manifest of release ${helm.releaseName}`,
          ).map((o) => ({ ...refOf(o), namespace: o.metadata.namespace ?? helm.namespace }))
        : [];
      if (now && now.revision !== helm.revision) {
        ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: `rollback to revision ${helm.revision}` });
        await d.helm.rollback({ release: helm.releaseName, namespace: helm.namespace, revision: helm.revision, signal: ctx.signal });
        revision = (await d.helm.status({ release: helm.releaseName, namespace: helm.namespace, signal: ctx.signal }))?.revision ?? helm.revision;
        ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `revision ${revision}` });
        report(ctx, ref, `rolled back to revision ${helm.revision} (now revision ${revision})`);
      }
      const settled = await settle(d, ctx, { release: helm.releaseName, namespace: helm.namespace, flavour, info });
      const kept = new Set(settled.resources.map((r) => `${r.kind}|${r.namespace ?? ''}|${r.name}`));
      await d.kube.awaitGone(ctx, { resources: before.filter((r) => !kept.has(`${r.kind}|${r.namespace ?? ''}|${r.name}`)) });
      return {
        ...instance,
        instantiatedVnfInfo: { ...info, ...(await vnfcsNow(d, ctx, settled.targets, vim.id)), resources: settled.resources, metadata: { ...info.metadata, revision } },
      };
    },
  };
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
