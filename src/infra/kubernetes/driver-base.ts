/**
 * The Kubernetes driver's ground floor: its client and discovery, reading,
 * creating, applying and updating one object, and the waits (by watching)
 * until an object is ready, its Pods or Machines are there, or it is gone.
 */
import { VnfmError } from '../../errors.js';
import type { DriverContext, DriverEvent, ResourceRef } from '../driver.js';
import { KubeClient, type RetryPolicy } from './client.js';
import { collectionPath, describeRef, Discovery, objectPath, type ApiResource } from './discovery.js';
import { type KubeObject } from './driver-contract.js';
import { readPodLog, type PodLogInput } from './pod-log.js';
import type { KubeTransport } from './kube-wire.js';
import { checkOwnership, controlledBy, refOf, selectorString } from './objects.js';
import { byAge, machineOf, MACHINE_GROUP, ownedSetUids } from './machines.js';
import { assessReadiness, podReady } from './readiness.js';
import type { ReadinessOverrides } from './readiness-rules.js';
import { listObjects, watchUntil, withKind, type WatchCheck } from './watch.js';
import { resourceKey, type WatchHub } from './shared-watch.js';
import { ruleFor } from './readiness-rules.js';
import {
  APPLY_PATCH,
  claimTemplates,
  dropNulls,
  FIELD_MANAGER,
  keepServerSetFields,
  kindFacts,
  type Live,
  MAX_WRITE_ATTEMPTS,
  objectKey,
  type Planned,
  rejectedFrom,
  reviewAnswer,
} from './driver-support.js';

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

/** The driver's client, discovery and reporting, its writes and reads of one object, and its waits (by watching). */
export abstract class KubeDriverBase {
  protected readonly discovery: Discovery;
  protected readonly limit: number;
  /** `<plural>.<group>/<version>` → whether its schema has `spec.template.metadata.labels`. */
  protected readonly templateSchemas = new Map<string, Promise<boolean>>();
  /**
   * By resource, the latest resourceVersion this driver's watches saw: a
   * list made after a wait asks for a state no older than the one the wait
   * ended on, which the API server answers from its watch cache of that
   * resource instead of reading etcd.
   */
  private readonly seen = new Map<string, bigint>();

  constructor(
    protected readonly client: KubeClient,
    protected readonly opts: KubernetesDriverOptions,
  ) {
    this.discovery = new Discovery(client);
    this.limit = opts.concurrency ?? 16;
  }

  close(): void {
    this.client.close();
  }

  /** A container's log, line by line (kubectl logs): pod-log.ts. */
  podLog(input: PodLogInput, onLine: (line: string, bytes: Buffer) => void, signal: AbortSignal): Promise<void> {
    return readPodLog(this.client, input, onLine, signal);
  }

  /** Ends a hub's watches, keeping the latest version of each resource they saw. */
  protected closeHub(hub: WatchHub): void {
    for (const [kind, rv] of hub.seenVersions()) if (rv > (this.seen.get(kind) ?? -1n)) this.seen.set(kind, rv);
    hub.close();
  }

  /** The version a list of `res` need be no older than, when this driver's watches saw one (closeHub). */
  protected seenVersion(res: ApiResource): string | undefined {
    const rv = this.seen.get(resourceKey(res));
    return rv === undefined ? undefined : String(rv);
  }

  /**
   * Posts an object of a create-only kind and reports the server's answer
   * (Tacker's AuthenticationResource: create, nothing else). A refusal
   * (403, 422) fails the operation like any other create.
   */
  protected async submit(ctx: DriverContext, p: Planned): Promise<void> {
    const res = await this.discovery.resolve(p.obj.apiVersion, p.obj.kind, ctx.signal);
    const what = `${p.obj.kind}${p.obj.metadata.name ? ` ${p.obj.metadata.name}` : ''}${p.file ? ` (${p.file})` : ''}`;
    const answer = await this.client
      .json<KubeObject>({ method: 'POST', path: collectionPath(res, p.ref.namespace), body: p.obj }, { what: `create ${what}`, signal: ctx.signal })
      .catch((err) => rejectedFrom(err, p));
    this.report(ctx, { resource: p.ref, message: reviewAnswer(answer), done: true });
  }

  /** Creates the object; one already there with our label is updated, anyone else's is a conflict. */
  protected async createOrUpdate(ctx: DriverContext, obj: KubeObject, instanceId: string): Promise<Live> {
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
  protected async apply(ctx: DriverContext, obj: KubeObject, instanceId: string): Promise<Live> {
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

  protected async serverSideApply(ctx: DriverContext, res: ApiResource, obj: KubeObject): Promise<KubeObject> {
    const ref = refOf(obj);
    // force: the object is ours (checked), so fields another manager took are taken back.
    // Explicit nulls (CAPO's templates carry `matchLabels: null`) are refused by apply where create takes them.
    const body = await this.client.json<KubeObject>(
      { method: 'PATCH', path: objectPath(res, ref), query: { fieldManager: FIELD_MANAGER, force: true }, body: dropNulls(obj), contentType: APPLY_PATCH },
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
  protected async update(ctx: DriverContext, res: ApiResource, desired: KubeObject, existing: KubeObject): Promise<KubeObject | undefined> {
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

  protected async read(ctx: DriverContext, res: ApiResource, ref: ResourceRef): Promise<KubeObject | undefined> {
    const got = await this.client.call({ method: 'GET', path: objectPath(res, ref) }, { what: `read ${describeRef(ref)}`, signal: ctx.signal, accept: [404] });
    return got.status === 404 ? undefined : withKind(res, got.body as KubeObject);
  }

  /**
   * Watches one object until its kind's readiness holds; a failed object (Job, Pod) is an error.
   * With `hub`, on the operation's shared watch of the kind and namespace.
   */
  protected async waitReady(ctx: DriverContext, live: Pick<Live, 'ref' | 'res'> & { obj?: KubeObject }, rules?: ReadinessOverrides, hub?: WatchHub): Promise<KubeObject> {
    const { ref, res } = live;
    let said = '';
    const say = (message: string, done: boolean) => {
      if (message === said) return;
      said = message;
      this.report(ctx, { resource: ref, message, done });
    };
    const check: WatchCheck<KubeObject> = (objects) => {
      const obj = objects.get(objectKey(ref));
      if (!obj) {
        say('waiting for it to exist', false);
        return undefined;
      }
      const r = assessReadiness(obj, rules, kindFacts(res));
      if (r.failed) {
        throw new VnfmError(`${describeRef(ref)} will not become ready: ${r.failed}`, {
          hint: 'look at the object and its pods (kubectl describe), fix the package or the cluster, then retry or roll back the operation',
        });
      }
      say(r.message, r.ready);
      return r.ready ? obj : undefined;
    };
    const rv = live.obj?.metadata.resourceVersion as string | undefined;
    const ready = hub
      ? await hub.until({ res, namespace: ref.namespace, name: ref.name }, { signal: ctx.signal, start: live.obj }, check)
      : await watchUntil(
          this.client,
          { res, namespace: ref.namespace, name: ref.name },
          { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds, start: live.obj && rv ? { objects: [live.obj], resourceVersion: rv } : undefined },
          check,
        );
    if (ref.kind === 'StatefulSet' && res.group === 'apps' && !ruleFor(rules, ready)) await this.waitClaims(ctx, ref, ready);
    return ready;
  }

  /**
   * A StatefulSet is ready once the claims of its pods are Bound too
   * (Tacker v2's StatefulSet.is_ready reads each `<template>-<sts>-<ordinal>`).
   */
  protected async waitClaims(ctx: DriverContext, ref: ResourceRef, sts: KubeObject): Promise<void> {
    const templates = claimTemplates(sts);
    if (templates.length === 0) return;
    const replicas = (sts.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    const names = Array.from({ length: replicas }, (_, i) => templates.map((t) => `${t}-${sts.metadata.name}-${i}`)).flat();
    if (names.length === 0) return;
    const pvcRes = await this.discovery.resolve('v1', 'PersistentVolumeClaim', ctx.signal);
    let said = '';
    await watchUntil(this.client, { res: pvcRes, namespace: ref.namespace }, { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds }, (objects) => {
      const pending = names.filter((name) => (objects.get(objectKey({ name, namespace: ref.namespace }))?.status as { phase?: string } | undefined)?.phase !== 'Bound');
      const message = pending.length ? `waiting for its claims to be bound: ${pending.join(', ')}` : `${names.length} claims bound`;
      if (message !== said) this.report(ctx, { resource: ref, message, done: pending.length === 0 });
      said = message;
      return pending.length === 0 ? true : undefined;
    });
  }

  /**
   * A Service that selects ready pods is ready once its Endpoints list at
   * least one of them (what clients of the Service need). A Service whose
   * selector matches no ready pod, or a cluster without v1 Endpoints, has
   * nothing more to wait for.
   */
  protected async waitEndpoints(ctx: DriverContext, svc: Live, hub?: WatchHub): Promise<void> {
    const selector = (svc.obj.spec as { selector?: Record<string, string> } | undefined)?.selector;
    if (!selector || Object.keys(selector).length === 0) return;
    const epRes = await this.discovery.tryResolve('v1', 'Endpoints', ctx.signal);
    if (!epRes) return;
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const namespace = svc.ref.namespace;
    // With a hub, one list (and watch) of the namespace's pods serves every Service in it.
    const items = hub
      ? (await hub.objects(podRes, namespace, ctx.signal)).filter((p) => Object.entries(selector).every(([k, v]) => p.metadata.labels?.[k] === v))
      : (await listObjects(this.client, { res: podRes, namespace, labelSelector: selectorString({ matchLabels: selector }) }, ctx.signal)).items;
    if (!items.some(podReady)) return;
    let said = false;
    const check: WatchCheck<true> = (objects) => {
      const ep = objects.get(objectKey(svc.ref));
      const subsets = (ep?.subsets ?? []) as Array<{ addresses?: unknown[] }>;
      if (subsets.some((s) => (s.addresses?.length ?? 0) > 0)) {
        this.report(ctx, { resource: svc.ref, message: 'endpoints ready', done: true });
        return true;
      }
      if (!said) this.report(ctx, { resource: svc.ref, message: 'waiting for endpoints' });
      said = true;
      return undefined;
    };
    const target = { res: epRes, namespace, name: svc.ref.name };
    if (hub) await hub.until(target, { signal: ctx.signal }, check);
    else await watchUntil(this.client, target, { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds }, check);
  }

  /** Watches until the object (with this uid, when given) no longer exists; with `hub`, on the shared watch of its kind. */
  protected async waitGone(ctx: DriverContext, res: ApiResource, ref: ResourceRef, uid: string | undefined, hub?: WatchHub): Promise<void> {
    const check: WatchCheck<true> = (objects) => {
      const obj = objects.get(objectKey(ref));
      return !obj || (uid !== undefined && obj.metadata.uid !== uid) ? true : undefined;
    };
    const target = { res, namespace: ref.namespace, name: ref.name };
    if (hub) await hub.until(target, { signal: ctx.signal }, check);
    else await watchUntil(this.client, target, { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds }, check);
  }

  /**
   * Watches a workload's pods until exactly `want` exist, all ready, none of
   * them one of `replaced` (by uid) and none terminating: scale-in is done
   * when the surplus pods are gone, a heal when the replacements are ready.
   */
  protected async waitPods(ctx: DriverContext, ref: ResourceRef, workload: KubeObject, want: number, replaced: ReadonlySet<string>): Promise<void> {
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

  /**
   * The uids that control a workload's pods: its own, or for a Deployment those of its ReplicaSets
   * (with `listed`, from the namespace's list of ReplicaSets).
   */
  protected async ownerUids(ctx: DriverContext, workload: KubeObject, listed?: (res: ApiResource, namespace: string | undefined) => Promise<KubeObject[]>): Promise<Set<string>> {
    const uid = workload.metadata.uid as string;
    if (workload.kind !== 'Deployment') return new Set([uid]);
    const rsRes = await this.discovery.resolve('apps/v1', 'ReplicaSet', ctx.signal);
    const selector = selectorString((workload.spec as { selector?: unknown } | undefined)?.selector);
    const items = listed
      ? await listed(rsRes, workload.metadata.namespace)
      : (await listObjects(this.client, { res: rsRes, namespace: workload.metadata.namespace, labelSelector: selector }, ctx.signal)).items;
    return new Set(items.filter((rs) => controlledBy(rs, new Set([uid]))).map((rs) => rs.metadata.uid as string));
  }

  /** The Machine kind of the cluster, in the owner's version when it is a core Cluster API kind. */
  protected async machineResource(ctx: DriverContext, owner: KubeObject): Promise<ApiResource | undefined> {
    const version = owner.apiVersion.startsWith(`${MACHINE_GROUP}/`) ? owner.apiVersion : await this.discovery.preferredVersion(MACHINE_GROUP, ctx.signal);
    return version ? this.discovery.tryResolve(version, 'Machine', ctx.signal) : undefined;
  }

  /** The live (not deleting) Machines that `owner` owns, oldest first; none when the cluster serves no Machines. */
  protected async machinesOf(ctx: DriverContext, owner: KubeObject): Promise<{ res?: ApiResource; items: KubeObject[]; setUids: Set<string> }> {
    const res = await this.machineResource(ctx, owner);
    if (!res) return { items: [], setUids: new Set() };
    const setRes = await this.discovery.tryResolve(res.apiVersion, 'MachineSet', ctx.signal);
    const sets = setRes ? (await listObjects(this.client, { res: setRes, namespace: owner.metadata.namespace }, ctx.signal)).items : [];
    const setUids = ownedSetUids(owner, sets);
    const { items } = await listObjects(this.client, { res, namespace: owner.metadata.namespace }, ctx.signal);
    return { res, setUids, items: items.filter((m) => machineOf(m, owner, setUids) && !m.metadata.deletionTimestamp).sort(byAge) };
  }

  /** Whether a scalable custom resource stands for Machines (a MachineDeployment, a machine-based control plane). */
  protected async ownsMachines(ctx: DriverContext, owner: KubeObject): Promise<boolean> {
    if (owner.apiVersion.startsWith(`${MACHINE_GROUP}/`) && ['MachineDeployment', 'MachineSet'].includes(owner.kind)) return true;
    return (await this.machinesOf(ctx, owner)).items.length > 0;
  }

  /**
   * Watches the Machines of `owner` until exactly `want` exist, all ready
   * (their own readiness: phase Running/Provisioned, or the operator's rule
   * for Machine), none of them one of `replaced` and none being deleted.
   */
  protected async waitMachines(
    ctx: DriverContext,
    ref: ResourceRef,
    owner: KubeObject,
    want: number,
    replaced: ReadonlySet<string>,
    rules: ReadinessOverrides | undefined,
  ): Promise<void> {
    const { res } = await this.machinesOf(ctx, owner);
    if (!res) return;
    const setRes = await this.discovery.tryResolve(res.apiVersion, 'MachineSet', ctx.signal);
    let setUids = new Set<string>();
    const refreshSets = async () => {
      const sets = setRes ? (await listObjects(this.client, { res: setRes, namespace: owner.metadata.namespace }, ctx.signal)).items : [];
      setUids = ownedSetUids(owner, sets);
    };
    await refreshSets();
    let said = '';
    await watchUntil(this.client, { res, namespace: owner.metadata.namespace }, { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds }, (objects) => {
      const machines = [...objects.values()].filter((m) => machineOf(m, owner, setUids));
      const old = machines.filter((m) => replaced.has(m.metadata.uid as string)).length;
      const deleting = machines.filter((m) => m.metadata.deletionTimestamp).length;
      const ready = machines.filter((m) => !m.metadata.deletionTimestamp && !replaced.has(m.metadata.uid as string) && assessReadiness(m, rules, kindFacts(res)).ready).length;
      if (machines.length === want && ready === want) {
        this.report(ctx, { resource: ref, message: `${want}/${want} machines ready`, done: true });
        return true;
      }
      const extra = [old ? `${old} being replaced` : '', deleting ? `${deleting} being deleted` : ''].filter(Boolean).join(', ');
      const message = `waiting for machines: ${ready}/${want} ready${extra ? ` (${extra})` : ''}`;
      if (message !== said) this.report(ctx, { resource: ref, message });
      said = message;
      return undefined;
    });
  }

  protected report(ctx: DriverContext, event: DriverEvent): void {
    ctx.report(event);
  }
}
