/**
 * The Kubernetes infra-driver: creates, scales, heals, changes and removes
 * a CNF's objects of any kind the cluster serves, and waits — by watching —
 * until the cluster has done what was asked. Every step is recorded in the
 * journal before it is taken, and every method can run again after a
 * failure: an object labelled with the instance already is updated, one
 * already gone counts as deleted.
 */
import { NotFoundError, UsageError, VnfmError } from '../../errors.js';
import type { DriverContext, DriverEvent, ResourceRef, Vnfc } from '../driver.js';
import { abortError, defaultRetryPolicy, KubeClient, type RetryPolicy } from './client.js';
import { collectionPath, describeRef, Discovery, objectPath, splitApiVersion, type ApiResource } from './discovery.js';
import {
  INSTANCE_LABEL,
  type ChangePackageInput,
  type DeployInput,
  type HealInput,
  type KubeObject,
  type KubernetesInfraDriver,
  type RemoveInput,
  type ScaleInput,
  type VduTarget,
} from './driver-contract.js';
import { createKubeTransport, type KubeAccess, type KubeTransport } from './kube-api.js';
import { checkDuplicates, checkOwnership, controlledBy, prepareObject, refKey, refOf, selectorString, type PrepareInput } from './objects.js';
import { forEachLimited, groupByRank, removalGroups } from './order.js';
import { assessReadiness, podReady } from './readiness.js';
import { listObjects, watchUntil, withKind } from './watch.js';
import { setMaxListeners } from 'node:events';

export interface KubernetesDriverOptions {
  /** Requests in flight at once when creating, applying or deleting one rank of objects (default 16). */
  concurrency?: number;
  /** Retries of transient API failures; `sleep` is injectable so tests never wait for real. */
  retry?: Partial<RetryPolicy>;
  /** Replaces the HTTPS transport built from the access (tests, fault injection). */
  transport?: KubeTransport;
  /** How long the server keeps each watch stream open before the driver reopens it (default 300 s). */
  watchTimeoutSeconds?: number;
}

/** The driver, plus `close()` to drop its idle keep-alive connections. */
export interface KubernetesDriver extends KubernetesInfraDriver {
  close(): void;
}

export function createKubernetesDriver(access: KubeAccess, opts: KubernetesDriverOptions = {}): KubernetesDriver {
  const client = new KubeClient(opts.transport ?? createKubeTransport(access), access.server, { ...defaultRetryPolicy, ...opts.retry });
  return new Driver(client, opts);
}

const FIELD_MANAGER = 'vnfm';
const APPLY_PATCH = 'application/apply-patch+yaml';
/** Kinds the next rank cannot do without: a namespace to live in, the definitions of custom kinds. */
const GATE_KINDS = new Set(['Namespace', 'CustomResourceDefinition']);
/** Workloads whose pods the driver follows for scale and heal. */
const POD_OWNERS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ReplicationController', 'Job']);
const MAX_WRITE_ATTEMPTS = 5;

interface Planned {
  obj: KubeObject;
  ref: ResourceRef;
}

interface Live {
  ref: ResourceRef;
  res: ApiResource;
  obj: KubeObject;
}

/** The answers to DELETE with Foreground propagation and the instance's grace period. */
function deleteOptions(gracePeriodSeconds: number | undefined, uid: string | undefined, propagationPolicy = 'Foreground'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    propagationPolicy,
    ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
    ...(uid ? { preconditions: { uid } } : {}),
  };
}

function objectKey(ref: Pick<ResourceRef, 'name' | 'namespace'>): string {
  return `${ref.namespace ?? ''}/${ref.name}`;
}

class Driver implements KubernetesDriver {
  private readonly discovery: Discovery;
  private readonly limit: number;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: KubernetesDriverOptions,
  ) {
    this.discovery = new Discovery(client);
    this.limit = opts.concurrency ?? 16;
  }

  close(): void {
    this.client.close();
  }

  // ---- deploy and change package ------------------------------------------------------------

  async deploy(ctx: DriverContext, input: DeployInput): Promise<ResourceRef[]> {
    const plan = await this.plan(ctx, input.objects, input);
    return this.rollOut(ctx, plan, (p) => this.createOrUpdate(ctx, p.obj, input.instanceId));
  }

  async changePackage(ctx: DriverContext, input: ChangePackageInput): Promise<ResourceRef[]> {
    const plan = await this.plan(ctx, input.objects, input);
    const wanted = new Set(plan.map((p) => refKey(p.ref)));
    const dropped = input.current.filter((ref) => !wanted.has(refKey(ref)));
    return this.rollOut(
      ctx,
      plan,
      (p) => this.apply(ctx, p.obj, input.instanceId),
      async () => {
        for (const group of removalGroups(dropped, (r) => r.kind)) {
          await forEachLimited(group, this.limit, (ref) => this.removeOne(ctx, ref, input.instanceId, undefined));
        }
      },
    );
  }

  /**
   * Writes the plan rank by rank (each rank in parallel). Namespaces and
   * CRDs are awaited before the next rank; everything else is awaited in the
   * background while later ranks are written, and all of it before return.
   */
  private async rollOut(ctx: DriverContext, plan: Planned[], write: (p: Planned) => Promise<Live>, afterWrites?: () => Promise<void>): Promise<ResourceRef[]> {
    const waits = new AbortController();
    // Every watch of the operation listens on this signal; dozens at once are expected.
    setMaxListeners(0, waits.signal);
    const stop = () => waits.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', stop, { once: true });
    const waitCtx: DriverContext = { ...ctx, signal: waits.signal };
    const pending: Promise<unknown>[] = [];
    const created: ResourceRef[] = [];
    const services: Live[] = [];
    try {
      for (const group of groupByRank(plan, (p) => p.obj.kind)) {
        const live = await forEachLimited(group, this.limit, write);
        created.push(...live.map((l) => l.ref));
        services.push(...live.filter((l) => l.ref.kind === 'Service' && l.res.group === ''));
        if (GATE_KINDS.has(group[0]!.obj.kind)) {
          await Promise.all(live.map((l) => this.waitReady(ctx, l)));
          if (group[0]!.obj.kind === 'CustomResourceDefinition') this.discovery.invalidate();
        } else {
          for (const l of live) {
            const p = this.waitReady(waitCtx, l);
            p.catch(() => undefined);
            pending.push(p);
          }
        }
      }
      if (afterWrites) await afterWrites();
      await firstFailure(pending, waits);
      // Only now are the pods behind each Service ready, so only now can its endpoints be expected.
      await forEachLimited(services, this.limit, (l) => this.waitEndpoints(ctx, l));
    } catch (err) {
      throw ctx.signal.aborted ? abortError(ctx.signal) : err;
    } finally {
      waits.abort();
      ctx.signal.removeEventListener('abort', stop);
    }
    return created;
  }

  /** Prepares every object, failing before anything is written if a kind is not served. */
  private async plan(ctx: DriverContext, objects: KubeObject[], input: PrepareInput): Promise<Planned[]> {
    // Kinds defined by the package's own CRDs do not exist yet; their CRDs say their scope.
    const defined = new Map<string, boolean>();
    for (const o of objects) {
      if (o.kind !== 'CustomResourceDefinition') continue;
      const spec = (o.spec ?? {}) as { group?: string; scope?: string; names?: { kind?: string } };
      if (spec.group && spec.names?.kind) defined.set(`${spec.group}/${spec.names.kind}`, spec.scope !== 'Cluster');
    }
    const plan = await forEachLimited(objects, this.limit, async (o) => {
      if (!o || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') {
        throw new UsageError(`a manifest object lacks apiVersion, kind or metadata.name: ${JSON.stringify(o).slice(0, 120)}`, {
          hint: 'every object in lcm-kubernetes-def-files needs apiVersion, kind and metadata.name',
        });
      }
      const local = defined.get(`${splitApiVersion(o.apiVersion).group}/${o.kind}`);
      const namespaced = local ?? (await this.discovery.resolve(o.apiVersion, o.kind, ctx.signal)).namespaced;
      const obj = prepareObject(o, namespaced, input);
      return { obj, ref: refOf(obj) };
    });
    checkDuplicates(plan.map((p) => p.obj));
    return plan;
  }

  /** Creates the object; one already there with our label is updated, anyone else's is a conflict. */
  private async createOrUpdate(ctx: DriverContext, obj: KubeObject, instanceId: string): Promise<Live> {
    const res = await this.discovery.resolve(obj.apiVersion, obj.kind, ctx.signal);
    const ref = refOf(obj);
    const what = describeRef(ref);
    ctx.journal.record({ action: 'create', resource: ref, state: 'intended' });
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const made = await this.client.call(
        { method: 'POST', path: collectionPath(res, ref.namespace), query: { fieldManager: FIELD_MANAGER }, body: obj },
        { what: `create ${what}`, signal: ctx.signal, accept: [409] },
      );
      if (made.status < 300) {
        ctx.journal.record({ action: 'create', resource: ref, state: 'done' });
        this.report(ctx, { resource: ref, message: 'created' });
        return { ref, res, obj: withKind(res, made.body as KubeObject) };
      }
      const existing = await this.read(ctx, res, ref);
      if (!existing) continue;
      checkOwnership(existing, ref, instanceId);
      if (existing.metadata.deletionTimestamp) {
        this.report(ctx, { resource: ref, message: 'waiting for the previous copy to finish deleting' });
        await this.waitGone(ctx, res, ref, existing.metadata.uid as string | undefined);
        continue;
      }
      const updated = await this.update(ctx, res, obj, existing);
      if (!updated) continue;
      ctx.journal.record({ action: 'create', resource: ref, state: 'done', detail: 'already existed with this instance label: updated' });
      this.report(ctx, { resource: ref, message: 'updated (it existed from an earlier attempt)' });
      return { ref, res, obj: updated };
    }
    throw new VnfmError(`cannot create ${what}: it kept changing while vnfm wrote it`, { hint: 'another client is changing it: stop it, then retry the operation' });
  }

  /** Server-side apply of the object (field manager vnfm); the new package's objects may be new or ours. */
  private async apply(ctx: DriverContext, obj: KubeObject, instanceId: string): Promise<Live> {
    const res = await this.discovery.resolve(obj.apiVersion, obj.kind, ctx.signal);
    const ref = refOf(obj);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const existing = await this.read(ctx, res, ref);
      if (existing) checkOwnership(existing, ref, instanceId);
      if (attempt === 0) ctx.journal.record({ action: 'apply', resource: ref, state: 'intended' });
      let live: KubeObject | undefined;
      if (existing) {
        live = await this.update(ctx, res, obj, existing);
      } else if (res.verbs.includes('patch')) {
        live = await this.serverSideApply(ctx, res, obj);
      } else {
        const made = await this.client.call(
          { method: 'POST', path: collectionPath(res, ref.namespace), query: { fieldManager: FIELD_MANAGER }, body: obj },
          { what: `create ${describeRef(ref)}`, signal: ctx.signal, accept: [409] },
        );
        live = made.status < 300 ? withKind(res, made.body as KubeObject) : undefined;
      }
      if (!live) continue;
      ctx.journal.record({ action: 'apply', resource: ref, state: 'done' });
      this.report(ctx, { resource: ref, message: existing ? 'configured' : 'created' });
      return { ref, res, obj: live };
    }
    throw new VnfmError(`cannot apply ${describeRef(ref)}: it kept changing while vnfm wrote it`, { hint: 'another client is changing it: stop it, then retry the operation' });
  }

  private async serverSideApply(ctx: DriverContext, res: ApiResource, obj: KubeObject): Promise<KubeObject> {
    const ref = refOf(obj);
    // force: the object is ours (checked), so fields another manager took are taken back.
    const body = await this.client.json<KubeObject>(
      { method: 'PATCH', path: objectPath(res, ref), query: { fieldManager: FIELD_MANAGER, force: true }, body: obj, contentType: APPLY_PATCH },
      { what: `apply ${describeRef(ref)}`, signal: ctx.signal },
    );
    return withKind(res, body);
  }

  /**
   * Brings an existing object of ours to `desired`: server-side apply where
   * the kind supports patch (server-set fields such as a Service's cluster
   * IP or a Job's selector are kept); otherwise a replace at the version
   * read, undefined when that version is stale (the caller reads again).
   */
  private async update(ctx: DriverContext, res: ApiResource, desired: KubeObject, existing: KubeObject): Promise<KubeObject | undefined> {
    if (res.verbs.includes('patch')) return this.serverSideApply(ctx, res, desired);
    const ref = refOf(desired);
    const body = keepServerSetFields(desired, existing);
    body.metadata = { ...body.metadata, resourceVersion: existing.metadata.resourceVersion as string };
    const put = await this.client.call(
      { method: 'PUT', path: objectPath(res, ref), query: { fieldManager: FIELD_MANAGER }, body },
      { what: `update ${describeRef(ref)}`, signal: ctx.signal, accept: [409] },
    );
    return put.status < 300 ? withKind(res, put.body as KubeObject) : undefined;
  }

  private async read(ctx: DriverContext, res: ApiResource, ref: ResourceRef): Promise<KubeObject | undefined> {
    const got = await this.client.call({ method: 'GET', path: objectPath(res, ref) }, { what: `read ${describeRef(ref)}`, signal: ctx.signal, accept: [404] });
    return got.status === 404 ? undefined : withKind(res, got.body as KubeObject);
  }

  // ---- waiting ----------------------------------------------------------------------------------

  /** Watches one object until its kind's readiness holds; a failed object (Job, Pod) is an error. */
  private async waitReady(ctx: DriverContext, live: Pick<Live, 'ref' | 'res'> & { obj?: KubeObject }): Promise<KubeObject> {
    const { ref, res } = live;
    let said = '';
    const say = (message: string, done: boolean) => {
      if (message === said) return;
      said = message;
      this.report(ctx, { resource: ref, message, done });
    };
    const rv = live.obj?.metadata.resourceVersion as string | undefined;
    return watchUntil(
      this.client,
      { res, namespace: ref.namespace, name: ref.name },
      { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds, start: live.obj && rv ? { objects: [live.obj], resourceVersion: rv } : undefined },
      (objects) => {
        const obj = objects.get(objectKey(ref));
        if (!obj) {
          say('waiting for it to exist', false);
          return undefined;
        }
        const r = assessReadiness(obj);
        if (r.failed) {
          throw new VnfmError(`${describeRef(ref)} will not become ready: ${r.failed}`, {
            hint: 'look at the object and its pods (kubectl describe), fix the package or the cluster, then retry or roll back the operation',
          });
        }
        say(r.message, r.ready);
        return r.ready ? obj : undefined;
      },
    );
  }

  /**
   * A Service that selects ready pods is ready once its Endpoints list at
   * least one of them (what clients of the Service need). A Service whose
   * selector matches no ready pod, or a cluster without v1 Endpoints, has
   * nothing more to wait for.
   */
  private async waitEndpoints(ctx: DriverContext, svc: Live): Promise<void> {
    const selector = (svc.obj.spec as { selector?: Record<string, string> } | undefined)?.selector;
    if (!selector || Object.keys(selector).length === 0) return;
    const epRes = await this.discovery.tryResolve('v1', 'Endpoints', ctx.signal);
    if (!epRes) return;
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const labelSelector = selectorString({ matchLabels: selector });
    const { items } = await listObjects(this.client, { res: podRes, namespace: svc.ref.namespace, labelSelector }, ctx.signal);
    if (!items.some(podReady)) return;
    let said = false;
    await watchUntil(this.client, { res: epRes, namespace: svc.ref.namespace, name: svc.ref.name }, { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds }, (objects) => {
      const ep = objects.get(objectKey(svc.ref));
      const subsets = (ep?.subsets ?? []) as Array<{ addresses?: unknown[] }>;
      if (subsets.some((s) => (s.addresses?.length ?? 0) > 0)) {
        this.report(ctx, { resource: svc.ref, message: 'endpoints ready', done: true });
        return true;
      }
      if (!said) this.report(ctx, { resource: svc.ref, message: 'waiting for endpoints' });
      said = true;
      return undefined;
    });
  }

  /** Watches until the object (with this uid, when given) no longer exists. */
  private async waitGone(ctx: DriverContext, res: ApiResource, ref: ResourceRef, uid: string | undefined): Promise<void> {
    await watchUntil(this.client, { res, namespace: ref.namespace, name: ref.name }, { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds }, (objects) => {
      const obj = objects.get(objectKey(ref));
      return !obj || (uid !== undefined && obj.metadata.uid !== uid) ? true : undefined;
    });
  }

  /**
   * Watches a workload's pods until exactly `want` exist, all ready, none of
   * them one of `replaced` (by uid) and none terminating: scale-in is done
   * when the surplus pods are gone, a heal when the replacements are ready.
   */
  private async waitPods(ctx: DriverContext, ref: ResourceRef, workload: KubeObject, want: number, replaced: ReadonlySet<string>): Promise<void> {
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const owners = await this.ownerUids(ctx, workload);
    const selector = selectorString((workload.spec as { selector?: unknown } | undefined)?.selector);
    let said = '';
    await watchUntil(
      this.client,
      { res: podRes, namespace: workload.metadata.namespace, labelSelector: selector },
      { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds },
      (objects) => {
        const pods = [...objects.values()].filter((p) => controlledBy(p, owners));
        const old = pods.filter((p) => replaced.has(p.metadata.uid as string)).length;
        const terminating = pods.filter((p) => p.metadata.deletionTimestamp).length;
        const ready = pods.filter((p) => !p.metadata.deletionTimestamp && !replaced.has(p.metadata.uid as string) && podReady(p)).length;
        if (pods.length === want && ready === want) {
          this.report(ctx, { resource: ref, message: `${want}/${want} pods ready`, done: true });
          return true;
        }
        const extra = [old ? `${old} being replaced` : '', terminating ? `${terminating} terminating` : ''].filter(Boolean).join(', ');
        const message = `waiting for pods: ${ready}/${want} ready${extra ? ` (${extra})` : ''}`;
        if (message !== said) this.report(ctx, { resource: ref, message });
        said = message;
        return undefined;
      },
    );
  }

  /** The uids that control a workload's pods: its own, or for a Deployment those of its ReplicaSets. */
  private async ownerUids(ctx: DriverContext, workload: KubeObject): Promise<Set<string>> {
    const uid = workload.metadata.uid as string;
    if (workload.kind !== 'Deployment') return new Set([uid]);
    const rsRes = await this.discovery.resolve('apps/v1', 'ReplicaSet', ctx.signal);
    const selector = selectorString((workload.spec as { selector?: unknown } | undefined)?.selector);
    const { items } = await listObjects(this.client, { res: rsRes, namespace: workload.metadata.namespace, labelSelector: selector }, ctx.signal);
    return new Set(items.filter((rs) => controlledBy(rs, new Set([uid]))).map((rs) => rs.metadata.uid as string));
  }

  // ---- scale and heal ---------------------------------------------------------------------------

  async scale(ctx: DriverContext, input: ScaleInput): Promise<void> {
    const { resource: ref, replicas } = input;
    const res = await this.discovery.resolve(ref.apiVersion, ref.kind, ctx.signal);
    if (!res.subresources.has('scale')) {
      throw new UsageError(`${describeRef(ref)} cannot be scaled: the cluster serves no /scale subresource for ${res.plural}`, {
        hint: 'scale a Deployment, StatefulSet, ReplicaSet, or a custom resource whose CRD declares the scale subresource',
      });
    }
    ctx.journal.record({ action: 'scale', resource: ref, state: 'intended', detail: `replicas=${replicas}` });
    let done = false;
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS && !done; attempt++) {
      const current = await this.client.json<{ spec?: { replicas?: number }; [k: string]: unknown }>(
        { method: 'GET', path: objectPath(res, ref, 'scale') },
        { what: `read the scale of ${describeRef(ref)}`, signal: ctx.signal },
      );
      const put = await this.client.call(
        { method: 'PUT', path: objectPath(res, ref, 'scale'), query: { fieldManager: FIELD_MANAGER }, body: { ...current, spec: { ...current.spec, replicas } } },
        { what: `scale ${describeRef(ref)} to ${replicas}`, signal: ctx.signal, accept: [409] },
      );
      done = put.status < 300;
    }
    if (!done) throw new VnfmError(`cannot scale ${describeRef(ref)}: it kept changing while vnfm wrote it`, { hint: 'another client is changing it: stop it, then retry the operation' });
    ctx.journal.record({ action: 'scale', resource: ref, state: 'done', detail: `replicas=${replicas}` });
    this.report(ctx, { resource: ref, message: `scaling to ${replicas} replicas` });
    const workload = await this.waitReady(ctx, { ref, res });
    if (POD_OWNERS.has(ref.kind)) await this.waitPods(ctx, ref, workload, replicas, new Set());
  }

  async heal(ctx: DriverContext, input: HealInput): Promise<void> {
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const groups = new Map<string, { owner?: ResourceRef; vnfcs: Vnfc[] }>();
    for (const vnfc of input.vnfcs) {
      const owner = vnfc.owner && vnfc.owner.kind !== 'Pod' ? vnfc.owner : undefined;
      const key = owner ? refKey(owner) : `pod/${vnfc.resourceId}`;
      const group = groups.get(key) ?? { owner, vnfcs: [] };
      group.vnfcs.push(vnfc);
      groups.set(key, group);
    }
    await forEachLimited([...groups.values()], this.limit, async ({ owner, vnfcs }) => {
      if (!owner) {
        for (const vnfc of vnfcs) await this.recreateBarePod(ctx, podRes, vnfc, input);
        return;
      }
      const res = await this.discovery.resolve(owner.apiVersion, owner.kind, ctx.signal);
      const workload = await this.read(ctx, res, owner);
      if (!workload) throw new NotFoundError(`cannot heal: ${describeRef(owner)} does not exist any more`, { hint: 'heal the whole VNF by retrying its instantiation, or terminate it' });
      checkOwnership(workload, owner, input.instanceId);
      const replaced = new Set<string>();
      for (const vnfc of vnfcs) {
        const uid = await this.deletePod(ctx, podRes, { apiVersion: 'v1', kind: 'Pod', name: vnfc.resourceId, namespace: owner.namespace }, input.instanceId);
        if (uid) replaced.add(uid);
      }
      const want = (workload.spec as { replicas?: number } | undefined)?.replicas ?? 1;
      if (workload.kind !== 'DaemonSet' && workload.kind !== 'Job') await this.waitPods(ctx, owner, workload, want, replaced);
      await this.waitReady(ctx, { ref: owner, res });
    });
  }

  /** Deletes one pod of the instance (journaled); returns its uid, or undefined if it was already gone. */
  private async deletePod(ctx: DriverContext, podRes: ApiResource, ref: ResourceRef, instanceId: string): Promise<string | undefined> {
    const pod = await this.read(ctx, podRes, ref);
    if (!pod) return undefined;
    checkOwnership(pod, ref, instanceId);
    const uid = pod.metadata.uid as string;
    ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
    await this.client.call(
      { method: 'DELETE', path: objectPath(podRes, ref), body: deleteOptions(undefined, uid, 'Background') },
      { what: `delete ${describeRef(ref)}`, signal: ctx.signal, accept: [404, 409] },
    );
    ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
    this.report(ctx, { resource: ref, message: 'deleted, waiting for its replacement' });
    return uid;
  }

  private async recreateBarePod(ctx: DriverContext, podRes: ApiResource, vnfc: Vnfc, input: HealInput): Promise<void> {
    const namespace = vnfc.owner?.namespace ?? (vnfc.metadata?.namespace as string | undefined);
    const spec = input.barePods[`${namespace}/${vnfc.resourceId}`];
    if (!spec) {
      throw new NotFoundError(`cannot heal VNFC ${vnfc.id}: no recorded spec for the bare Pod ${vnfc.resourceId} in namespace ${namespace}`, {
        hint: 'a bare Pod can only be recreated from the spec recorded when it was deployed',
      });
    }
    const ref: ResourceRef = { apiVersion: 'v1', kind: 'Pod', name: vnfc.resourceId, namespace };
    const uid = await this.deletePod(ctx, podRes, ref, input.instanceId);
    await this.waitGone(ctx, podRes, ref, uid);
    const obj = prepareObject(spec, true, { instanceId: input.instanceId, namespace: namespace ?? 'default', replicas: {} });
    const live = await this.createOrUpdate(ctx, obj, input.instanceId);
    await this.waitReady(ctx, live);
  }

  // ---- remove -------------------------------------------------------------------------------------

  async remove(ctx: DriverContext, input: RemoveInput): Promise<void> {
    for (const group of removalGroups(input.resources, (r) => r.kind)) {
      await forEachLimited(group, this.limit, (ref) => this.removeOne(ctx, ref, input.instanceId, input.gracePeriodSeconds));
    }
  }

  /** Deletes one object of the instance and waits until it is gone; gone already counts as deleted. */
  private async removeOne(ctx: DriverContext, ref: ResourceRef, instanceId: string, gracePeriodSeconds: number | undefined): Promise<void> {
    // A kind no longer served (its CRD went first) leaves no object behind.
    const res = await this.discovery.tryResolve(ref.apiVersion, ref.kind, ctx.signal);
    const existing = res && (await this.read(ctx, res, ref));
    if (!res || !existing) {
      ctx.journal.record({ action: 'delete', resource: ref, state: 'done', detail: 'already gone' });
      this.report(ctx, { resource: ref, message: 'already gone', done: true });
      return;
    }
    if (existing.metadata.labels?.[INSTANCE_LABEL] !== instanceId) {
      // Same name, someone else's object (ours was deleted and replaced): not ours to delete.
      ctx.journal.record({ action: 'delete', resource: ref, state: 'done', detail: 'left in place: not labelled with this instance' });
      this.report(ctx, { resource: ref, message: `left in place: it is not labelled ${INSTANCE_LABEL}=${instanceId}`, done: true });
      return;
    }
    const uid = existing.metadata.uid as string | undefined;
    ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
    if (!existing.metadata.deletionTimestamp) {
      await this.client.call(
        { method: 'DELETE', path: objectPath(res, ref), body: deleteOptions(gracePeriodSeconds, uid) },
        { what: `delete ${describeRef(ref)}`, signal: ctx.signal, accept: [404, 409] },
      );
    }
    this.report(ctx, { resource: ref, message: 'deleting' });
    await this.waitGone(ctx, res, ref, uid);
    ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
    this.report(ctx, { resource: ref, message: 'deleted', done: true });
  }

  // ---- VNFCs ----------------------------------------------------------------------------------------

  async listVnfcs(ctx: DriverContext, targets: VduTarget[]): Promise<Vnfc[]> {
    const perTarget = await forEachLimited(targets, this.limit, async ({ vduId, resource }) => {
      const res = await this.discovery.resolve(resource.apiVersion, resource.kind, ctx.signal);
      const workload = await this.read(ctx, res, resource);
      if (!workload) return [];
      const pods = await this.podsOf(ctx, workload);
      return pods.map(
        (pod): Vnfc => ({
          id: `${vduId}-${pod.metadata.name}`,
          vduId,
          resourceId: pod.metadata.name,
          vimLevelResourceType: resource.kind,
          owner: resource,
          state: 'STARTED',
          metadata: {
            namespace: pod.metadata.namespace,
            phase: (pod.status as { phase?: string } | undefined)?.phase,
            nodeName: (pod.spec as { nodeName?: string } | undefined)?.nodeName,
            podIP: (pod.status as { podIP?: string } | undefined)?.podIP,
          },
        }),
      );
    });
    return perTarget.flat();
  }

  /** The live (not terminating) pods a workload controls, oldest first; a bare Pod is its own. */
  private async podsOf(ctx: DriverContext, workload: KubeObject): Promise<KubeObject[]> {
    if (workload.kind === 'Pod') return [workload];
    const selector = selectorString((workload.spec as { selector?: unknown } | undefined)?.selector);
    if (selector === undefined) return [];
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const owners = await this.ownerUids(ctx, workload);
    const { items } = await listObjects(this.client, { res: podRes, namespace: workload.metadata.namespace, labelSelector: selector }, ctx.signal);
    return items
      .filter((p) => controlledBy(p, owners) && !p.metadata.deletionTimestamp)
      .sort((a, b) => String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) || a.metadata.name.localeCompare(b.metadata.name));
  }

  private report(ctx: DriverContext, event: DriverEvent): void {
    ctx.report(event);
  }
}

/** For a replace: fields the server filled in and would refuse to see cleared. */
function keepServerSetFields(desired: KubeObject, existing: KubeObject): KubeObject {
  const out = structuredClone(desired);
  if (desired.kind === 'Service') {
    const spec = (out.spec ??= {}) as Record<string, unknown>;
    const old = (existing.spec ?? {}) as Record<string, unknown>;
    for (const field of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy', 'healthCheckNodePort']) {
      if (spec[field] === undefined && old[field] !== undefined) spec[field] = old[field];
    }
  }
  return out;
}

/** Waits for all; on the first failure stops the others (through `abort`) and rethrows it. */
async function firstFailure(promises: Promise<unknown>[], abort: AbortController): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let left = promises.length;
    if (left === 0) resolve();
    for (const p of promises) {
      p.then(
        () => {
          if (--left === 0) resolve();
        },
        (err) => {
          abort.abort();
          reject(err);
        },
      );
    }
  });
}
