/**
 * A Kubernetes infra-driver that keeps a tiny cluster in memory, records
 * every call, and can be told to fail or to hang until aborted — for tests of
 * the operation engine. It journals like the real driver: a step is recorded
 * as intended before it is taken and as done after.
 */
import type { DriverContext, JournalStep, ResourceRef, Vnfc } from '../../src/infra/driver.js';
import type {
  AwaitInput,
  ChangePackageInput,
  CheckInput,
  DeployInput,
  HealInput,
  KubeObject,
  KubernetesInfraDriver,
  RemoveInput,
  ScaleInput,
  VduTarget,
} from '../../src/infra/kubernetes/driver-contract.js';

export type Method = 'check' | 'deploy' | 'scale' | 'heal' | 'remove' | 'changePackage' | 'listVnfcs' | 'awaitReady' | 'awaitGone';

const key = (r: ResourceRef) => `${r.kind}/${r.namespace ?? ''}/${r.name}`;

export class FakeInfraDriver implements KubernetesInfraDriver {
  readonly calls: { method: Method; input: unknown; journalBefore: number }[] = [];
  /** Resources that exist in the fake cluster. */
  readonly resources = new Map<string, ResourceRef>();
  /** Pod names of each workload (`kind/ns/name`). */
  readonly pods = new Map<string, string[]>();
  private podSerial = 0;
  private failures = new Map<Method, { afterSteps: number; error: Error }>();
  private hangs = new Set<Method>();
  private entered = new Map<Method, () => void>();
  /** Called right after each journal.record, to check what the store holds at that moment. */
  onRecord?: (step: JournalStep) => void;

  /** The next call of `method` throws `error`, after taking `afterSteps` steps. */
  failOnce(method: Method, error: Error, afterSteps = 0): this {
    this.failures.set(method, { afterSteps, error });
    return this;
  }

  /** Calls of `method` wait until the signal aborts. */
  hang(method: Method): this {
    this.hangs.add(method);
    return this;
  }

  unhang(method: Method): this {
    this.hangs.delete(method);
    return this;
  }

  /** Resolves when `method` is next entered. */
  entering(method: Method): Promise<void> {
    return new Promise((resolve) => this.entered.set(method, resolve));
  }

  callsOf(method: Method) {
    return this.calls.filter((c) => c.method === method);
  }

  private async enter(method: Method, ctx: DriverContext, input: unknown): Promise<void> {
    this.calls.push({ method, input, journalBefore: ctx.journal.steps().length });
    this.entered.get(method)?.();
    this.entered.delete(method);
    if (this.hangs.has(method)) {
      await new Promise<never>((_, reject) => {
        if (ctx.signal.aborted) reject(ctx.signal.reason);
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error), { once: true });
      });
    }
  }

  private step(ctx: DriverContext, method: Method, taken: number, action: JournalStep['action'], resource: ResourceRef, change: () => void): void {
    const f = this.failures.get(method);
    if (f && taken >= f.afterSteps) {
      this.failures.delete(method);
      throw f.error;
    }
    const intended: JournalStep = { action, resource, state: 'intended' };
    ctx.journal.record(intended);
    this.onRecord?.(intended);
    change();
    ctx.journal.record({ ...intended, state: 'done' });
    ctx.report({ resource, message: `${action} done`, done: true });
  }

  private setReplicas(r: ResourceRef, n: number): void {
    const list = this.pods.get(key(r)) ?? [];
    while (list.length < n) list.push(`${r.name}-${(++this.podSerial).toString(36).padStart(5, '0')}`);
    list.length = n;
    this.pods.set(key(r), list);
  }

  private apply(objects: KubeObject[], namespace: string, replicas: Record<string, number>, ctx: DriverContext, method: Method, action: JournalStep['action']) {
    const refs: ResourceRef[] = [];
    objects.forEach((o, i) => {
      const ref: ResourceRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace ?? namespace };
      this.step(ctx, method, i, action, ref, () => {
        this.resources.set(key(ref), ref);
        const wanted = replicas[`${o.kind}/${o.metadata.name}`] ?? (o.kind === 'Pod' ? 1 : undefined);
        if (wanted !== undefined) this.setReplicas(ref, wanted);
      });
      refs.push(ref);
    });
    return refs;
  }

  /** Preflight writes nothing: it records the call and fails if told to (failOnce('check', ...)). */
  async check(input: CheckInput, signal?: AbortSignal): Promise<void> {
    this.calls.push({ method: 'check', input, journalBefore: 0 });
    if (signal?.aborted) throw signal.reason;
    const f = this.failures.get('check');
    if (f) {
      this.failures.delete('check');
      throw f.error;
    }
  }

  async deploy(ctx: DriverContext, input: DeployInput): Promise<ResourceRef[]> {
    await this.enter('deploy', ctx, input);
    return this.apply(input.objects, input.namespace, input.replicas, ctx, 'deploy', 'create');
  }

  /** Objects another tool wrote: ready as they are, each in its namespace (or the input's). */
  async awaitReady(ctx: DriverContext, input: AwaitInput): Promise<ResourceRef[]> {
    await this.enter('awaitReady', ctx, input);
    return input.resources.map((r) => ({ ...r, namespace: r.namespace ?? input.namespace }));
  }

  /** Objects another tool deletes: gone once no longer in the fake cluster (here at once). */
  async awaitGone(ctx: DriverContext, input: { resources: ResourceRef[] }): Promise<void> {
    await this.enter('awaitGone', ctx, input);
  }

  async scale(ctx: DriverContext, input: ScaleInput): Promise<void> {
    await this.enter('scale', ctx, input);
    this.step(ctx, 'scale', 0, 'scale', input.resource, () => this.setReplicas(input.resource, input.replicas));
  }

  async heal(ctx: DriverContext, input: HealInput): Promise<void> {
    await this.enter('heal', ctx, input);
    input.vnfcs.forEach((v, i) => {
      const pod: ResourceRef = { apiVersion: 'v1', kind: 'Pod', name: v.resourceId, namespace: v.owner?.namespace };
      this.step(ctx, 'heal', i, 'delete', pod, () => {
        const list = v.owner && this.pods.get(key(v.owner));
        const at = list ? list.indexOf(v.resourceId) : -1;
        if (list && at >= 0) list[at] = `${v.owner!.name}-${(++this.podSerial).toString(36).padStart(5, '0')}`;
      });
    });
  }

  async remove(ctx: DriverContext, input: RemoveInput): Promise<void> {
    await this.enter('remove', ctx, input);
    [...input.resources].reverse().forEach((r, i) =>
      this.step(ctx, 'remove', i, 'delete', r, () => {
        this.resources.delete(key(r));
        this.pods.delete(key(r));
      }),
    );
  }

  async changePackage(ctx: DriverContext, input: ChangePackageInput): Promise<ResourceRef[]> {
    await this.enter('changePackage', ctx, input);
    const refs = this.apply(input.objects, input.namespace, input.replicas, ctx, 'changePackage', 'apply');
    const kept = new Set(refs.map(key));
    input.current
      .filter((r) => !kept.has(key(r)))
      .reverse()
      .forEach((r, i) =>
        this.step(ctx, 'changePackage', refs.length + i, 'delete', r, () => {
          this.resources.delete(key(r));
          this.pods.delete(key(r));
        }),
      );
    return refs;
  }

  async listVnfcs(ctx: DriverContext, targets: VduTarget[]): Promise<Vnfc[]> {
    await this.enter('listVnfcs', ctx, targets);
    return targets.flatMap((t) =>
      (this.pods.get(key(t.resource)) ?? []).map((pod) => ({
        id: `${t.vduId}-${pod}`,
        vduId: t.vduId,
        resourceId: pod,
        vimLevelResourceType: 'Pod',
        owner: t.resource,
        state: 'STARTED' as const,
      })),
    );
  }
}
