/**
 * The DaemonSet and Job controllers.
 *
 * DaemonSet: one pod per Ready node that matches the template's
 * nodeSelector (bound through the node-name affinity the real controller
 * uses); a RollingUpdate replaces pods of an old template up to
 * maxUnavailable at a time. Taints and tolerations are not considered.
 *
 * Job: runs pods up to `parallelism` until `completions` have succeeded,
 * then is Complete (with SuccessCriteriaMet, as 1.31+ controllers add
 * first); more failed pods than `backoffLimit` make it Failed
 * (BackoffLimitExceeded). No backoff delay between retries; Indexed
 * completion mode, suspend and pod failure policies are not emulated
 * beyond leaving a suspended Job without pods.
 */
import type { KubeObject } from '../resources.js';
import {
  CONTROLLER_MANAGER,
  controllerRef,
  isControlledBy,
  isEvent,
  isPodActive,
  isPodReady,
  key,
  setCondition,
  spec,
  splitKey,
  status,
  templateHash,
  runOwnerController,
  writeStatus,
  type Controller,
  type ControllerContext,
} from './base.js';
import { podFromTemplate } from './workloads.js';

type Obj = Record<string, any>;

function podNode(pod: KubeObject): string | undefined {
  const s = spec(pod);
  if (s.nodeName) return s.nodeName as string;
  const terms = (s.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms as Obj[] | undefined) ?? [];
  for (const t of terms) for (const f of (t.matchFields as Obj[] | undefined) ?? []) if (f.key === 'metadata.name') return (f.values as string[])[0];
  return undefined;
}

export function startDaemonSetController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const sets = api.type('apps', 'daemonsets');
  const pods = api.type('', 'pods');
  const nodes = api.type('', 'nodes');

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const ds = api.find(sets, namespace, name);
    if (!ds) return;
    const s = spec(ds);
    const template = (s.template as Obj | undefined) ?? {};
    const hash = templateHash(template);
    const selector = (template.spec?.nodeSelector as Record<string, string> | undefined) ?? {};
    const eligible = api
      .list(nodes)
      .filter((n) => ((status(n).conditions as Obj[] | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True'))
      .filter((n) => Object.entries(selector).every(([lk, v]) => n.metadata.labels?.[lk] === v));
    const eligibleNames = new Set(eligible.map((n) => n.metadata.name));
    const owned = () => api.controlledBy(pods, ds).filter(isPodActive);

    if (!ds.metadata.deletionTimestamp) {
      let current = owned();
      for (const node of eligible) {
        if (current.some((p) => podNode(p) === node.metadata.name)) continue;
        const pod = podFromTemplate(ds, controllerRef(ds, sets), template, {
          labels: { 'controller-revision-hash': hash, 'pod-template-generation': String(ds.metadata.generation ?? 1) },
        });
        (pod.spec as Obj).affinity = {
          ...(pod.spec as Obj).affinity,
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node.metadata.name] }] }],
            },
          },
        };
        api.create(pods, pod, { manager: CONTROLLER_MANAGER });
      }
      for (const p of current) if (!eligibleNames.has(podNode(p) ?? '')) api.delete(pods, namespace, p.metadata.name);
      current = owned();
      const strategy = (s.updateStrategy as Obj | undefined) ?? {};
      if (strategy.type !== 'OnDelete') {
        const maxUnavailable = Math.max(1, Number(strategy.rollingUpdate?.maxUnavailable ?? 1) || 1);
        const unavailable = current.filter((p) => !isPodReady(p)).length;
        let budget = maxUnavailable - unavailable;
        for (const p of current) {
          if (budget <= 0) break;
          if (p.metadata.labels?.['controller-revision-hash'] !== hash) {
            api.delete(pods, namespace, p.metadata.name);
            budget--;
          }
        }
      }
    }
    const current = owned();
    const ready = current.filter(isPodReady).length;
    writeStatus(api, sets, ds, {
      currentNumberScheduled: current.length,
      desiredNumberScheduled: eligible.length,
      numberAvailable: ready,
      numberMisscheduled: 0,
      numberReady: ready,
      ...(eligible.length - ready > 0 ? { numberUnavailable: eligible.length - ready } : {}),
      observedGeneration: ds.metadata.generation,
      updatedNumberScheduled: current.filter((p) => p.metadata.labels?.['controller-revision-hash'] === hash).length,
    });
  }

  return runOwnerController(api, { type: sets, kind: 'DaemonSet' }, { group: '', resource: 'pods' }, reconcile, (event, enqueue) => {
    // A node coming or going changes where the pods belong.
    if (isEvent(event, '', 'nodes')) for (const o of api.list(sets)) enqueue(key(o));
  });
}

export function startJobController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const jobs = api.type('batch', 'jobs');
  const pods = api.type('', 'pods');
  const now = (): string =>
    api
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');

  function finished(job: KubeObject): boolean {
    return ((status(job).conditions as Obj[] | undefined) ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  }

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const job = api.find(jobs, namespace, name);
    if (!job || finished(job)) return;
    const s = spec(job);
    const owned = () => api.controlledBy(pods, job);
    let all = owned();
    const succeeded = all.filter((p) => status(p).phase === 'Succeeded').length;
    const failed = all.filter((p) => status(p).phase === 'Failed').length;
    const completions = s.completions === undefined || s.completions === null ? undefined : Number(s.completions);
    const parallelism = Number(s.parallelism ?? 1);
    const old = status(job);
    const next: Obj = { ...old, startTime: old.startTime ?? now(), uncountedTerminatedPods: {}, terminating: 0 };
    const t = now();

    if (!job.metadata.deletionTimestamp) {
      const complete = completions === undefined ? succeeded > 0 : succeeded >= completions;
      const overLimit = failed > Number(s.backoffLimit ?? 6);
      if (complete || overLimit) {
        for (const p of all.filter(isPodActive)) api.delete(pods, namespace, p.metadata.name);
        let conditions = old.conditions as Obj[] | undefined;
        if (complete) {
          conditions = setCondition(
            conditions,
            { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods', lastProbeTime: t },
            t,
          );
          conditions = setCondition(
            conditions,
            { type: 'Complete', status: 'True', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods', lastProbeTime: t },
            t,
          );
          next.completionTime = t;
        } else {
          conditions = setCondition(
            conditions,
            { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastProbeTime: t },
            t,
          );
          conditions = setCondition(
            conditions,
            { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastProbeTime: t },
            t,
          );
        }
        next.conditions = conditions;
      } else if (!s.suspend) {
        const active = all.filter(isPodActive).length;
        const remaining = completions === undefined ? parallelism : completions - succeeded;
        const want = Math.min(parallelism, remaining) - active;
        for (let i = 0; i < want; i++) api.create(pods, podFromTemplate(job, controllerRef(job, jobs), (s.template as Obj | undefined) ?? {}), { manager: CONTROLLER_MANAGER });
      }
      all = owned();
    }
    const active = all.filter(isPodActive);
    next.active = active.length;
    next.ready = active.filter(isPodReady).length;
    next.succeeded = succeeded;
    next.failed = failed;
    for (const f of ['active', 'succeeded', 'failed'] as const) if (next[f] === 0) delete next[f];
    writeStatus(api, jobs, job, next);
  }

  return runOwnerController(api, { type: jobs, kind: 'Job' }, { group: '', resource: 'pods' }, reconcile);
}
