/**
 * What the Helm planner's plans share: the release as a journal entry, the
 * package's charts, the chart rendered before the release is touched
 * (rehearse), the release's manifest watched until ready (settle), its
 * uninstall, the deployment an instance records, and the ways a retry finds
 * the release and its namespace as it needs them (recoverPending,
 * checkNamespace, ensureNamespace).
 */
import { ConflictError, echo, UsageError, ValidationError, VimCheckError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../../infra/driver.js';
import type { HelmSetValues } from '../../infra/helm/contract.js';
import { HelmError } from '../../infra/helm/errors.js';
import type { KubeObject, VduTarget } from '../../infra/kubernetes/driver-contract.js';
import { checkChart, findCharts } from '../../csar/helm-chart.js';
import { openPackage } from '../../csar/open-package.js';
import { reachBeyond, reachHint, type Flavour } from '../../vnfd/index.js';
import { isMapping } from '../../yaml.js';
import { parseYaml, splitYamlDocuments } from '../../vnfd/yaml-source.js';
import type { LcmDeps } from '../engine.js';
import type { HelmDeployment } from '../helm-request.js';
import type { InstantiatedVnfInfo, VimConnection, VnfInstance } from '../../model/lcm.js';
import { vnfcRecords } from '../../model/vnfcs.js';
import type { HelmDrivers, HelmServices } from './helm.js';

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet', 'Pod']);

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
 * A VDU's workload in the release: the workload named as the VDU
 * (properties.name), or that name then `-<release>` (the sample's charts),
 * or — Tacker v2's rule for Helm — that name then `-` and a suffix without
 * `-`.
 */
export function vduTargets(flavour: Flavour, objects: KubeObject[], release: string, namespace: string): VduTarget[] {
  return Object.entries(flavour.vdus).flatMap(([vduId, vdu]) => {
    const workloads = objects.filter((o) => WORKLOAD_KINDS.has(o.kind));
    const o =
      workloads.find((w) => w.metadata.name === vdu.name) ??
      workloads.find((w) => w.metadata.name === `${vdu.name}-${release}`) ??
      workloads.find((w) => w.metadata.name.lastIndexOf('-') > 0 && w.metadata.name.slice(0, w.metadata.name.lastIndexOf('-')) === vdu.name);
    return o ? [{ vduId, resource: { ...refOf(o), namespace: o.metadata.namespace ?? namespace } }] : [];
  });
}

/** Values for `--set`: the request's parameters, then each VDU's replica value. */
export function setValues(helm: Pick<HelmDeployment, 'parameters' | 'replicaValues'>, replicas: Record<string, number>): HelmSetValues {
  const set: HelmSetValues = { ...helm.parameters };
  for (const [vduId, path] of Object.entries(helm.replicaValues)) if (replicas[vduId] !== undefined) set[path] = replicas[vduId];
  return set;
}

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
    if (err instanceof HelmError) {
      throw new ValidationError(source, 'additionalParams', `the chart ${input.chartPath} does not render: ${err.stderr || err.message}`, {
        hint: 'fix the chart (helm template shows the same), or the values the request gives it; nothing was installed or changed',
      });
    }
    throw err;
  }
  const objects = manifestObjects(rendered, `${input.chartPath} (rendered)`);
  if (input.reach) checkReach(source, input.chartPath, objects, input.namespace, input.reach);
  const targets = vduTargets(input.flavour, objects, input.release, input.namespace);
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
  input: { release: string; namespace: string; flavour: Flavour; info?: InstantiatedVnfInfo; vdus?: string[]; manifest?: string },
) {
  // install and upgrade hand back the manifest they applied: one helm start fewer.
  const manifest = input.manifest ?? (await d.helm.getManifest({ release: input.release, namespace: input.namespace, signal: ctx.signal }));
  const objects = manifestObjects(manifest, `the manifest of release ${input.release}`);
  const targets = vduTargets(input.flavour, objects, input.release, input.namespace);
  const watched = input.vdus ? targets.filter((t) => input.vdus!.includes(t.vduId)) : targets;
  const resources = await d.kube.awaitReady(ctx, {
    resources: objects.map(refOf),
    namespace: input.namespace,
    vdus: watched,
    ...(input.info?.metadata.vnfm_readiness ? { readiness: input.info.metadata.vnfm_readiness } : {}),
  });
  return { resources, targets };
}

export async function vnfcsNow(d: HelmDrivers, ctx: DriverContext, targets: VduTarget[], vimId: string | undefined) {
  return vnfcRecords(await d.kube.listVnfcs(ctx, targets), vimId);
}

export function report(ctx: DriverContext, ref: ResourceRef, message: string) {
  ctx.report({ resource: ref, message, done: true });
}

/** Uninstalls the release and waits until every object it had (and `also`) is gone; a release already gone is fine. */
export async function uninstall(d: HelmDrivers, ctx: DriverContext, release: string, namespace: string, also: ResourceRef[]): Promise<void> {
  const ref = releaseRef(release, namespace);
  const present = await d.helm.status({ release, namespace, signal: ctx.signal });
  let objects: ResourceRef[] = [];
  if (present) {
    objects = manifestObjects(await d.helm.getManifest({ release, namespace, signal: ctx.signal }), `the manifest of release ${release}`).map(refOf);
    ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
    await d.helm.uninstall({ release, namespace, signal: ctx.signal });
    ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
    report(ctx, ref, 'uninstalled');
  }
  const seen = new Set<string>();
  const all = [...objects.map((o) => ({ ...o, namespace: o.namespace ?? namespace })), ...also].filter((r) => {
    const key = `${r.apiVersion}|${r.kind}|${r.namespace ?? ''}|${r.name}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
  await d.kube.awaitGone(ctx, { resources: all });
}

/** A release of this name in the namespace that the instance does not own: refused before anything changes. */
export async function assertReleaseFree(d: HelmDrivers, release: string, namespace: string, signal: AbortSignal): Promise<void> {
  const found = await d.helm.status({ release, namespace, signal });
  if (found) {
    throw new ConflictError(
      `a Helm release ${release} already exists in namespace ${namespace} (chart ${found.chart}, revision ${found.revision}, ${found.status}); vnfm does not take over a release it did not install`,
      {
        hint: 'choose another release name (v1: helmreleasename) or namespace, or uninstall that release first (helm uninstall -n NAMESPACE RELEASE)',
      },
    );
  }
}

export const helmMetadata = (h: HelmDeployment, revision: number) => ({
  release_name: h.releaseName,
  revision,
  helm_chart_path: h.chartPath,
  helm_parameters: h.parameters,
  ...(h.valueNames ? { helm_value_names: h.valueNames } : {}),
  ...(h.aspectReplicaValues ? { helm_replica_values: h.aspectReplicaValues } : {}),
  helm_replica_paths: h.replicaValues,
});

/** The HelmDeployment an instantiated instance records. */
export function deploymentOf(instance: VnfInstance): HelmDeployment & { revision: number } {
  const m = instance.instantiatedVnfInfo?.metadata;
  if (!m?.release_name || m.helm_chart_path === undefined) {
    throw new ConflictError(`vnf instance ${instance.id} is not a Helm deployment`, { hint: `vnfm vnf-show ${instance.id}` });
  }
  return {
    form: m.helm_replica_values ? 'v1' : 'v2',
    chartPath: m.helm_chart_path,
    releaseName: m.release_name,
    namespace: m.namespace,
    parameters: m.helm_parameters ?? {},
    replicaValues: m.helm_replica_paths ?? {},
    ...(m.helm_value_names ? { valueNames: m.helm_value_names } : {}),
    ...(m.helm_replica_values ? { aspectReplicaValues: m.helm_replica_values } : {}),
    revision: m.revision ?? 0,
  };
}

/** The request field that named a VDU's replica value. */
export const replicaField = (h: Pick<HelmDeployment, 'form' | 'aspectReplicaValues'>, flavour: Flavour) => (vduId: string) => {
  if (h.form === 'v2') return `additionalParams.helm_value_names.${vduId}.replica`;
  const aspect = Object.keys(h.aspectReplicaValues ?? {}).find((a) => flavour.aspects[a]?.vduDeltas[vduId] !== undefined);
  return `additionalParams.helm_replica_values.${aspect ?? vduId}`;
};

// ---------------------------------------------------------------------------
// A release left pending, the release's namespace

/**
 * Brings back a release an earlier helm run left pending-install,
 * pending-upgrade or pending-rollback (helm, or vnfm with it, was killed
 * mid-way), as an operator would before trying again: `helm rollback` to its
 * last deployed revision (Helm allows a rollback of a pending release; it
 * refuses any other upgrade), or `helm uninstall` when it never had one.
 * Only for an occurrence no vnfm runs any more (the engine retries only
 * FAILED_TEMP ones), so the pending run is known to be dead.
 */
export async function recoverPending(d: HelmDrivers, ctx: DriverContext, release: string, namespace: string): Promise<void> {
  const history = await d.helm.history({ release, namespace, signal: ctx.signal });
  const last = history.at(-1);
  if (!last?.status.startsWith('pending-')) return;
  const ref = releaseRef(release, namespace);
  const settled = history.filter((r) => !r.status.startsWith('pending-'));
  const back = settled.filter((r) => r.status === 'deployed').at(-1) ?? settled.at(-1);
  const left = `left ${last.status} at revision ${last.revision} by a helm run that did not finish`;
  if (!back) {
    report(ctx, ref, `${left}: uninstalling it`);
    await uninstall(d, ctx, release, namespace, []);
    return;
  }
  ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: `rollback of ${last.status} revision ${last.revision} to revision ${back.revision}` });
  await d.helm.rollback({ release, namespace, revision: back.revision, signal: ctx.signal });
  ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `rolled back to revision ${back.revision}` });
  report(ctx, ref, `${left}: rolled back to revision ${back.revision}`);
}

/**
 * Refuses a namespace the cluster is deleting, or lacks when the request did
 * not ask vnfm to create it (additionalParams.vnfm_create_namespace,
 * vnf-instantiate --create-namespace): exit 6, as for a manifest CNF.
 */
export async function checkNamespace(
  d: HelmDrivers,
  vim: Pick<VimConnection, 'name'>,
  namespace: string,
  create: boolean,
  signal: AbortSignal,
): Promise<'active' | 'missing' | 'unknown'> {
  const state = await d.helm.namespaceState({ namespace, signal });
  if (state === 'terminating') {
    throw new VimCheckError(`namespace "${namespace}" on the cluster of VIM ${vim.name} is being deleted: nothing can be created in it`, {
      hint: 'wait until it is gone (kubectl get namespace), or instantiate into another one (additionalParams.namespace)',
    });
  }
  if (state === 'missing' && !create) {
    throw new VimCheckError(`namespace "${namespace}" does not exist on the cluster of VIM ${vim.name}`, {
      hint: `create it first (kubectl create namespace ${namespace}), give another one in additionalParams.namespace, or let vnfm create it: "vnfm_create_namespace": true in additionalParams (vnf-instantiate --create-namespace)`,
    });
  }
  return state;
}

/** Checks the namespace again as the operation runs, and creates it (labelled managed-by vnfm) when it is missing and the request asked for that. */
export async function prepareNamespace(d: HelmDrivers, ctx: DriverContext, vim: Pick<VimConnection, 'name'>, namespace: string, create: boolean): Promise<void> {
  if ((await checkNamespace(d, vim, namespace, create, ctx.signal)) !== 'missing') return;
  if (await d.helm.createNamespace({ namespace, signal: ctx.signal })) report(ctx, { apiVersion: 'v1', kind: 'Namespace', name: namespace }, 'created (vnfm_create_namespace)');
}
