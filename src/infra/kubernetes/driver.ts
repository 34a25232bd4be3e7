/**
 * The Kubernetes infra-driver: creates, scales, heals, changes and removes
 * a CNF's objects of any kind the cluster serves, and waits — by watching —
 * until the cluster has done what was asked. Every step is recorded in the
 * journal before it is taken, and every method can run again after a
 * failure: an object labelled with the instance already is updated, one
 * already gone counts as deleted.
 */
import { ConflictError, InterruptedError, NotFoundError, TimeoutError, UsageError, ValidationError, VimCheckError, VnfmError } from '../../errors.js';
import type { DriverContext, DriverEvent, ResourceRef, Vnfc } from '../driver.js';
import { abortError, defaultRetryPolicy, KubeApiError, KubeClient, type RetryPolicy } from './client.js';
import { collectionPath, describeRef, Discovery, objectPath, splitApiVersion, type ApiResource } from './discovery.js';
import {
  INSTANCE_LABEL,
  type AwaitInput,
  type ChangePackageInput,
  type CheckInput,
  type DeployInput,
  type HealInput,
  type KubeObject,
  type KubernetesInfraDriver,
  type OperationExtras,
  type RemoveInput,
  type ScaleInput,
  type VduTarget,
} from './driver-contract.js';
import { createKubeTransport, type KubeAccess, type KubeTransport } from './kube-api.js';
import { checkDuplicates, checkOwnership, controlledBy, prepareObject, refKey, refOf, selectorString, type PrepareInput } from './objects.js';
import { forEachLimited, groupByRank, removalGroups } from './order.js';
import { byAge, machineOf, MACHINE_GROUP, ownedSetUids } from './machines.js';
import { isBuiltinGroup, kindsDefinedBy, sourceKey } from './package-kinds.js';
import { assessReadiness, podReady, type KindFacts } from './readiness.js';
import type { ReadinessOverrides } from './readiness-rules.js';
import { listObjects, watchUntil, withKind } from './watch.js';
import { LiveReader, type DescribeInput, type LiveObject } from './describe.js';
import { ruleFor } from './readiness-rules.js';
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
  /** The package file it came from, when the engine said. */
  file?: string;
  /**
   * A kind the cluster serves for create only (TokenReview, the access
   * reviews): posted, its answer read and reported, nothing kept, awaited
   * or deleted later, as Tacker does with them. It may have no name.
   */
  createOnly?: boolean;
}

/** A kind the cluster serves for create only, as it serves the review kinds. */
function isCreateOnly(res: Pick<ApiResource, 'verbs'>): boolean {
  return res.verbs.includes('create') && !res.verbs.includes('get');
}

/** What the API server answered to a review, in a few words. */
export function reviewAnswer(answer: KubeObject | undefined): string {
  const status = (answer?.status ?? {}) as Record<string, unknown>;
  const reason = typeof status.reason === 'string' && status.reason ? `: ${status.reason}` : '';
  const error = typeof status.evaluationError === 'string' && status.evaluationError ? ` (${status.evaluationError})` : '';
  if (typeof status.allowed === 'boolean') return `answered: ${status.denied === true ? 'denied' : status.allowed ? 'allowed' : 'not allowed'}${reason}${error}`;
  if (typeof status.authenticated === 'boolean' || typeof status.error === 'string' || typeof status.user === 'object') {
    const user = (status.user as { username?: unknown } | undefined)?.username;
    return `answered: ${status.authenticated ? `authenticated${typeof user === 'string' ? ` as ${user}` : ''}` : `not authenticated${typeof status.error === 'string' && status.error ? ` (${status.error})` : ''}`}`;
  }
  if (Array.isArray(status.resourceRules)) return `answered: ${status.resourceRules.length} resource rules${status.incomplete === true ? ' (incomplete)' : ''}${error}`;
  const user = ((status.userInfo as { username?: unknown } | undefined)?.username);
  if (typeof user === 'string') return `answered: user ${user}`;
  return 'answered';
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
  /** `<plural>.<group>/<version>` → whether its schema has `spec.template.metadata.labels`. */
  private readonly templateSchemas = new Map<string, Promise<boolean>>();

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

  // ---- preflight, deploy and change package ----------------------------------------------------

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
  private async namespacesOf(ctx: DriverContext, plan: Planned[]): Promise<{ missing: string[]; terminating: string[] }> {
    const made = new Set(plan.filter((p) => p.obj.kind === 'Namespace' && splitApiVersion(p.obj.apiVersion).group === '').map((p) => p.ref.name));
    const wanted = [...new Set(plan.map((p) => p.ref.namespace).filter((ns): ns is string => ns !== undefined && !made.has(ns)))];
    const missing: string[] = [];
    const terminating: string[] = [];
    if (wanted.length === 0) return { missing, terminating };
    const res = await this.discovery.resolve('v1', 'Namespace', ctx.signal);
    await forEachLimited(wanted, this.limit, async (name) => {
      const got = await this.client.call(
        { method: 'GET', path: objectPath(res, { name }) },
        { what: `read namespace ${name}`, signal: ctx.signal, accept: [403, 404] },
      );
      if (got.status === 404) missing.push(name);
      else if (got.status < 300 && (got.body as KubeObject).metadata?.deletionTimestamp) terminating.push(name);
    });
    return { missing: missing.sort(), terminating: terminating.sort() };
  }

  /** Creates the namespaces the plan needs that the cluster lacks (createNamespace); one created meanwhile is fine. */
  private async createNamespaces(ctx: DriverContext, plan: Planned[]): Promise<void> {
    const { missing } = await this.namespacesOf(ctx, plan);
    if (missing.length === 0) return;
    const res = await this.discovery.resolve('v1', 'Namespace', ctx.signal);
    for (const name of missing) {
      const ref: ResourceRef = { apiVersion: 'v1', kind: 'Namespace', name };
      await this.client.call(
        { method: 'POST', path: collectionPath(res, undefined), body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'vnfm' } } } },
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
  private async settleMachines(ctx: DriverContext, ref: ResourceRef, rules: ReadinessOverrides | undefined): Promise<void> {
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
  private async rollOut(
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
    const awaitReady = (c: DriverContext, l: Live) => {
      awaited.set(refKey(l.ref), { ref: l.ref });
      return this.waitReady(c, l, rules).then((obj) => {
        awaited.delete(refKey(l.ref));
        return obj;
      });
    };
    const pending: Promise<unknown>[] = [];
    const created: ResourceRef[] = [];
    const services: Live[] = [];
    try {
      for (const ranked of groupByRank(plan, (p) => p.obj.kind)) {
        await forEachLimited(ranked.filter((p) => p.createOnly), this.limit, (p) => this.submit(ctx, p));
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
      await forEachLimited(services, this.limit, (l) => this.waitEndpoints(ctx, l));
    } catch (err) {
      throw ctx.signal.aborted ? stoppedWaiting(ctx.signal, [...awaited.values()]) : err;
    } finally {
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
  private async plan(ctx: DriverContext, objects: KubeObject[], input: PrepareInput & OperationExtras): Promise<Planned[]> {
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
          throw new ValidationError(file ?? 'the package', undefined, `${o.kind} ${o.metadata.name} uses ${o.apiVersion}, which the package's CustomResourceDefinition ${local.crdName} does not serve (it serves ${versions.join(', ') || 'no version'})`, {
            hint: `write it as apiVersion: ${group}/${storage}`,
          });
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
          return { obj, ref: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name ?? '(unnamed)', ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}) }, createOnly: true, ...(file ? { file } : {}) };
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
    if (missing.length > 0) throw await this.missingDefinitions(ctx, missing.sort((a, b) => objects.indexOf(a.o) - objects.indexOf(b.o)));
    const plan = planned.filter((p): p is Planned => p !== undefined);
    checkDuplicates(plan.filter((p) => !p.createOnly).map((p) => p.obj));
    for (const { vduId, resource } of input.vdus ?? []) {
      const { group } = splitApiVersion(resource.apiVersion);
      if (resource.kind === 'Pod' || (isBuiltinGroup(group) && POD_OWNERS.has(resource.kind))) continue;
      if (scalable.get(`${group}/${resource.kind}`)) continue;
      const file = sources[sourceKey({ ...resource, metadata: { name: resource.name } })];
      throw new ValidationError(file ?? 'the package', undefined, `VDU ${vduId} maps to ${resource.kind} ${resource.name}, whose kind has no /scale subresource: vnfm can neither scale it nor find its VNFCs`, {
        hint: `name the VDU (properties.name) after a Deployment, StatefulSet, ReplicaSet, DaemonSet or Pod, or after a custom resource whose CRD declares subresources.scale (as Cluster API's MachineDeployment does)`,
      });
    }
    return plan;
  }

  /**
   * Whether the served CRD of a custom kind declares
   * `spec.template.metadata.labels` in this version. A kind served by an
   * aggregated API server (no CRD) or a CRD the VIM user may not read is
   * left unlabelled: vnfm writes no field it cannot see declared.
   */
  private declaresTemplateLabels(ctx: DriverContext, res: ApiResource): Promise<boolean> {
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
  private async missingDefinitions(ctx: DriverContext, missing: Array<{ o: KubeObject; file?: string }>): Promise<NotFoundError> {
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
   * Posts an object of a create-only kind and reports the server's answer
   * (Tacker's AuthenticationResource: create, nothing else). A refusal
   * (403, 422) fails the operation like any other create.
   */
  private async submit(ctx: DriverContext, p: Planned): Promise<void> {
    const res = await this.discovery.resolve(p.obj.apiVersion, p.obj.kind, ctx.signal);
    const what = `${p.obj.kind}${p.obj.metadata.name ? ` ${p.obj.metadata.name}` : ''}${p.file ? ` (${p.file})` : ''}`;
    const answer = await this.client
      .json<KubeObject>({ method: 'POST', path: collectionPath(res, p.ref.namespace), body: p.obj }, { what: `create ${what}`, signal: ctx.signal })
      .catch((err) => rejectedFrom(err, p));
    this.report(ctx, { resource: p.ref, message: reviewAnswer(answer), done: true });
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
  private async waitReady(ctx: DriverContext, live: Pick<Live, 'ref' | 'res'> & { obj?: KubeObject }, rules?: ReadinessOverrides): Promise<KubeObject> {
    const { ref, res } = live;
    let said = '';
    const say = (message: string, done: boolean) => {
      if (message === said) return;
      said = message;
      this.report(ctx, { resource: ref, message, done });
    };
    const rv = live.obj?.metadata.resourceVersion as string | undefined;
    const ready = await watchUntil(
      this.client,
      { res, namespace: ref.namespace, name: ref.name },
      { signal: ctx.signal, timeoutSeconds: this.opts.watchTimeoutSeconds, start: live.obj && rv ? { objects: [live.obj], resourceVersion: rv } : undefined },
      (objects) => {
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
      },
    );
    if (ref.kind === 'StatefulSet' && res.group === 'apps' && !ruleFor(rules, ready)) await this.waitClaims(ctx, ref, ready);
    return ready;
  }

  /**
   * A StatefulSet is ready once the claims of its pods are Bound too
   * (Tacker v2's StatefulSet.is_ready reads each `<template>-<sts>-<ordinal>`).
   */
  private async waitClaims(ctx: DriverContext, ref: ResourceRef, sts: KubeObject): Promise<void> {
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
      if (!workload) throw new NotFoundError(`cannot heal: ${describeRef(owner)} does not exist any more`, { hint: 'heal the whole VNF by retrying its instantiation, or terminate it' });
      if (input.release) checkRelease(workload, owner, input.release);
      else checkOwnership(workload, owner, input.instanceId);
      if (!ownsPods(res)) {
        await this.healMachines(ctx, owner, workload, vnfcs, input);
        await this.waitReady(ctx, { ref: owner, res }, input.readiness);
        return;
      }
      const replaced = new Set<string>();
      for (const vnfc of vnfcs) {
        const uid = await this.deletePod(ctx, podRes, { apiVersion: 'v1', kind: 'Pod', name: vnfc.resourceId, namespace: owner.namespace }, input.release ? undefined : input.instanceId);
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
      throw new NotFoundError(`cannot heal the VNFCs of ${describeRef(owner)}: the cluster serves no Cluster API Machines`, { hint: 'heal needs the Cluster API CRDs (the capi-mgmt sample installs them)' });
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

  /** The Machine kind of the cluster, in the owner's version when it is a core Cluster API kind. */
  private async machineResource(ctx: DriverContext, owner: KubeObject): Promise<ApiResource | undefined> {
    const version = owner.apiVersion.startsWith(`${MACHINE_GROUP}/`) ? owner.apiVersion : await this.discovery.preferredVersion(MACHINE_GROUP, ctx.signal);
    return version ? this.discovery.tryResolve(version, 'Machine', ctx.signal) : undefined;
  }

  /** The live (not deleting) Machines that `owner` owns, oldest first; none when the cluster serves no Machines. */
  private async machinesOf(ctx: DriverContext, owner: KubeObject): Promise<{ res?: ApiResource; items: KubeObject[]; setUids: Set<string> }> {
    const res = await this.machineResource(ctx, owner);
    if (!res) return { items: [], setUids: new Set() };
    const setRes = await this.discovery.tryResolve(res.apiVersion, 'MachineSet', ctx.signal);
    const sets = setRes ? (await listObjects(this.client, { res: setRes, namespace: owner.metadata.namespace }, ctx.signal)).items : [];
    const setUids = ownedSetUids(owner, sets);
    const { items } = await listObjects(this.client, { res, namespace: owner.metadata.namespace }, ctx.signal);
    return { res, setUids, items: items.filter((m) => machineOf(m, owner, setUids) && !m.metadata.deletionTimestamp).sort(byAge) };
  }

  /** Whether a scalable custom resource stands for Machines (a MachineDeployment, a machine-based control plane). */
  private async ownsMachines(ctx: DriverContext, owner: KubeObject): Promise<boolean> {
    if (owner.apiVersion.startsWith(`${MACHINE_GROUP}/`) && ['MachineDeployment', 'MachineSet'].includes(owner.kind)) return true;
    return (await this.machinesOf(ctx, owner)).items.length > 0;
  }

  /**
   * Watches the Machines of `owner` until exactly `want` exist, all ready
   * (their own readiness: phase Running/Provisioned, or the operator's rule
   * for Machine), none of them one of `replaced` and none being deleted.
   */
  private async waitMachines(ctx: DriverContext, ref: ResourceRef, owner: KubeObject, want: number, replaced: ReadonlySet<string>, rules: ReadinessOverrides | undefined): Promise<void> {
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

  /** Deletes one pod of the instance (journaled); returns its uid, or undefined if it was already gone. */
  /** `instanceId` undefined: a pod of a Helm release's workload, whose ownership was checked on the workload. */
  private async deletePod(ctx: DriverContext, podRes: ApiResource, ref: ResourceRef, instanceId: string | undefined): Promise<string | undefined> {
    const pod = await this.read(ctx, podRes, ref);
    if (!pod) return undefined;
    if (instanceId !== undefined) checkOwnership(pod, ref, instanceId);
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
    if (ref.kind === 'StatefulSet' && res.group === 'apps') await this.removeClaims(ctx, existing, gracePeriodSeconds);
  }

  /**
   * The claims a StatefulSet made from its volumeClaimTemplates
   * (`<template>-<statefulset>-<ordinal>`) outlive it on Kubernetes; as
   * Tacker v2 does on terminate, they are deleted with it, here once its
   * pods are gone, and awaited gone.
   */
  private async removeClaims(ctx: DriverContext, sts: KubeObject, gracePeriodSeconds: number | undefined): Promise<void> {
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
          { method: 'DELETE', path: objectPath(pvcRes, ref), body: deleteOptions(gracePeriodSeconds, pvcUid) },
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

  describe(input: DescribeInput, signal: AbortSignal = new AbortController().signal): Promise<LiveObject[]> {
    return new LiveReader(this.client, this.discovery, signal, this.limit).describe(input);
  }

  async listVnfcs(ctx: DriverContext, targets: VduTarget[]): Promise<Vnfc[]> {
    const perTarget = await forEachLimited(targets, this.limit, async ({ vduId, resource }) => {
      const res = await this.discovery.resolve(resource.apiVersion, resource.kind, ctx.signal);
      const workload = await this.read(ctx, res, resource);
      if (!workload) return [];
      if (!ownsPods(res)) {
        const { items } = await this.machinesOf(ctx, workload);
        return items.map(
          (m): Vnfc => ({
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
          }),
        );
      }
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

  // ---- objects another tool writes (a Helm release) ------------------------------------------------

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
    try {
      const ready = await forEachLimited(live, this.limit, async (l) => {
        const obj = await this.waitReady(tracked, l, input.readiness);
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
      await forEachLimited(ready.filter((l) => l.ref.kind === 'Service' && l.res.group === ''), this.limit, (l) => this.waitEndpoints(ctx, l));
    } catch (err) {
      throw ctx.signal.aborted ? stoppedWaiting(ctx.signal, [...awaited.values()]) : err;
    }
    return live.map((l) => l.ref);
  }

  async awaitGone(ctx: DriverContext, input: { resources: ResourceRef[] }): Promise<void> {
    await forEachLimited(input.resources, this.limit, async (ref) => {
      const res = await this.discovery.tryResolve(ref.apiVersion, ref.kind, ctx.signal);
      if (res && (await this.read(ctx, res, ref))) {
        this.report(ctx, { resource: ref, message: 'deleting' });
        await this.waitGone(ctx, res, ref, undefined);
      }
      this.report(ctx, { resource: ref, message: 'deleted', done: true });
    });
  }

  private report(ctx: DriverContext, event: DriverEvent): void {
    ctx.report(event);
  }
}

/**
 * What readiness needs to know of a kind: whether a controller reports a
 * status on it. A template (Cluster API's `…MachineTemplate`,
 * `KubeadmConfigTemplate`) is cloned by its users, not reconciled: whatever
 * status subresource its CRD declares, nothing reports it ready.
 */
/** An object of a Helm release carries Helm's release annotation (meta.helm.sh/release-name); another is not the release's to heal. */
function checkRelease(obj: KubeObject, ref: ResourceRef, release: string): void {
  const annotations = (obj.metadata.annotations ?? {}) as Record<string, string>;
  if (annotations['meta.helm.sh/release-name'] !== release) {
    throw new ConflictError(`${describeRef(ref)} is not an object of Helm release ${release} (its meta.helm.sh/release-name annotation is ${annotations['meta.helm.sh/release-name'] ? `"${annotations['meta.helm.sh/release-name']}"` : 'missing'})`, {
      hint: 'vnfm heals only the workloads of the instance\'s own release',
    });
  }
}

function kindFacts(res: ApiResource): KindFacts {
  return { reportsStatus: !isBuiltinGroup(res.group) && res.subresources.has('status') && !res.kind.endsWith('Template') };
}

/** Built-in workloads and bare pods have pods as VNFCs; any other scalable kind is a custom resource. */
function ownsPods(res: ApiResource): boolean {
  return isBuiltinGroup(res.group) && (POD_OWNERS.has(res.kind) || res.kind === 'Pod');
}

/**
 * The abort's reason, made precise: a timeout or an interruption that came
 * while objects were still awaited names them (and what each last said),
 * with the reason as its cause.
 */
function stoppedWaiting(signal: AbortSignal, awaited: Array<{ ref: ResourceRef; said?: string }>): Error {
  const reason = abortError(signal);
  if (awaited.length === 0 || !(reason instanceof TimeoutError || reason instanceof InterruptedError)) return reason;
  const shown = awaited.slice(0, 5).map((a) => `${describeRef(a.ref)}${a.said ? ` (${a.said})` : ''}`);
  const more = awaited.length > shown.length ? ` and ${awaited.length - shown.length} more` : '';
  const message = `${reason.message} while waiting for ${shown.join(', ')}${more}`;
  const details = { ...(reason.hint ? { hint: reason.hint } : {}), cause: reason };
  return reason instanceof TimeoutError ? new TimeoutError(message, details) : new InterruptedError(message, details);
}

/**
 * Preflight's verdict in the terms of a request check: what the package
 * asks for and the cluster lacks is bad input (exit 2); a cluster that does
 * not answer discovery is a VIM problem (exit 6). Nothing was recorded, so
 * neither hint mentions retry or rollback.
 */
function preflightError(err: unknown, signal: AbortSignal, server: string): unknown {
  if (signal.aborted) return abortError(signal);
  if (err instanceof UsageError) return err;
  if (err instanceof NotFoundError) return new UsageError(err.message, { hint: err.hint, cause: err });
  if (err instanceof KubeApiError) {
    return new VimCheckError(`cannot check the package against the cluster at ${server}: ${err.message}`, {
      hint: err.status === 0 ? 'check that the API server is running and reachable (vnfm vim-show, vim-update), then run the command again' : err.hint,
      cause: err,
    });
  }
  return err;
}

/**
 * A 400/422 from the API server (or a 500 that states an error of the
 * object, such as a field its schema does not declare) names the field;
 * this adds the object and the package file it came from.
 */
/** The names of a StatefulSet's volumeClaimTemplates. */
function claimTemplates(sts: KubeObject): string[] {
  return ((sts.spec as { volumeClaimTemplates?: Array<{ metadata?: { name?: unknown } }> } | undefined)?.volumeClaimTemplates ?? [])
    .map((t) => t.metadata?.name)
    .filter((n): n is string => typeof n === 'string' && n !== '');
}

/** Whether a claim is named `<template>-<statefulset>-<ordinal>` for one of the templates, as the StatefulSet controller names them. */
export function statefulSetClaim(claim: string, templates: readonly string[], statefulSet: string): boolean {
  return templates.some((t) => {
    const prefix = `${t}-${statefulSet}-`;
    return claim.startsWith(prefix) && /^\d+$/.test(claim.slice(prefix.length));
  });
}

function rejectedFrom(err: unknown, p: Planned): never {
  if (err instanceof KubeApiError && (err.status === 422 || err.status === 400 || (err.status === 500 && !err.transient))) {
    // A review has no name; the file is what finds it.
    const named = typeof p.obj.metadata?.name === 'string';
    const what = named ? describeRef(p.ref) : p.ref.kind;
    const where = p.file && !err.message.includes(p.file) ? ` (${what}, from ${p.file})` : '';
    throw new KubeApiError(`${err.message}${where}`, err.status, err.reason, {
      hint: `fix ${named ? `${p.ref.kind} ${p.ref.name}` : `the ${p.ref.kind}`}${p.file ? ` in ${p.file}` : ''} as the API server says, rebuild and onboard the package, then roll back or retry the operation`,
      cause: err,
      transient: err.transient,
    });
  }
  throw err;
}

/** The object without explicit nulls (in maps; list items stay). */
function dropNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => dropNulls(v)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null) out[k] = dropNulls(v);
  return out as T;
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
