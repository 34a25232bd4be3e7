/**
 * The Kubernetes driver's preflight, deploy and change of package: each
 * object planned (its kind served, its namespace there, its definition in
 * the package), then created or applied rank by rank and waited for.
 */
import { NotFoundError, UsageError, ValidationError, VimCheckError } from '../../errors.js';
import type { DriverContext, ResourceRef } from '../driver.js';
import { collectionPath, describeRef, objectPath, splitApiVersion, type ApiResource } from './discovery.js';
import { INSTANCE_LABEL, type ChangePackageInput, type CheckInput, type DeployInput, type KubeObject, type OperationExtras } from './driver-contract.js';
import { checkDuplicates, prepareObject, refKey, refOf, type PrepareInput } from './objects.js';
import { forEachLimited, groupByRank, removalGroups, removalPropagation } from './order.js';
import { isBuiltinGroup, kindsDefinedBy, sourceKey } from './package-kinds.js';
import type { ReadinessOverrides } from './readiness-rules.js';
import { listObjects } from './watch.js';
import { setMaxListeners } from 'node:events';
import {
  claimTemplates,
  deleteOptions,
  firstFailure,
  GATE_KINDS,
  isCreateOnly,
  type Live,
  ownsPods,
  type Planned,
  POD_OWNERS,
  preflightError,
  rejectedFrom,
  statefulSetClaim,
  stoppedWaiting,
} from './driver-support.js';
import { withNotReadyAccount } from './not-ready.js';
import { KubeDriverBase } from './driver-base.js';
import { WatchHub } from './shared-watch.js';

/** An object of the instance whose delete was sent: what waiting for it to be gone needs. */
export interface Deleting {
  ref: ResourceRef;
  res: ApiResource;
  /** The uid the delete was for: an object of the same name with another uid is a new one, and this one is gone. */
  uid: string | undefined;
  existing: KubeObject;
}

/** Preflight, deploy and change of package: the plan of a package's objects, their rollout rank by rank, and removing what a new package drops. */
export abstract class DeployingDriver extends KubeDriverBase {
  async check(input: CheckInput, signal: AbortSignal = new AbortController().signal): Promise<void> {
    // Nothing is written, so there is nothing to journal or report.
    const ctx: DriverContext = { journal: { record: () => undefined, steps: () => [] }, report: () => undefined, signal };
    try {
      const plan = await this.plan(ctx, input.objects, input);
      const { missing, terminating } = await this.namespacesOf(ctx, plan);
      if (terminating.length > 0) {
        throw new VimCheckError(`namespace ${terminating.map((n) => `"${n}"`).join(', ')} on the cluster at ${this.client.server} is being deleted: nothing can be created in it`, {
          hint: 'wait until it is gone (kubectl get namespace), or instantiate into another one (additionalParams.namespace)',
        });
      }
      if (missing.length > 0 && !input.createNamespace) {
        throw new VimCheckError(`namespace ${missing.map((n) => `"${n}"`).join(', ')} does not exist on the cluster at ${this.client.server}`, {
          hint: `create it first (kubectl create namespace ${missing[0]}), give another one in additionalParams.namespace, or let vnfm create it: "vnfm_create_namespace": true in additionalParams (vnf-instantiate --create-namespace)`,
        });
      }
    } catch (err) {
      throw preflightError(err, signal, this.client.server);
    }
  }

  /**
   * The namespaces the plan's objects go to that the cluster lacks or is
   * deleting, leaving out those the package creates itself. A namespace the
   * VIM's user may not read (403) is left to the writes to find out.
   */
  protected async namespacesOf(ctx: DriverContext, plan: Planned[]): Promise<{ missing: string[]; terminating: string[] }> {
    const made = new Set(plan.filter((p) => p.obj.kind === 'Namespace' && splitApiVersion(p.obj.apiVersion).group === '').map((p) => p.ref.name));
    const wanted = [...new Set(plan.map((p) => p.ref.namespace).filter((ns): ns is string => ns !== undefined && !made.has(ns)))];
    const missing: string[] = [];
    const terminating: string[] = [];
    if (wanted.length === 0) return { missing, terminating };
    const res = await this.discovery.resolve('v1', 'Namespace', ctx.signal);
    await forEachLimited(wanted, this.limit, async (name) => {
      const got = await this.client.call({ method: 'GET', path: objectPath(res, { name }) }, { what: `read namespace ${name}`, signal: ctx.signal, accept: [403, 404] });
      if (got.status === 404) missing.push(name);
      else if (got.status < 300 && (got.body as KubeObject).metadata?.deletionTimestamp) terminating.push(name);
    });
    return { missing: missing.sort(), terminating: terminating.sort() };
  }

  /** Creates the namespaces the plan needs that the cluster lacks (createNamespace); one created meanwhile is fine. */
  protected async createNamespaces(ctx: DriverContext, plan: Planned[]): Promise<void> {
    const { missing } = await this.namespacesOf(ctx, plan);
    if (missing.length === 0) return;
    const res = await this.discovery.resolve('v1', 'Namespace', ctx.signal);
    for (const name of missing) {
      const ref: ResourceRef = { apiVersion: 'v1', kind: 'Namespace', name };
      await this.client.call(
        {
          method: 'POST',
          path: collectionPath(res, undefined),
          body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'vnfm' } } },
        },
        { what: `create namespace ${name}`, signal: ctx.signal, accept: [409] },
      );
      this.report(ctx, { resource: ref, message: 'created (vnfm_create_namespace)', done: true });
    }
  }

  async deploy(ctx: DriverContext, input: DeployInput): Promise<ResourceRef[]> {
    const plan = await this.plan(ctx, input.objects, input);
    if (input.createNamespace) await this.createNamespaces(ctx, plan);
    const created = await this.rollOut(ctx, plan, (p) => this.createOrUpdate(ctx, p.obj, input.instanceId).catch((err) => rejectedFrom(err, p)), input.readiness);
    // A Cluster API VDU's Machines are its VNFCs: the instance records them only once they all exist and are ready.
    await forEachLimited(input.vdus ?? [], this.limit, (t) => this.settleMachines(ctx, t.resource, input.readiness));
    return created;
  }

  async changePackage(ctx: DriverContext, input: ChangePackageInput): Promise<ResourceRef[]> {
    const plan = await this.plan(ctx, input.objects, input);
    const wanted = new Set(plan.map((p) => refKey(p.ref)));
    const dropped = input.current.filter((ref) => !wanted.has(refKey(ref)));
    const created = await this.rollOut(
      ctx,
      plan,
      (p) => this.apply(ctx, p.obj, input.instanceId).catch((err) => rejectedFrom(err, p)),
      input.readiness,
      async () => {
        for (const group of removalGroups(dropped, (r) => r.kind)) {
          await forEachLimited(group, this.limit, (ref) => this.removeOne(ctx, ref, input.instanceId, undefined));
        }
      },
    );
    await forEachLimited(input.vdus ?? [], this.limit, (t) => this.settleMachines(ctx, t.resource, input.readiness));
    return created;
  }

  /**
   * A Cluster API VDU whose machine template changed reports Ready as soon
   * as its new Machines are, while the old ones are still being deleted:
   * the change is done when only as many Machines as its replicas remain.
   */
  protected async settleMachines(ctx: DriverContext, ref: ResourceRef, rules: ReadinessOverrides | undefined): Promise<void> {
    const res = await this.discovery.resolve(ref.apiVersion, ref.kind, ctx.signal);
    if (ownsPods(res)) return;
    const workload = await this.read(ctx, res, ref);
    if (!workload || !(await this.ownsMachines(ctx, workload))) return;
    const want = (workload.spec as { replicas?: number } | undefined)?.replicas ?? 1;
    await this.waitMachines(ctx, ref, workload, want, new Set(), rules);
  }

  /**
   * Writes the plan rank by rank (each rank in parallel). Namespaces and
   * CRDs are awaited before the next rank; everything else is awaited in the
   * background while later ranks are written, and all of it before return.
   */
  protected async rollOut(
    ctx: DriverContext,
    plan: Planned[],
    write: (p: Planned) => Promise<Live>,
    rules: ReadinessOverrides | undefined,
    afterWrites?: () => Promise<void>,
  ): Promise<ResourceRef[]> {
    const waits = new AbortController();
    // Every watch of the operation listens on this signal; dozens at once are expected.
    setMaxListeners(0, waits.signal);
    const stop = () => waits.abort(ctx.signal.reason);
    ctx.signal.addEventListener('abort', stop, { once: true });
    // What is still awaited and what it last said, so a timeout can name it.
    const awaited = new Map<string, { ref: ResourceRef; said?: string }>();
    const tracked: DriverContext = {
      ...ctx,
      report: (event) => {
        const entry = event.resource && awaited.get(refKey(event.resource));
        if (entry) entry.said = event.message;
        ctx.report(event);
      },
    };
    const waitCtx: DriverContext = { ...tracked, signal: waits.signal };
    // One watch per kind and namespace for every object awaited, not one per object.
    const hub = new WatchHub(this.client, this.opts.watchTimeoutSeconds);
    const awaitReady = (c: DriverContext, l: Live) => {
      awaited.set(refKey(l.ref), { ref: l.ref });
      return this.waitReady(c, l, rules, hub).then((obj) => {
        awaited.delete(refKey(l.ref));
        return obj;
      });
    };
    const pending: Promise<unknown>[] = [];
    const created: ResourceRef[] = [];
    const services: Live[] = [];
    try {
      for (const ranked of groupByRank(plan, (p) => p.obj.kind)) {
        await forEachLimited(
          ranked.filter((p) => p.createOnly),
          this.limit,
          (p) => this.submit(ctx, p),
        );
        const group = ranked.filter((p) => !p.createOnly);
        if (group.length === 0) continue;
        const live = await forEachLimited(group, this.limit, write);
        created.push(...live.map((l) => l.ref));
        services.push(...live.filter((l) => l.ref.kind === 'Service' && l.res.group === ''));
        if (GATE_KINDS.has(group[0]!.obj.kind)) {
          await Promise.all(live.map((l) => awaitReady(tracked, l)));
          if (group[0]!.obj.kind === 'CustomResourceDefinition') this.discovery.invalidate();
        } else {
          for (const l of live) {
            const p = awaitReady(waitCtx, l);
            p.catch(() => undefined);
            pending.push(p);
          }
        }
      }
      if (afterWrites) await afterWrites();
      await firstFailure(pending, waits);
      // Only now are the pods behind each Service ready, so only now can its endpoints be expected.
      await forEachLimited(services, this.limit, (l) => this.waitEndpoints(ctx, l, hub));
    } catch (err) {
      if (!ctx.signal.aborted) throw err;
      // A timeout names what was awaited, and what of it is not ready: its pods and their last warnings.
      const left = [...awaited.values()];
      const namespace = left.find((a) => a.ref.namespace)?.ref.namespace ?? 'default';
      throw await withNotReadyAccount(stoppedWaiting(ctx.signal, left), left, { client: this.client, discovery: this.discovery, limit: this.limit, namespace });
    } finally {
      this.closeHub(hub);
      waits.abort();
      ctx.signal.removeEventListener('abort', stop);
    }
    return created;
  }

  /**
   * Prepares every object, failing before anything is written if a kind is
   * neither served nor defined by one of the package's CRDs (all such kinds
   * named at once), if an object uses a version its package CRD does not
   * serve, or if a VDU maps to an object that cannot be scaled.
   */
  protected async plan(ctx: DriverContext, objects: KubeObject[], input: PrepareInput & OperationExtras): Promise<Planned[]> {
    // Kinds defined by the package's own CRDs do not exist yet; their CRDs say their scope and versions.
    const defined = kindsDefinedBy(objects);
    const sources = input.sources ?? {};
    const missing: Array<{ o: KubeObject; file?: string }> = [];
    const scalable = new Map<string, boolean>();
    const planned = await forEachLimited(objects, this.limit, async (o): Promise<Planned | undefined> => {
      if (!o || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string') {
        throw new UsageError(`a manifest object lacks apiVersion, kind or metadata.name: ${JSON.stringify(o).slice(0, 120)}`, {
          hint: 'every object in lcm-kubernetes-def-files needs apiVersion, kind and metadata.name',
        });
      }
      const named = typeof o.metadata?.name === 'string';
      const file = sources[sourceKey(o)];
      const { group, version } = splitApiVersion(o.apiVersion);
      const local = defined.get(`${group}/${o.kind}`);
      const unnamed = () =>
        new UsageError(`a manifest object lacks metadata.name: ${JSON.stringify(o).slice(0, 120)}`, {
          hint: 'every object in lcm-kubernetes-def-files needs metadata.name, except those of kinds the cluster serves for create only (TokenReview, the access reviews)',
        });
      if (local && !named) throw unnamed();
      let namespaced: boolean;
      let templateLabels = false;
      if (local) {
        const v = local.versions.get(version);
        if (!v?.served) {
          const versions = [...local.versions.entries()].filter(([, d]) => d.served).map(([n]) => n);
          const storage = [...local.versions.entries()].find(([, d]) => d.storage)?.[0] ?? versions[0];
          throw new ValidationError(
            file ?? 'the package',
            undefined,
            `${o.kind} ${o.metadata.name} uses ${o.apiVersion}, which the package's CustomResourceDefinition ${local.crdName} does not serve (it serves ${versions.join(', ') || 'no version'})`,
            {
              hint: `write it as apiVersion: ${group}/${storage}`,
            },
          );
        }
        namespaced = local.namespaced;
        templateLabels = v.templateLabels;
        scalable.set(`${group}/${o.kind}`, v.scale);
      } else {
        let res: ApiResource | undefined;
        try {
          res = await this.discovery.resolve(o.apiVersion, o.kind, ctx.signal);
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err;
          if (isBuiltinGroup(group)) throw new NotFoundError(`${err.message}${file ? ` (${o.kind} ${o.metadata.name} in ${file})` : ''}`, { hint: err.hint });
          missing.push({ o, file });
          return undefined;
        }
        if (!isCreateOnly(res) && !named) throw unnamed();
        if (isCreateOnly(res)) {
          // Sent as written: the API server refuses a review whose metadata holds more than its namespace (no instance label).
          const obj = structuredClone({ ...o, metadata: o.metadata ?? {} }) as KubeObject;
          if (res.namespaced) obj.metadata.namespace = obj.metadata.namespace || input.namespace;
          else delete obj.metadata.namespace;
          return {
            obj,
            ref: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '(unnamed)', ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) },
            createOnly: true,
            ...(file ? { file } : {}),
          };
        }
        namespaced = res.namespaced;
        scalable.set(`${group}/${o.kind}`, res.subresources.has('scale'));
        const spec = o.spec as { template?: unknown } | undefined;
        if (!isBuiltinGroup(group) && spec?.template !== undefined) templateLabels = await this.declaresTemplateLabels(ctx, res);
      }
      const obj = prepareObject(o, namespaced, input, { templateLabels });
      return { obj, ref: refOf(obj), ...(file ? { file } : {}) };
    });
    // Named in the package's order, not in the order the cluster's answers came.
    if (missing.length > 0)
      throw await this.missingDefinitions(
        ctx,
        missing.sort((a, b) => objects.indexOf(a.o) - objects.indexOf(b.o)),
      );
    const plan = planned.filter((p): p is Planned => p !== undefined);
    checkDuplicates(plan.filter((p) => !p.createOnly).map((p) => p.obj));
    for (const { vduId, resource } of input.vdus ?? []) {
      const { group } = splitApiVersion(resource.apiVersion);
      if (resource.kind === 'Pod' || (isBuiltinGroup(group) && POD_OWNERS.has(resource.kind))) continue;
      if (scalable.get(`${group}/${resource.kind}`)) continue;
      const file = sources[sourceKey({ ...resource, metadata: { name: resource.name } })];
      throw new ValidationError(
        file ?? 'the package',
        undefined,
        `VDU ${vduId} maps to ${resource.kind} ${resource.name}, whose kind has no /scale subresource: vnfm can neither scale it nor find its VNFCs`,
        {
          hint: `name the VDU (properties.name) after a Deployment, StatefulSet, ReplicaSet, DaemonSet or Pod, or after a custom resource whose CRD declares subresources.scale (as Cluster API's MachineDeployment does)`,
        },
      );
    }
    return plan;
  }

  /**
   * Whether the served CRD of a custom kind declares
   * `spec.template.metadata.labels` in this version. A kind served by an
   * aggregated API server (no CRD) or a CRD the VIM user may not read is
   * left unlabelled: vnfm writes no field it cannot see declared.
   */
  protected declaresTemplateLabels(ctx: DriverContext, res: ApiResource): Promise<boolean> {
    const key = `${res.plural}.${res.group}/${res.version}`;
    let known = this.templateSchemas.get(key);
    if (!known) {
      known = this.client
        .call(
          { method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${encodeURIComponent(`${res.plural}.${res.group}`)}` },
          { what: `read the CustomResourceDefinition ${res.plural}.${res.group}`, signal: ctx.signal, accept: [403, 404] },
        )
        .then((got) => {
          if (got.status >= 300) return false;
          const crd = got.body as KubeObject;
          return kindsDefinedBy([crd]).get(`${res.group}/${res.kind}`)?.versions.get(res.version)?.templateLabels ?? false;
        });
      known.catch(() => this.templateSchemas.delete(key));
      this.templateSchemas.set(key, known);
    }
    return known;
  }

  /** The error for custom resources whose kinds nobody defines: each kind, the objects and files that need it. */
  protected async missingDefinitions(ctx: DriverContext, missing: Array<{ o: KubeObject; file?: string }>): Promise<NotFoundError> {
    const byKind = new Map<string, Array<{ o: KubeObject; file?: string }>>();
    for (const m of missing) byKind.set(`${m.o.kind} (${m.o.apiVersion})`, [...(byKind.get(`${m.o.kind} (${m.o.apiVersion})`) ?? []), m]);
    const parts: string[] = [];
    for (const [kind, users] of byKind) {
      const group = splitApiVersion(users[0]!.o.apiVersion).group;
      const preferred = await this.discovery.preferredVersion(group, ctx.signal).catch(() => undefined);
      const also = preferred ? `; the cluster serves ${group} only as ${preferred} without this kind or version` : '';
      const who = users.map((u) => `${u.o.metadata.name}${u.file ? ` in ${u.file}` : ''}`).join(', ');
      parts.push(`${kind}, needed by ${who}${also}`);
    }
    return new NotFoundError(
      `no CustomResourceDefinition provides ${parts.join('; ')}: the cluster at ${this.client.server} does not serve ${byKind.size === 1 ? 'it' : 'them'} and the package does not define ${byKind.size === 1 ? 'it' : 'them'}`,
      {
        hint: 'install the definitions first (instantiate the CNF that carries them, e.g. the capi-mgmt sample for Cluster API), or add their CustomResourceDefinitions to lcm-kubernetes-def-files',
      },
    );
  }

  /**
   * Deletes one object of the instance and waits until it is gone; gone already counts as deleted.
   * With `hub`, the object is read from and awaited on the shared watch of its kind and namespace.
   */
  protected async removeOne(ctx: DriverContext, ref: ResourceRef, instanceId: string, gracePeriodSeconds: number | undefined, hub?: WatchHub): Promise<void> {
    const found = await this.findDeletable(ctx, ref, instanceId, hub);
    if (!found) return;
    await this.sendDelete(ctx, found, gracePeriodSeconds);
    await this.awaitDeleted(ctx, found, gracePeriodSeconds, hub);
  }

  /**
   * Reads an object terminate is to delete. Undefined when there is nothing
   * to delete (journalled done and reported): the object is gone already, or
   * it is not labelled with this instance and is left in place.
   */
  protected async findDeletable(ctx: DriverContext, ref: ResourceRef, instanceId: string, hub?: WatchHub): Promise<Deleting | undefined> {
    // A kind no longer served (its CRD went first) leaves no object behind.
    const res = await this.discovery.tryResolve(ref.apiVersion, ref.kind, ctx.signal);
    const existing = res && (hub ? await hub.current({ res, namespace: ref.namespace, name: ref.name }, ctx.signal) : await this.read(ctx, res, ref));
    if (!res || !existing) {
      ctx.journal.record({ action: 'delete', resource: ref, state: 'done', detail: 'already gone' });
      this.report(ctx, { resource: ref, message: 'already gone', done: true });
      return undefined;
    }
    if (existing.metadata.labels?.[INSTANCE_LABEL] !== instanceId) {
      // Same name, someone else's object (ours was deleted and replaced): not ours to delete.
      ctx.journal.record({ action: 'delete', resource: ref, state: 'done', detail: 'left in place: not labelled with this instance' });
      this.report(ctx, { resource: ref, message: `left in place: it is not labelled ${INSTANCE_LABEL}=${instanceId}`, done: true });
      return undefined;
    }
    return { ref, res, uid: existing.metadata.uid as string | undefined, existing };
  }

  /** Sends the delete of an object found deletable (journalled as intended first); one already being deleted is not deleted again. */
  protected async sendDelete(ctx: DriverContext, { ref, res, uid, existing }: Deleting, gracePeriodSeconds: number | undefined): Promise<void> {
    ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
    if (!existing.metadata.deletionTimestamp) {
      await this.client.call(
        { method: 'DELETE', path: objectPath(res, ref), body: deleteOptions(gracePeriodSeconds, uid, removalPropagation(ref.apiVersion, ref.kind)) },
        { what: `delete ${describeRef(ref)}`, signal: ctx.signal, accept: [404, 409] },
      );
    }
    this.report(ctx, { resource: ref, message: 'deleting' });
  }

  /**
   * Waits until an object whose delete was sent is gone (journalled done);
   * a StatefulSet's claims are deleted then, once its pods are gone.
   */
  protected async awaitDeleted(ctx: DriverContext, deleting: Deleting, gracePeriodSeconds: number | undefined, hub?: WatchHub): Promise<void> {
    const { ref, res, uid, existing } = deleting;
    await this.waitGone(ctx, res, ref, uid, hub);
    ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
    this.report(ctx, { resource: ref, message: 'deleted', done: true });
    if (ref.kind === 'StatefulSet' && res.group === 'apps') await this.removeClaims(ctx, existing, gracePeriodSeconds);
  }

  /**
   * The claims a StatefulSet made from its volumeClaimTemplates
   * (`<template>-<statefulset>-<ordinal>`) outlive it on Kubernetes; as
   * Tacker v2 does on terminate, they are deleted with it, here once its
   * pods are gone, and awaited gone.
   */
  protected async removeClaims(ctx: DriverContext, sts: KubeObject, gracePeriodSeconds: number | undefined): Promise<void> {
    const templates = claimTemplates(sts);
    if (templates.length === 0) return;
    const pvcRes = await this.discovery.resolve('v1', 'PersistentVolumeClaim', ctx.signal);
    const namespace = sts.metadata.namespace as string;
    const { items } = await listObjects(this.client, { res: pvcRes, namespace }, ctx.signal);
    const claims = items.filter((pvc) => statefulSetClaim(pvc.metadata.name, templates, sts.metadata.name));
    await forEachLimited(claims, this.limit, async (pvc) => {
      const ref: ResourceRef = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: pvc.metadata.name, namespace };
      const pvcUid = pvc.metadata.uid as string | undefined;
      ctx.journal.record({ action: 'delete', resource: ref, state: 'intended' });
      if (!pvc.metadata.deletionTimestamp) {
        await this.client.call(
          { method: 'DELETE', path: objectPath(pvcRes, ref), body: deleteOptions(gracePeriodSeconds, pvcUid, removalPropagation('v1', 'PersistentVolumeClaim')) },
          { what: `delete ${describeRef(ref)} (a claim of StatefulSet ${sts.metadata.name})`, signal: ctx.signal, accept: [404, 409] },
        );
      }
      this.report(ctx, { resource: ref, message: `deleting (a claim of StatefulSet ${sts.metadata.name})` });
      await this.waitGone(ctx, pvcRes, ref, pvcUid);
      ctx.journal.record({ action: 'delete', resource: ref, state: 'done' });
      this.report(ctx, { resource: ref, message: 'deleted', done: true });
    });
  }

  // ---- VNFCs ----------------------------------------------------------------------------------------
}
