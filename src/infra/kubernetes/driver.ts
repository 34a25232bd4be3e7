/**
 * The Kubernetes infra-driver: creates, scales, heals, changes and removes
 * a CNF's objects of any kind the cluster serves, and waits — by watching —
 * until the cluster has done what was asked. Every step is recorded in the
 * journal before it is taken, and every method can run again after a
 * failure: an object labelled with the instance already is updated, one
 * already gone counts as deleted.
 */
import { NotFoundError, UsageError, VnfmError } from '../../errors.js';
import type { DriverContext, ResourceRef, Vnfc } from '../driver.js';
import { defaultRetryPolicy, KubeClient } from './client.js';
import { describeRef, objectPath, type ApiResource } from './discovery.js';
import type { AwaitInput, HealInput, KubeObject, KubernetesInfraDriver, RemoveInput, ScaleInput, VduTarget } from './driver-contract.js';
import type { KubeAccess } from './kube-api.js';
import { createKubeTransport } from './kube-wire.js';
import { checkOwnership, controlledBy, prepareObject, refKey, selectorString } from './objects.js';
import { deletesDependentsAtOnce, forEachLimited, isClusterApiCluster, removalPhases, removalPropagation } from './order.js';
import { listObjects } from './watch.js';
import { LiveReader, type DescribeInput, type LiveObject } from './describe.js';
import { checkRelease, deleteOptions, FIELD_MANAGER, type Live, MAX_WRITE_ATTEMPTS, ownsPods, POD_OWNERS, stoppedWaiting } from './driver-support.js';
import type { KubernetesDriverOptions } from './driver-base.js';
import type { Deleting } from './driver-deploy.js';
import { AdoptingDriver } from './driver-adopt.js';
import { WatchHub } from './shared-watch.js';

export type { KubernetesDriverOptions } from './driver-base.js';

/** The objects of a kind in a namespace, listed once for a whole call. */
type Lister = (res: ApiResource, namespace: string | undefined) => Promise<KubeObject[]>;
export { reviewAnswer, statefulSetClaim } from './driver-support.js';

/** The driver, plus `close()` to drop its idle keep-alive connections. */
export interface KubernetesDriver extends KubernetesInfraDriver {
  close(): void;
}

export function createKubernetesDriver(access: KubeAccess, opts: KubernetesDriverOptions = {}): KubernetesDriver {
  const client = new KubeClient(opts.transport ?? createKubeTransport(access), access.server, { ...defaultRetryPolicy, ...opts.retry });
  return new Driver(client, opts);
}

class Driver extends AdoptingDriver implements KubernetesDriver {
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
    if (!done)
      throw new VnfmError(`cannot scale ${describeRef(ref)}: it kept changing while vnfm wrote it`, { hint: 'another client is changing it: stop it, then retry the operation' });
    ctx.journal.record({ action: 'scale', resource: ref, state: 'done', detail: `replicas=${replicas}` });
    this.report(ctx, { resource: ref, message: `scaling to ${replicas} replicas` });
    const workload = await this.waitReady(ctx, { ref, res }, input.readiness);
    if (ownsPods(res)) await this.waitPods(ctx, ref, workload, replicas, new Set());
    else if (await this.ownsMachines(ctx, workload)) await this.waitMachines(ctx, ref, workload, replicas, new Set(), input.readiness);
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
      if (!workload)
        throw new NotFoundError(`cannot heal: ${describeRef(owner)} does not exist any more`, { hint: 'heal the whole VNF by retrying its instantiation, or terminate it' });
      if (input.release) checkRelease(workload, owner, input.release);
      else checkOwnership(workload, owner, input.instanceId);
      if (!ownsPods(res)) {
        await this.healMachines(ctx, owner, workload, vnfcs, input);
        await this.waitReady(ctx, { ref: owner, res }, input.readiness);
        return;
      }
      const replaced = new Set<string>();
      // A pod the workload controls is the instance's even unlabelled: an adopted workload's template has no instance label.
      const owners = await this.ownerUids(ctx, workload);
      for (const vnfc of vnfcs) {
        const uid = await this.deletePod(
          ctx,
          podRes,
          { apiVersion: 'v1', kind: 'Pod', name: vnfc.resourceId, namespace: owner.namespace },
          input.release ? undefined : input.instanceId,
          owners,
        );
        if (uid) replaced.add(uid);
      }
      // A DaemonSet runs one pod on each node it has chosen. Its status is
      // no guide here: right after the deletion it still counts the deleted
      // pods as ready, until its controller catches up.
      const want =
        workload.kind === 'DaemonSet'
          ? Number((workload.status as { desiredNumberScheduled?: number } | undefined)?.desiredNumberScheduled ?? 0)
          : ((workload.spec as { replicas?: number } | undefined)?.replicas ?? 1);
      if (workload.kind !== 'Job') await this.waitPods(ctx, owner, workload, want, replaced);
      await this.waitReady(ctx, { ref: owner, res }, input.readiness);
    });
  }

  /**
   * Deletes the Machines of a Cluster API VDU and waits until its owner has
   * replaced them: as many Machines as its replicas, none of the deleted
   * ones, all ready.
   */
  private async healMachines(ctx: DriverContext, owner: ResourceRef, workload: KubeObject, vnfcs: Vnfc[], input: HealInput): Promise<void> {
    const machineRes = await this.machineResource(ctx, workload);
    if (!machineRes) {
      throw new NotFoundError(`cannot heal the VNFCs of ${describeRef(owner)}: the cluster serves no Cluster API Machines`, {
        hint: 'heal needs the Cluster API CRDs (the capi-mgmt sample installs them)',
      });
    }
    const replaced = new Set<string>();
    for (const vnfc of vnfcs) {
      const ref: ResourceRef = { apiVersion: machineRes.apiVersion, kind: 'Machine', name: vnfc.resourceId, namespace: owner.namespace };
      const machine = await this.read(ctx, machineRes, ref);
      if (!machine) continue;
      const uid = machine.metadata.uid as string;
      ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
      await this.client.call(
        { method: 'DELETE', path: objectPath(machineRes, ref), body: deleteOptions(undefined, uid, 'Background') },
        { what: `delete ${describeRef(ref)}`, signal: ctx.signal, accept: [404, 409] },
      );
      ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
      this.report(ctx, { resource: ref, message: 'deleted, waiting for its replacement' });
      replaced.add(uid);
    }
    const want = (workload.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    await this.waitMachines(ctx, owner, workload, want, replaced, input.readiness);
  }

  /** Deletes one pod of the instance (journaled); returns its uid, or undefined if it was already gone. */
  /** `instanceId` undefined: a pod of a Helm release's workload, whose ownership was checked on the workload. */
  /** `owners`: the uids of the checked workload (and its ReplicaSets); a pod they control needs no label. */
  private async deletePod(ctx: DriverContext, podRes: ApiResource, ref: ResourceRef, instanceId: string | undefined, owners?: ReadonlySet<string>): Promise<string | undefined> {
    const pod = await this.read(ctx, podRes, ref);
    if (!pod) return undefined;
    if (instanceId !== undefined && !(owners && controlledBy(pod, owners))) checkOwnership(pod, ref, instanceId);
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

  async remove(ctx: DriverContext, input: RemoveInput): Promise<void> {
    // One list and watch per kind and namespace tells what exists and when it is gone, not a read and a watch per object.
    const hub = new WatchHub(this.client, this.opts.watchTimeoutSeconds);
    try {
      for (const phase of removalPhases(
        input.resources,
        (r) => r.kind,
        (r) => isClusterApiCluster(r.apiVersion, r.kind),
      )) {
        // What exists is read first (one list per kind and namespace); then every delete of the phase is sent,
        // started in removal order `limit` at a time, before anything is awaited; then all are awaited at once,
        // which costs no request (the shared watches follow them).
        // A workload's dependents are deleted right after it (deletesDependentsAtOnce): the pods start going at once,
        // and the workload, deleted in the foreground, still outlives them.
        const found = await forEachLimited(phase, this.limit, (ref) => this.findDeletable(ctx, ref, input.instanceId, hub));
        const deleting = found.filter((d): d is Deleting => d !== undefined);
        await forEachLimited(deleting, this.limit, async (d) => {
          await this.sendDelete(ctx, d, input.gracePeriodSeconds);
          await this.deleteDependents(ctx, d, hub);
        });
        await forEachLimited(deleting, deleting.length, (d) => this.awaitDeleted(ctx, d, input.gracePeriodSeconds, hub));
      }
    } finally {
      this.closeHub(hub);
    }
  }

  /**
   * Deletes what a workload being deleted owns, level by level (a
   * Deployment's ReplicaSets, then the pods they control), each level once
   * its owners are marked deleted, so that no controller makes them again.
   * Pods are deleted as the garbage collector would (their own grace
   * period); ReplicaSets in the foreground, outliving their pods. Only
   * workloads deleted in the foreground: they outlive all of it.
   */
  private async deleteDependents(ctx: DriverContext, d: Deleting, hub: WatchHub): Promise<void> {
    if (!deletesDependentsAtOnce(d.res.group, d.ref.kind) || !d.uid || removalPropagation(d.ref.apiVersion, d.ref.kind) !== 'Foreground') return;
    const namespace = d.ref.namespace;
    let owners = new Set([d.uid]);
    if (d.ref.kind === 'Deployment') {
      const rsRes = await this.discovery.resolve('apps/v1', 'ReplicaSet', ctx.signal);
      const sets = (await hub.objects(rsRes, namespace, ctx.signal)).filter((rs) => controlledBy(rs, owners));
      await forEachLimited(sets, this.limit, (rs) => this.deleteDependent(ctx, rsRes, rs, 'Foreground', d.ref));
      owners = new Set(sets.map((rs) => rs.metadata.uid as string));
    }
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const pods = (await hub.objects(podRes, namespace, ctx.signal)).filter((p) => controlledBy(p, owners));
    await forEachLimited(pods, this.limit, (p) => this.deleteDependent(ctx, podRes, p, 'Background', d.ref));
  }

  /** Deletes one object a workload being deleted owns (not one already being deleted, nor one replaced since: the uid is a precondition). */
  private async deleteDependent(ctx: DriverContext, res: ApiResource, obj: KubeObject, propagation: 'Foreground' | 'Background', owner: ResourceRef): Promise<void> {
    if (obj.metadata.deletionTimestamp) return;
    const ref = { name: obj.metadata.name, namespace: obj.metadata.namespace };
    await this.client.call(
      { method: 'DELETE', path: objectPath(res, ref), body: deleteOptions(undefined, obj.metadata.uid as string | undefined, propagation) },
      { what: `delete ${res.kind} ${obj.metadata.name} (of ${describeRef(owner)}, being deleted)`, signal: ctx.signal, accept: [404, 409] },
    );
  }

  describe(input: DescribeInput, signal: AbortSignal = new AbortController().signal): Promise<LiveObject[]> {
    return new LiveReader(this.client, this.discovery, signal, this.limit).describe(input);
  }

  async listVnfcs(ctx: DriverContext, targets: VduTarget[]): Promise<Vnfc[]> {
    // Several VDUs: one list of each kind per namespace (workloads, their ReplicaSets, pods) instead of a read and two lists per VDU.
    const lists = new Map<string, Promise<KubeObject[]>>();
    const listed: Lister = (res, namespace) => {
      const key = `${res.group}/${res.version}/${res.plural}|${namespace ?? ''}`;
      let items = lists.get(key);
      if (!items) {
        items = listObjects(this.client, { res, namespace }, ctx.signal, this.seenVersion(res)).then((l) => l.items);
        lists.set(key, items);
      }
      return items;
    };
    const perTarget = await forEachLimited(targets, this.limit, async ({ vduId, resource }) => {
      const res = await this.discovery.resolve(resource.apiVersion, resource.kind, ctx.signal);
      const batched = targets.length > 1 && ownsPods(res) && (!res.namespaced || resource.namespace !== undefined);
      const workload = batched
        ? (await listed(res, res.namespaced ? resource.namespace : undefined)).find((o) => o.metadata.name === resource.name)
        : await this.read(ctx, res, resource);
      if (!workload) return [];
      if (!ownsPods(res)) {
        const { items } = await this.machinesOf(ctx, workload);
        return items.map((m): Vnfc => ({
          id: `${vduId}-${m.metadata.name}`,
          vduId,
          resourceId: m.metadata.name,
          vimLevelResourceType: resource.kind,
          owner: resource,
          state: 'STARTED',
          metadata: {
            kind: m.kind,
            apiVersion: m.apiVersion,
            namespace: m.metadata.namespace,
            phase: (m.status as { phase?: string } | undefined)?.phase,
            nodeName: (m.status as { nodeRef?: { name?: string } } | undefined)?.nodeRef?.name,
            providerID: (m.spec as { providerID?: string } | undefined)?.providerID,
            version: (m.spec as { version?: string } | undefined)?.version,
          },
        }));
      }
      const pods = await this.podsOf(ctx, workload, batched ? listed : undefined);
      return pods.map((pod): Vnfc => ({
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
      }));
    });
    return perTarget.flat();
  }

  /**
   * The live (not terminating) pods a workload controls, oldest first; a bare Pod is its own.
   * With `listed`, from the namespace's list of pods (its controller picks only pods its selector matches).
   */
  private async podsOf(ctx: DriverContext, workload: KubeObject, listed?: Lister): Promise<KubeObject[]> {
    if (workload.kind === 'Pod') return [workload];
    const selector = selectorString((workload.spec as { selector?: unknown } | undefined)?.selector);
    if (selector === undefined) return [];
    const podRes = await this.discovery.resolve('v1', 'Pod', ctx.signal);
    const owners = await this.ownerUids(ctx, workload, listed);
    const items = listed
      ? await listed(podRes, workload.metadata.namespace)
      : (await listObjects(this.client, { res: podRes, namespace: workload.metadata.namespace, labelSelector: selector }, ctx.signal, this.seenVersion(podRes))).items;
    return items
      .filter((p) => controlledBy(p, owners) && !p.metadata.deletionTimestamp)
      .sort((a, b) => String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) || a.metadata.name.localeCompare(b.metadata.name));
  }

  async awaitReady(ctx: DriverContext, input: AwaitInput): Promise<ResourceRef[]> {
    const live = await forEachLimited(input.resources, this.limit, async (given): Promise<Pick<Live, 'ref' | 'res'>> => {
      const res = await this.discovery.resolve(given.apiVersion, given.kind, ctx.signal);
      const ref: ResourceRef = { apiVersion: given.apiVersion, kind: given.kind, name: given.name, ...(res.namespaced ? { namespace: given.namespace ?? input.namespace } : {}) };
      return { ref, res };
    });
    const awaited = new Map(live.map((l) => [refKey(l.ref), { ref: l.ref } as { ref: ResourceRef; said?: string }]));
    const tracked: DriverContext = {
      ...ctx,
      report: (event) => {
        const entry = event.resource && awaited.get(refKey(event.resource));
        if (entry) entry.said = event.message;
        ctx.report(event);
      },
    };
    // One list and watch per kind and namespace for all the objects, not a watch each.
    const hub = new WatchHub(this.client, this.opts.watchTimeoutSeconds);
    try {
      const ready = await forEachLimited(live, this.limit, async (l) => {
        const obj = await this.waitReady(tracked, l, input.readiness, hub);
        awaited.delete(refKey(l.ref));
        return { ...l, obj };
      });
      // As after a deploy: the VDUs' pods settle (no surplus, none terminating), then Services' endpoints.
      for (const t of input.vdus ?? []) {
        const l = ready.find((r) => refKey(r.ref) === refKey({ ...t.resource, namespace: t.resource.namespace ?? input.namespace }));
        if (!l || !ownsPods(l.res) || !POD_OWNERS.has(l.ref.kind)) continue;
        const want = (l.obj.spec as { replicas?: number } | undefined)?.replicas;
        if (typeof want === 'number') await this.waitPods(tracked, l.ref, l.obj, want, new Set());
      }
      await forEachLimited(
        ready.filter((l) => l.ref.kind === 'Service' && l.res.group === ''),
        this.limit,
        (l) => this.waitEndpoints(ctx, l, hub),
      );
    } catch (err) {
      throw ctx.signal.aborted ? stoppedWaiting(ctx.signal, [...awaited.values()]) : err;
    } finally {
      this.closeHub(hub);
    }
    return live.map((l) => l.ref);
  }

  async awaitGone(ctx: DriverContext, input: { resources: ResourceRef[] }): Promise<void> {
    const hub = new WatchHub(this.client, this.opts.watchTimeoutSeconds);
    try {
      await forEachLimited(input.resources, this.limit, async (ref) => {
        const res = await this.discovery.tryResolve(ref.apiVersion, ref.kind, ctx.signal);
        if (res && (await hub.current({ res, namespace: ref.namespace, name: ref.name }, ctx.signal))) {
          this.report(ctx, { resource: ref, message: 'deleting' });
          await this.waitGone(ctx, res, ref, undefined, hub);
        }
        this.report(ctx, { resource: ref, message: 'deleted', done: true });
      });
    } finally {
      this.closeHub(hub);
    }
  }
}
