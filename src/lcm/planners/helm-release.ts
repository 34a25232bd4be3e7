/**
 * What the Helm planner's plans share: the release as a journal entry, the
 * package's charts, which release holds which VDU and where its workload
 * is (assignVdus, vduTargets), the chart rendered before a release is
 * touched (rehearse), a release's manifest watched until ready (settle) or
 * read as it stands, the VNFCs of the releases' VDUs, and what an operation
 * on an instantiated instance starts from (current). A release's state and
 * uninstall are helm-release-state.ts.
 */
import { ConflictError, echo, UsageError, ValidationError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../../infra/driver.js';
import type { HelmSetValues } from '../../infra/helm/contract.js';
import { HelmError } from '../../infra/helm/errors.js';
import type { KubeObject, VduTarget } from '../../infra/kubernetes/driver-contract.js';
import { checkChart, findCharts } from '../../csar/helm-chart.js';
import { openPackage } from '../../csar/open-package.js';
import { reachBeyond, reachHint, type Flavour } from '../../vnfd/index.js';
import { isMapping } from '../../yaml.js';
import { parseYaml, splitYamlDocuments } from '../../vnfd/yaml-source.js';
import type { LcmDeps, OperationOptions } from '../engine.js';
import { WORKLOAD_KINDS, type HelmChartRelease, type HelmDeployment } from '../helm-request.js';
import type { VduMappingEntry, VimConnection, VimConnectionInfo, VnfInstance, InstantiatedVnfInfo } from '../../model/lcm.js';
import { vnfcRecords } from '../../model/vnfcs.js';
import { packageOf } from '../package-content.js';
import { flavourOf } from '../requests.js';
import { checkedInline, instanceVim, kubernetesVims, recordedVim, resolveVimConnection, vimLookup } from '../vim-connection.js';
import { deploymentOf, withReleaseNames, type RecordedDeployment, type RecordedRelease } from './helm-deployment.js';
import type { HelmDrivers, HelmServices } from './helm.js';

export function services(deps: LcmDeps): HelmServices {
  const helm = deps.helm;
  if (!helm) throw new UsageError('this vnfm was set up without Helm', { hint: 'install Helm 3 on PATH or set VNFM_HELM to its path' });
  return helm;
}

export async function connect(deps: LcmDeps, vim: VimConnection): Promise<HelmDrivers> {
  return { helm: await services(deps).client(vim), kube: await deps.kubernetesDriver(vim) };
}

/** The release as a journal entry. */
export const releaseRef = (release: string, namespace: string): ResourceRef => ({ apiVersion: 'helm.sh/v3', kind: 'Release', name: release, namespace });

// ---------------------------------------------------------------------------
// Charts, manifests, VDUs

/** The charts of an onboarded package (paths a request may name). */
export async function packageCharts(dir: string): Promise<string[]> {
  const files = await openPackage(dir);
  try {
    const out: string[] = [];
    for (const chart of findCharts(files)) if ((await checkChart(files, chart)) !== undefined) out.push(chart.path);
    return out;
  } finally {
    await files.close();
  }
}

/** The objects of a multi-document YAML (a release's manifest, a rendering). */
export function manifestObjects(text: string, origin: string): KubeObject[] {
  const out: KubeObject[] = [];
  for (const doc of splitYamlDocuments(text)) {
    const parsed = parseYaml(doc.text, origin, doc.startLine - 1);
    if (!parsed.ok) throw new UsageError(`${origin}: ${parsed.finding.message} (line ${parsed.finding.line ?? '?'})`);
    const o = parsed.doc;
    if (!isMapping(o) || typeof o.kind !== 'string' || typeof o.apiVersion !== 'string' || !isMapping(o.metadata)) continue;
    out.push(o as unknown as KubeObject);
  }
  return out;
}

export const refOf = (o: KubeObject): ResourceRef => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  ...(typeof o.metadata.namespace === 'string' ? { namespace: o.metadata.namespace } : {}),
});

/**
 * Which VDUs a release holds, and how their workloads are found in it: by
 * vdu_mapping (kind and name), else by name.
 */
export interface VduPick {
  /** The VDUs the release holds; absent: every VDU of the flavour (the only release). */
  vdus?: readonly string[];
  /** Tacker v1's vdu_mapping: the VDU's workload by kind and name. */
  mapping?: Record<string, VduMappingEntry>;
}

/** Whether a release holds a VDU's workload. */
export const holds = (release: { vdus?: readonly string[] }, vduId: string): boolean => !release.vdus || release.vdus.includes(vduId);

/** How a release picks its VDUs' workloads, from what the instance records of it. */
export const pickOf = (helm: Pick<RecordedDeployment, 'vduMapping'>, release: { vdus?: string[] }): VduPick => ({
  ...(release.vdus ? { vdus: release.vdus } : {}),
  ...(helm.vduMapping ? { mapping: helm.vduMapping } : {}),
});

/**
 * A VDU's workload in the release: the workload vdu_mapping names (kind and
 * name), else the workload named as the VDU (properties.name), or that name
 * then `-<release>` (the sample's charts), or — Tacker v2's rule for Helm —
 * that name then `-` and a suffix without `-`.
 */
export function vduTargets(flavour: Flavour, objects: KubeObject[], release: string, namespace: string, pick: VduPick = {}): VduTarget[] {
  const workloads = objects.filter((o) => WORKLOAD_KINDS.has(o.kind));
  return Object.entries(flavour.vdus).flatMap(([vduId, vdu]) => {
    if (pick.vdus && !pick.vdus.includes(vduId)) return [];
    const mapped = pick.mapping?.[vduId];
    const o = mapped
      ? workloads.find((w) => w.kind === mapped.kind && w.metadata.name === mapped.name)
      : (workloads.find((w) => w.metadata.name === vdu.name) ??
        workloads.find((w) => w.metadata.name === `${vdu.name}-${release}`) ??
        workloads.find((w) => w.metadata.name.lastIndexOf('-') > 0 && w.metadata.name.slice(0, w.metadata.name.lastIndexOf('-')) === vdu.name));
    return o ? [{ vduId, resource: { ...refOf(o), namespace: o.metadata.namespace ?? namespace } }] : [];
  });
}

/** Values for a release's `--set`: its parameters, then the replica value of each of its VDUs. */
export function setValues(
  release: Pick<HelmChartRelease, 'parameters'> & { vdus?: readonly string[] },
  replicaValues: Record<string, string>,
  replicas: Record<string, number>,
): HelmSetValues {
  const set: HelmSetValues = { ...release.parameters };
  for (const [vduId, path] of Object.entries(releaseReplicaValues(release, replicaValues))) if (replicas[vduId] !== undefined) set[path] = replicas[vduId];
  return set;
}

/** The replica values of the VDUs a release holds. */
export const releaseReplicaValues = (release: { vdus?: readonly string[] }, replicaValues: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(replicaValues).filter(([vduId]) => holds(release, vduId)));

/**
 * Renders the chart with the values a command is about to give Helm, and
 * checks each VDU whose replicas are set: its workload is there and has
 * exactly those replicas (a replica value the chart does not read leaves
 * them unchanged). A template that does not render is Helm's message, exit 2.
 */
export async function rehearse(
  deps: LcmDeps,
  source: string,
  input: {
    chart: string;
    chartPath: string;
    release: string;
    namespace: string;
    set: HelmSetValues;
    flavour: Flavour;
    replicaValues: Record<string, string>;
    replicas: Record<string, number>;
    field: (vduId: string) => string;
    /** The VDUs the release holds and how their workloads are found (default: every VDU, by name). */
    pick?: VduPick;
    /** Installs or replaces the chart: its objects beyond the instance are warned of through `notice`, or refused when `strict`. */
    reach?: { strict: boolean; notice: (message: string) => void };
  },
  signal?: AbortSignal,
): Promise<VduTarget[]> {
  const tool = await services(deps).chartTool();
  // With the chart's crds/, which helm install creates too: what the chart brings is judged whole.
  const includeCrds = input.reach !== undefined;
  let rendered: string;
  // A second rendering with a distinct number in each replica value tells a value the chart reads from one it ignores (whose default may equal the wanted count).
  const probes = Object.fromEntries(
    Object.keys(input.replicaValues)
      .filter((v) => input.replicas[v] !== undefined)
      .map((vduId, i) => [vduId, 7919 + i]),
  );
  let probed: string;
  try {
    const render = (set: HelmSetValues) =>
      tool.template(input.chart, { release: input.release, namespace: input.namespace, set, ...(includeCrds ? { includeCrds } : {}), ...(signal ? { signal } : {}) });
    const probeSet = { ...input.set, ...Object.fromEntries(Object.entries(probes).map(([vduId, n]) => [input.replicaValues[vduId]!, n])) };
    // The two renderings are independent: side by side, they cost one helm start.
    const renderings = Object.keys(probes).length > 0 ? Promise.all([render(input.set), render(probeSet)]) : render(input.set).then((r) => [r, r] as const);
    // The Kubernetes client (a large module, which the operation needs next) loads while helm renders in processes of its own.
    void import('../../infra/kubernetes/index.js').catch(() => undefined);
    [rendered, probed] = await renderings;
  } catch (err) {
    throw renderFailure(source, input.chartPath, err);
  }
  const objects = manifestObjects(rendered, `${input.chartPath} (rendered)`);
  if (input.reach) checkReach(source, input.chartPath, objects, input.namespace, input.reach);
  const targets = vduTargets(input.flavour, objects, input.release, input.namespace, input.pick);
  checkMapped(source, input, targets);
  const probedObjects = manifestObjects(probed, `${input.chartPath} (rendered)`);
  for (const [vduId, path] of Object.entries(input.replicaValues)) {
    const want = probes[vduId];
    if (want === undefined) continue;
    const target = targets.find((t) => t.vduId === vduId);
    const vduName = input.flavour.vdus[vduId]?.name ?? vduId;
    if (!target) {
      throw new ValidationError(source, input.field(vduId), `the chart ${input.chartPath} renders no workload for ${vduId} (named ${vduName} or ${vduName}-${input.release})`, {
        hint: `name the VDU's workload in the chart after the VDU's properties.name (${vduName}), or drop ${vduId} from the request`,
      });
    }
    const o = probedObjects.find((x) => x.kind === target.resource.kind && x.metadata.name === target.resource.name);
    const got = (o?.spec as { replicas?: unknown } | undefined)?.replicas;
    if (got !== want) {
      throw new ValidationError(
        source,
        input.field(vduId),
        `${echo(path)} is not a value the chart ${input.chartPath} reads for the replicas of ${target.resource.kind} ${target.resource.name}: set to ${want}, the chart renders ${got === undefined ? 'no replicas' : `${String(got)} replicas`}`,
        {
          hint: "name the value the workload's spec.replicas comes from (helm show values / the template); nothing was changed",
        },
      );
    }
  }
  return targets;
}

/** A chart that does not render: Helm's message, exit 2. */
function renderFailure(source: string, chartPath: string, err: unknown): unknown {
  if (!(err instanceof HelmError)) return err;
  return new ValidationError(source, 'additionalParams', `the chart ${chartPath} does not render: ${err.stderr || err.message}`, {
    hint: 'fix the chart (helm template shows the same), or the values the request gives it; nothing was installed or changed',
  });
}

/**
 * Which VDUs each release of a request holds (its `vdus`; absent for the
 * only release, which holds them all). With several releases: the release
 * vdu_mapping names (as Tacker's scale finds it), else the one release whose
 * chart, rendered with its parameters, has a workload named for the VDU (as
 * Tacker matched VDU names before vdu_mapping). A VDU the charts of two
 * releases render a workload for is refused: vdu_mapping must say which. A
 * VDU no chart renders has no release and no VNFCs, refused only when the
 * request gives it a replica value.
 */
export async function assignVdus(
  deps: LcmDeps,
  source: string,
  helm: Pick<HelmDeployment, 'releases' | 'namespace' | 'vduMapping' | 'replicaValues'>,
  flavour: Flavour,
  field: (vduId: string) => string,
  charts: string[],
): Promise<Array<string[] | undefined>> {
  if (helm.releases.length === 1) return [undefined];
  const owned = helm.releases.map(() => [] as string[]);
  const open: string[] = [];
  for (const vduId of Object.keys(flavour.vdus)) {
    const named = helm.vduMapping?.[vduId]?.helmreleasename;
    if (named) owned[helm.releases.findIndex((r) => r.releaseName === named)]!.push(vduId);
    else open.push(vduId);
  }
  if (open.length === 0) return owned;
  const tool = await services(deps).chartTool();
  const objects = await Promise.all(
    helm.releases.map(async (r, i) => {
      try {
        const text = await tool.template(charts[i]!, { release: r.releaseName, namespace: helm.namespace, set: r.parameters });
        return manifestObjects(text, `${r.chartPath} (rendered)`);
      } catch (err) {
        throw renderFailure(source, r.chartPath, err);
      }
    }),
  );
  for (const vduId of open) {
    const holders = helm.releases.flatMap((r, i) => (vduTargets(flavour, objects[i]!, r.releaseName, helm.namespace, { vdus: [vduId] }).length > 0 ? [i] : []));
    const vduName = flavour.vdus[vduId]!.name;
    if (holders.length > 1) {
      throw new ValidationError(
        source,
        'additionalParams.vdu_mapping',
        `releases ${holders.map((i) => helm.releases[i]!.releaseName).join(' and ')} each render a workload for ${vduId} (named ${vduName}): which one is the VDU's is not clear`,
        { hint: `give additionalParams.vdu_mapping.${vduId}: {"name": WORKLOAD, "kind": KIND, "helmreleasename": RELEASE}` },
      );
    }
    if (holders.length === 1) owned[holders[0]!]!.push(vduId);
    else if (helm.replicaValues[vduId] !== undefined) {
      throw new ValidationError(source, field(vduId), `no chart of using_helm_install_param renders a workload for ${vduId} (named ${vduName}, or that name and a suffix)`, {
        hint: `name the workload after the VDU's properties.name, or give additionalParams.vdu_mapping.${vduId}: {"name": WORKLOAD, "kind": KIND, "helmreleasename": RELEASE}`,
      });
    }
  }
  return owned;
}

/** Each VDU vdu_mapping gives the release: the release renders the workload it names. */
function checkMapped(source: string, input: { chartPath: string; release: string; pick?: VduPick }, targets: VduTarget[]): void {
  for (const [vduId, m] of Object.entries(input.pick?.mapping ?? {})) {
    if (input.pick?.vdus && !input.pick.vdus.includes(vduId)) continue;
    if (targets.some((t) => t.vduId === vduId)) continue;
    throw new ValidationError(source, `additionalParams.vdu_mapping.${vduId}`, `release ${input.release} (chart ${input.chartPath}) renders no ${m.kind} ${echo(m.name)}`, {
      hint: 'name the workload as the chart renders it (helm template shows its kind and metadata.name), or the release that holds it; nothing was installed or changed',
    });
  }
}

/**
 * The rendered objects that reach beyond the instance in `namespace`
 * (cluster-scoped, or in another namespace): one warning each, or, when
 * `strict` (additionalParams.vnfm_strict, vnf-instantiate --strict), a
 * refusal naming them all before anything is installed.
 */
function checkReach(source: string, chartPath: string, objects: KubeObject[], namespace: string, reach: { strict: boolean; notice: (message: string) => void }): void {
  const beyond = reachBeyond(objects, namespace);
  if (beyond.length === 0) return;
  const codes = beyond.map((r) => r.code);
  if (reach.strict) {
    const listed = beyond.slice(0, 20).map((r) => r.label);
    const more = beyond.length > listed.length ? `; and ${beyond.length - listed.length} more` : '';
    throw new ValidationError(
      source,
      undefined,
      `the chart ${chartPath} creates objects beyond the instance's namespace ${namespace}, which --strict refuses: ${listed.join('; ')}${more}`,
      { hint: `nothing was installed or changed; ${reachHint(codes, true)}` },
    );
  }
  for (const r of beyond) reach.notice(`warning: the chart ${chartPath} creates ${r.what}`);
  reach.notice(`hint: ${reachHint(codes, false)}`);
}

/** Reads the release's objects (from Helm, unless given) and watches them until ready; returns their references. */
export async function settle(
  d: HelmDrivers,
  ctx: DriverContext,
  input: { release: string; namespace: string; flavour: Flavour; pick?: VduPick; info?: InstantiatedVnfInfo; vdus?: string[]; manifest?: string },
): Promise<ReleaseTargets & { resources: ResourceRef[] }> {
  // install and upgrade hand back the manifest they applied: one helm start fewer.
  const manifest = input.manifest ?? (await d.helm.getManifest({ release: input.release, namespace: input.namespace, signal: ctx.signal }));
  const objects = manifestObjects(manifest, `the manifest of release ${input.release}`);
  const targets = vduTargets(input.flavour, objects, input.release, input.namespace, input.pick);
  const watched = input.vdus ? targets.filter((t) => input.vdus!.includes(t.vduId)) : targets;
  const resources = await d.kube.awaitReady(ctx, {
    resources: objects.map(refOf),
    namespace: input.namespace,
    vdus: watched,
    ...(input.info?.metadata.vnfm_readiness ? { readiness: input.info.metadata.vnfm_readiness } : {}),
  });
  return { release: input.release, resources, targets };
}

/** A release and its VDUs' workloads. */
export interface ReleaseTargets {
  release: string;
  targets: VduTarget[];
}

/** The VNFCs of the releases' VDUs now, each recording its release (metadata.release_name). */
export async function vnfcsNow(d: HelmDrivers, ctx: DriverContext, releases: ReleaseTargets[], vimId: string | undefined) {
  const releaseOf = Object.fromEntries(releases.flatMap((r) => r.targets.map((t) => [t.vduId, r.release])));
  const vnfcs = await d.kube.listVnfcs(
    ctx,
    releases.flatMap((r) => r.targets),
  );
  return vnfcRecords(withReleaseNames(vnfcs, releaseOf), vimId);
}

/**
 * A release an operation leaves as it is (a heal, a scale of another
 * release): its VDUs' workloads from its manifest, its objects as the
 * instance records them (`recorded`).
 */
export async function standing(
  d: HelmDrivers,
  ctx: DriverContext,
  flavour: Flavour,
  helm: Pick<RecordedDeployment, 'namespace' | 'vduMapping'>,
  r: RecordedRelease,
  recorded: ResourceRef[],
): Promise<ReleaseTargets & { resources: ResourceRef[] }> {
  const manifest = await d.helm.getManifest({ release: r.releaseName, namespace: helm.namespace, signal: ctx.signal });
  const objects = manifestObjects(manifest, `the manifest of release ${r.releaseName}`);
  const keys = new Set(objects.map((o) => `${o.kind}|${o.metadata.name}`));
  return {
    release: r.releaseName,
    targets: vduTargets(flavour, objects, r.releaseName, helm.namespace, pickOf(helm, r)),
    resources: recorded.filter((x) => keys.has(`${x.kind}|${x.name}`)),
  };
}

export function report(ctx: DriverContext, ref: ResourceRef, message: string) {
  ctx.report({ resource: ref, message, done: true });
}

/** The request field that named a VDU's replica value. */
export const replicaField = (h: Pick<RecordedDeployment, 'form' | 'aspectReplicaValues'>, flavour: Flavour) => (vduId: string) => {
  if (h.form === 'v2') return `additionalParams.helm_value_names.${vduId}.replica`;
  const aspect = Object.keys(h.aspectReplicaValues ?? {}).find((a) => flavour.aspects[a]?.vduDeltas[vduId] !== undefined);
  return `additionalParams.helm_replica_values.${aspect ?? vduId}`;
};

/** Warnings of a plan, as the operation's notices. */
export const noticeOf = (opts: OperationOptions | undefined) => (message: string) => opts?.onEvent?.({ type: 'notice', message });

/** What an operation on an instantiated Helm instance starts from: its info, package, flavour, VIM and deployment. */
export async function current(deps: LcmDeps, instance: VnfInstance, source: string, given: Record<string, VimConnectionInfo> | undefined) {
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
