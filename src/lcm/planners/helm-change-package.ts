/**
 * A Helm instance moved to another package (Tacker v2's change_vnfpkg with
 * Helm): `helm upgrade --reset-values` of its release to the new package's
 * chart, with the values the instance was given and its replica counts.
 * An instance of several releases is refused.
 */
import { join } from 'node:path';
import { echo, ValidationError } from '../../errors.js';
import type { LcmDeps, OperationOptions, Plan } from '../engine.js';
import { strictParam } from '../helm-request.js';
import type { ChangeCurrentVnfPkgRequest, VnfInstance } from '../../model/lcm.js';
import { packageIdentity } from '../../model/package.js';
import { openOnboarded } from '../package-content.js';
import { carriedScaleLevels } from '../replicas.js';
import { checkChangePackageShape } from '../requests.js';
import type { HelmDrivers } from './helm.js';
import { connect, current, noticeOf, packageCharts, pickOf, rehearse, releaseRef, replicaField, report, setValues, settle, vnfcsNow } from './helm-release.js';
import { recoverPending } from './helm-release-state.js';

export async function planChangePackage(deps: LcmDeps, instance: VnfInstance, body: unknown, source: string, retry: boolean, opts?: OperationOptions): Promise<Plan<HelmDrivers>> {
  const request = checkChangePackageShape(source, body, instance);
  const strict = strictParam(source, request.additionalParams);
  const record = await deps.store.packages.find(request.vnfdId);
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
  if (cur.helm.releases.length > 1) {
    throw new ValidationError(
      source,
      undefined,
      `vnf instance ${instance.id} runs ${cur.helm.releases.length} Helm releases (${cur.helm.releases.map((r) => r.releaseName).join(', ')}); a change of package upgrades one chart, and vnfm does not change the package of an instance of several`,
      { hint: `terminate it and instantiate it from the new package (vnfm vnf-terminate ${instance.id}), or make one VNF instance per chart` },
    );
  }
  const only = cur.helm.releases[0]!;
  const newPkg = await openOnboarded(deps, record);
  const flavour = newPkg.vnfd.flavours[cur.info.flavourId];
  if (!flavour) {
    throw new ValidationError(source, 'vnfdId', `VNFD ${newPkg.vnfd.id} has no flavour ${echo(cur.info.flavourId)}, the flavour vnf instance ${instance.id} runs`, {
      hint: `its flavours: ${Object.keys(newPkg.vnfd.flavours).join(', ')}`,
    });
  }
  const given = request.additionalParams?.['helm_chart_path'];
  const charts = await packageCharts(newPkg.zip);
  const chartPath = typeof given === 'string' ? given.replace(/\/+$/, '') : only.chartPath;
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
    release: only.releaseName,
    namespace: cur.helm.namespace,
    set: setValues(only, cur.helm.replicaValues, replicas),
    flavour,
    replicaValues: cur.helm.replicaValues,
    replicas,
    field: replicaField(cur.helm, flavour),
    pick: pickOf(cur.helm, only),
    reach: { strict, notice: noticeOf(opts) },
  });
  const ref = releaseRef(only.releaseName, cur.helm.namespace);
  return {
    operation: 'CHANGE_VNFPKG',
    connect,
    params: { ...request, ...cur.params } as ChangeCurrentVnfPkgRequest,
    vim: cur.vim,
    flavour,
    packageDir: newPkg.workDir,
    hooks: ['change_current_package_start', 'change_current_package_end'],
    async run(d, ctx) {
      if (retry) await recoverPending(d, ctx, only.releaseName, cur.helm.namespace);
      ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: chartPath });
      // The new chart's defaults with the values the instance was given: --reuse-values would keep the old chart's defaults (Helm 3 reuses the whole old values).
      const release = await d.helm.upgrade({
        release: only.releaseName,
        chart,
        namespace: cur.helm.namespace,
        resetValues: true,
        set: setValues(only, cur.helm.replicaValues, replicas),
        signal: ctx.signal,
      });
      ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `revision ${release.revision}` });
      report(ctx, ref, `upgraded to chart ${release.chart} (revision ${release.revision})`);
      const settled = await settle(d, ctx, {
        release: only.releaseName,
        namespace: cur.helm.namespace,
        flavour,
        pick: pickOf(cur.helm, only),
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
          ...(await vnfcsNow(d, ctx, [settled], cur.vim.id)),
          resources: settled.resources,
          metadata: { ...cur.info.metadata, revision: release.revision, helm_chart_path: chartPath },
        },
      };
    },
  };
}
