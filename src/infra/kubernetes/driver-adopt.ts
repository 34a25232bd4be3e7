/**
 * Adoption: the objects of a package that another VNF manager (Tacker)
 * created, compared with the package and taken over as an instance's
 * without changing them. The take-over is a server-side apply of the
 * instance label alone under vnfm's field manager: every field the other
 * manager wrote stays its own and unchanged, the pod templates are not
 * touched (no rollout, no pod restarts), and the next apply of vnfm (a change
 * of package) takes the fields over with force as it does for its own.
 */
import type { DriverContext, ResourceRef } from '../driver.js';
import { describeRef, objectPath, type ApiResource } from './discovery.js';
import { INSTANCE_LABEL, type AdoptInput, type AdoptionFindings, type KubeObject } from './driver-contract.js';
import { controlledBy, refKey, selectorString } from './objects.js';
import { forEachLimited, groupByRank } from './order.js';
import { sourceKey } from './package-kinds.js';
import { APPLY_PATCH, FIELD_MANAGER, ownsPods, type Planned } from './driver-support.js';
import { DeployingDriver } from './driver-deploy.js';
import { listObjects } from './watch.js';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The pod spec of a workload (or a Pod's own), where its containers are. */
function podSpecOf(obj: KubeObject): Json | undefined {
  const spec = obj.spec;
  if (!isRecord(spec)) return undefined;
  if (obj.kind === 'Pod') return spec;
  const template = isRecord(spec.jobTemplate) && isRecord(spec.jobTemplate.spec) ? spec.jobTemplate.spec.template : spec.template;
  return isRecord(template) && isRecord(template.spec) ? template.spec : undefined;
}

/** Container name → image, of the containers and init containers of a pod spec. */
function imagesOf(obj: KubeObject): Map<string, string> {
  const spec = podSpecOf(obj);
  const out = new Map<string, string>();
  for (const field of ['initContainers', 'containers']) {
    const list = spec?.[field];
    if (!Array.isArray(list)) continue;
    for (const c of list) if (isRecord(c) && typeof c.name === 'string') out.set(c.name, typeof c.image === 'string' ? c.image : '');
  }
  return out;
}

/** How the live object's containers differ from the package's: one line each. */
function imageDifferences(what: string, wanted: KubeObject, live: KubeObject): string[] {
  const want = imagesOf(wanted);
  const have = imagesOf(live);
  const out: string[] = [];
  for (const [name, image] of want) {
    const now = have.get(name);
    if (now === undefined) out.push(`${what}: has no container ${name} (the package defines it with image ${image})`);
    else if (now !== image) out.push(`${what}: container ${name} runs image ${now}, the package defines ${image}`);
  }
  for (const [name, image] of have) if (!want.has(name)) out.push(`${what}: has a container ${name} (image ${image}) the package does not define`);
  return out;
}

/** The driver's adoption: inspect (read only) and take over. */
export abstract class AdoptingDriver extends DeployingDriver {
  async inspectAdoption(input: AdoptInput, signal: AbortSignal = new AbortController().signal): Promise<AdoptionFindings> {
    const ctx: DriverContext = { journal: { record: () => undefined, steps: () => [] }, report: () => undefined, signal };
    const planned = await this.adoptionPlan(ctx, input);
    const live = new Map<string, KubeObject>();
    // In the package's order, whatever order the cluster's answers come in.
    const found = await forEachLimited(planned, this.limit, async (p): Promise<string[]> => {
      const res = await this.discovery.resolve(p.ref.apiVersion, p.ref.kind, ctx.signal);
      const what = `${describeRef(p.ref)}${p.file ? ` (${p.file})` : ''}`;
      const obj = await this.read(ctx, res, p.ref);
      if (!obj) return [`${what}: missing`];
      live.set(refKey(p.ref), obj);
      const out: string[] = [];
      const owner = obj.metadata.labels?.[INSTANCE_LABEL];
      if (owner !== undefined && owner !== input.instanceId) out.push(`${what}: already labelled ${INSTANCE_LABEL}=${owner}, another vnfm instance's`);
      if (obj.metadata.deletionTimestamp) out.push(`${what}: being deleted`);
      return [...out, ...imageDifferences(what, p.obj, obj)];
    });
    const replicas: Record<string, number> = {};
    for (const t of input.vdus) {
      const obj = live.get(refKey({ ...t.resource, namespace: t.resource.namespace ?? input.namespace }));
      if (!obj) continue;
      const n = (obj.spec as { replicas?: unknown } | undefined)?.replicas;
      if (typeof n === 'number') replicas[t.vduId] = n;
      else {
        const res = await this.discovery.resolve(t.resource.apiVersion, t.resource.kind, ctx.signal);
        replicas[t.vduId] = ownsPods(res) ? (await this.controlledPods(ctx, obj)).length : 1;
      }
    }
    return { differences: found.flat(), resources: planned.map((p) => p.ref), replicas };
  }

  async adopt(ctx: DriverContext, input: AdoptInput): Promise<ResourceRef[]> {
    const planned = await this.adoptionPlan(ctx, input);
    for (const group of groupByRank(planned, (p) => p.obj.kind)) {
      await forEachLimited(group, this.limit, async (p) => {
        const res = await this.discovery.resolve(p.ref.apiVersion, p.ref.kind, ctx.signal);
        await this.labelOne(ctx, res, p.ref, input.instanceId);
      });
    }
    // The VDUs' pods carry the label as vnfm's own pods do (heal checks it); labelling a pod restarts nothing.
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    for (const t of input.vdus) {
      const res = await this.discovery.resolve(t.resource.apiVersion, t.resource.kind, ctx.signal);
      if (!ownsPods(res) || t.resource.kind === 'Pod') continue;
      const workload = await this.read(ctx, res, { ...t.resource, namespace: t.resource.namespace ?? input.namespace });
      if (!workload) continue;
      const pods = await this.controlledPods(ctx, workload);
      await forEachLimited(pods, this.limit, (pod) =>
        this.labelOne(ctx, podRes, { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, namespace: pod.metadata.namespace as string }, input.instanceId),
      );
    }
    return planned.map((p) => p.ref);
  }

  /** The package's objects the cluster keeps (create-only kinds left out), in creation order, as the cluster scopes them. */
  private async adoptionPlan(ctx: DriverContext, input: AdoptInput): Promise<Planned[]> {
    const plan = await this.plan(ctx, input.objects, {
      instanceId: input.instanceId,
      namespace: input.namespace,
      replicas: {},
      vdus: input.vdus,
      ...(input.sources ? { sources: input.sources } : {}),
    });
    const sources = input.sources ?? {};
    const kept = plan.filter((p) => !p.createOnly).map((p) => (p.file || !sources[sourceKey(p.obj)] ? p : { ...p, file: sources[sourceKey(p.obj)]! }));
    return groupByRank(kept, (p) => p.obj.kind).flat();
  }

  /** Server-side apply of the instance label alone (journalled): nothing else of the object changes. */
  private async labelOne(ctx: DriverContext, res: ApiResource, ref: ResourceRef, instanceId: string): Promise<void> {
    ctx.journal.record({ action: 'update', resource: ref, state: 'intended', detail: `label ${INSTANCE_LABEL} (adopted)` });
    const body = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}), labels: { [INSTANCE_LABEL]: instanceId } },
    };
    await this.client.call(
      { method: 'PATCH', path: objectPath(res, ref), query: { fieldManager: FIELD_MANAGER }, body, contentType: APPLY_PATCH },
      { what: `label ${describeRef(ref)}`, signal: ctx.signal },
    );
    ctx.journal.record({ action: 'update', resource: ref, state: 'done', detail: `label ${INSTANCE_LABEL} (adopted)` });
    this.report(ctx, { resource: ref, message: 'adopted', done: true });
  }

  /** The pods a workload controls now, not being deleted. */
  private async controlledPods(ctx: DriverContext, workload: KubeObject): Promise<KubeObject[]> {
    const selector = selectorString((workload.spec as { selector?: unknown } | undefined)?.selector);
    if (selector === undefined) return [];
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const owners = await this.ownerUids(ctx, workload);
    const { items } = await listObjects(this.client, { res: podRes, namespace: workload.metadata.namespace as string, labelSelector: selector }, ctx.signal);
    return items.filter((p) => controlledBy(p, owners) && !p.metadata.deletionTimestamp);
  }
}
