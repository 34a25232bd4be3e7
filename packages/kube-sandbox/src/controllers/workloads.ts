/**
 * The ReplicaSet and Deployment controllers.
 *
 * ReplicaSet: keeps `spec.replicas` active pods from its template (a
 * deleted or failed pod is replaced; extra pods are deleted, not-ready and
 * newest first) and reports replicas/ready/available.
 *
 * Deployment: one ReplicaSet per pod template (`<name>-<pod-template-hash>`,
 * with the revision annotation); RollingUpdate scales the new one up and
 * the old ones down within maxSurge/maxUnavailable as pods become
 * available; Recreate scales the old ones to zero first. Status carries
 * replicas/updated/ready/available/unavailable, observedGeneration and the
 * Available and Progressing conditions (ProgressDeadlineExceeded after
 * `progressDeadlineSeconds`). Old ReplicaSets beyond `revisionHistoryLimit`
 * are deleted. Simplified: minReadySeconds is ignored (available = ready),
 * no proportional scaling of several old ReplicaSets mid-rollout.
 */
import type { KubeObject } from '../resources.js';
import { matchesSelector, type LabelSelectorObject } from '../selectors.js';
import {
  CONTROLLER_MANAGER,
  controllerOf,
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
  WorkQueue,
  writeStatus,
  type Controller,
  type ControllerContext,
} from './base.js';

type Obj = Record<string, any>;
const POD_TEMPLATE_HASH = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';

/** Creates a pod from a template, owned by `owner`. */
export function podFromTemplate(
  owner: KubeObject,
  ownerRef: Obj,
  template: Obj,
  extra: { name?: string; generateName?: string; labels?: Record<string, string> } = {},
): KubeObject {
  const meta = (template.metadata as Obj | undefined) ?? {};
  const pod: Obj = {
    metadata: {
      ...(extra.name ? { name: extra.name } : { generateName: extra.generateName ?? `${owner.metadata.name}-` }),
      namespace: owner.metadata.namespace,
      labels: { ...(meta.labels as object | undefined), ...extra.labels },
      ownerReferences: [ownerRef],
    },
    spec: structuredClone(template.spec ?? {}),
  };
  if (meta.annotations) pod.metadata.annotations = structuredClone(meta.annotations);
  return pod as KubeObject;
}

export function startReplicaSetController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const rsType = api.type('apps', 'replicasets');
  const pods = api.type('', 'pods');

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const rs = api.peek(rsType, namespace, name);
    if (!rs) return;
    const owned = api.controlledBy(pods, rs);
    let active = owned.filter(isPodActive);
    const desired = Number(spec(rs).replicas ?? 1);
    if (!rs.metadata.deletionTimestamp) {
      const template = (spec(rs).template as Obj | undefined) ?? {};
      for (let i = active.length; i < desired; i++) {
        api.create(pods, podFromTemplate(rs, controllerRef(rs, rsType), template), { manager: CONTROLLER_MANAGER });
      }
      if (active.length > desired) {
        const rank = (p: KubeObject): number => (!spec(p).nodeName ? 0 : status(p).phase === 'Pending' ? 1 : !isPodReady(p) ? 2 : 3);
        const victims = [...active]
          .sort((a, b) => rank(a) - rank(b) || String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)))
          .slice(0, active.length - desired);
        for (const p of victims) api.delete(pods, namespace, p.metadata.name);
      }
      active = api.controlledBy(pods, rs).filter(isPodActive);
    }
    const selector = spec(rs).selector as LabelSelectorObject | undefined;
    const ready = active.filter(isPodReady).length;
    writeStatus(api, rsType, rs, {
      replicas: active.length,
      fullyLabeledReplicas: active.filter((p) => matchesSelector(selector, p.metadata.labels)).length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: rs.metadata.generation,
    });
  }

  return runOwnerController(api, { type: rsType, kind: 'ReplicaSet' }, { group: '', resource: 'pods' }, reconcile);
}

/** An int-or-percent of `total`, rounded up or down. */
function resolve(value: unknown, total: number, roundUp: boolean): number {
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(String(value ?? ''));
  if (!m) return Number(value ?? 0) || 0;
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

function withoutHash(template: Obj | undefined): unknown {
  const t = structuredClone(template ?? {});
  if (t.metadata?.labels) delete t.metadata.labels[POD_TEMPLATE_HASH];
  return t;
}

/** A Deployment's ReplicaSet for its current template (`hash`), at `revision`, starting with `replicas`. */
function newReplicaSet(d: KubeObject, owner: ReturnType<typeof controllerRef>, hash: string, revision: number, replicas: number): KubeObject {
  const s = spec(d);
  const desired = Number(s.replicas ?? 1);
  const template = (s.template as Obj | undefined) ?? {};
  const labels = { ...((template.metadata as Obj | undefined)?.labels as object | undefined), [POD_TEMPLATE_HASH]: hash };
  const selector = structuredClone((s.selector as Obj | undefined) ?? {});
  selector.matchLabels = { ...selector.matchLabels, [POD_TEMPLATE_HASH]: hash };
  const rsTemplate = structuredClone(template);
  rsTemplate.metadata = { ...rsTemplate.metadata, labels };
  return {
    metadata: {
      name: `${d.metadata.name}-${hash}`,
      namespace: d.metadata.namespace,
      labels,
      annotations: {
        [REVISION]: String(revision),
        'deployment.kubernetes.io/desired-replicas': String(desired),
        'deployment.kubernetes.io/max-replicas': String(desired + resolve((s.strategy as Obj | undefined)?.rollingUpdate?.maxSurge, desired, true)),
      },
      ownerReferences: [owner],
    },
    spec: { replicas, selector, template: rsTemplate },
  } as unknown as KubeObject;
}

/** Writes a Deployment's status from its ReplicaSets; a rollout still progressing is looked at again at its deadline. */
function writeDeploymentStatus(api: ControllerContext['api'], queue: WorkQueue, d: KubeObject, all: KubeObject[], newRs: KubeObject | undefined): void {
  const deployments = api.type('apps', 'deployments');
  const s = spec(d);
  const desired = Number(s.replicas ?? 1);
  const sum = (f: string): number => all.reduce((n, rs) => n + Number(status(rs)[f] ?? 0), 0);
  const replicas = sum('replicas');
  const available = sum('availableReplicas');
  const updated = Number((newRs && status(newRs).replicas) ?? 0);
  const maxUnavailable = s.strategy?.type === 'Recreate' ? 0 : resolve(s.strategy?.rollingUpdate?.maxUnavailable ?? '25%', desired, false);
  const now = api
    .now()
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
  const old = status(d);
  const next: Obj = { observedGeneration: d.metadata.generation, replicas, updatedReplicas: updated, readyReplicas: sum('readyReplicas'), availableReplicas: available };
  if (replicas - available > 0) next.unavailableReplicas = replicas - available;
  for (const f of ['replicas', 'updatedReplicas', 'readyReplicas', 'availableReplicas'] as const) if (next[f] === 0) delete next[f];
  let conditions = old.conditions as Obj[] | undefined;
  conditions = setCondition(
    conditions,
    available >= desired - maxUnavailable
      ? { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' }
      : { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' },
    now,
    true,
  );
  const rsName = newRs?.metadata.name ?? '';
  const complete = updated === desired && replicas === updated && available === updated && Number(newRs ? spec(newRs).replicas : -1) === desired;
  const progressing = conditions.find((c) => c.type === 'Progressing');
  const deadline = Number(s.progressDeadlineSeconds ?? 600) * 1000;
  let progress: Obj;
  if (complete) {
    progress = { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "${rsName}" has successfully progressed.` };
  } else if (
    progressing?.reason === 'ProgressDeadlineExceeded' ||
    (progressing && Date.parse(progressing.lastUpdateTime as string) + deadline < api.now().getTime() && progressing.reason !== 'NewReplicaSetAvailable')
  ) {
    progress = { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${rsName}" has timed out progressing.` };
  } else {
    const moved = JSON.stringify([old.updatedReplicas, old.availableReplicas, old.replicas]) !== JSON.stringify([next.updatedReplicas, next.availableReplicas, next.replicas]);
    progress = { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: `ReplicaSet "${rsName}" is progressing.` };
    conditions = setCondition(conditions, progress, now, true);
    if (moved) conditions = conditions.map((c) => (c.type === 'Progressing' ? { ...c, lastUpdateTime: now } : c));
    queue.addAfter(key(d), deadline + 50);
    next.conditions = conditions;
    writeStatus(api, deployments, d, next);
    return;
  }
  next.conditions = setCondition(conditions, progress, now, true);
  writeStatus(api, deployments, d, next);
}

export function startDeploymentController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const deployments = api.type('apps', 'deployments');
  const rsType = api.type('apps', 'replicasets');

  function scale(rs: KubeObject, replicas: number): void {
    if (Number(spec(rs).replicas ?? 0) === replicas) return;
    const next = structuredClone(rs);
    (next.spec as Obj).replicas = replicas;
    next.metadata.annotations = { ...next.metadata.annotations, 'deployment.kubernetes.io/desired-replicas': String(replicas) };
    api.update(rsType, next, { manager: CONTROLLER_MANAGER });
  }

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const d = api.peek(deployments, namespace, name);
    if (!d || d.metadata.deletionTimestamp) return;
    const s = spec(d);
    const desired = Number(s.replicas ?? 1);
    const template = (s.template as Obj | undefined) ?? {};
    const hash = templateHash(template);
    const owned = () => api.controlledBy(rsType, d);
    const revisionOf = (rs: KubeObject): number => Number(rs.metadata.annotations?.[REVISION] ?? 0);

    let all = owned();
    let newRs = all.find((rs) => JSON.stringify(withoutHash(spec(rs).template as Obj)) === JSON.stringify(withoutHash(template)));
    const maxRevision = Math.max(0, ...all.map(revisionOf));
    if (!newRs && !s.paused) {
      const oldTotal = all.reduce((n, rs) => n + Number(spec(rs).replicas ?? 0), 0);
      newRs = api.create(rsType, newReplicaSet(d, controllerRef(d, deployments), hash, maxRevision + 1, oldTotal === 0 ? desired : 0), { manager: CONTROLLER_MANAGER });
      all = owned();
    } else if (newRs && revisionOf(newRs) < maxRevision) {
      // Rolling back to an older template makes its ReplicaSet the newest revision.
      const next = structuredClone(newRs);
      next.metadata.annotations = { ...next.metadata.annotations, [REVISION]: String(maxRevision + 1) };
      newRs = api.update(rsType, next, { manager: CONTROLLER_MANAGER });
      all = owned();
    }
    const olds = all.filter((rs) => rs.metadata.uid !== newRs?.metadata.uid).sort((a, b) => revisionOf(a) - revisionOf(b));
    const strategy = (s.strategy as Obj | undefined) ?? {};

    if (newRs && !s.paused) {
      if (strategy.type === 'Recreate') {
        for (const rs of olds) scale(rs, 0);
        const oldPods = olds.reduce((n, rs) => n + Number(status(rs).replicas ?? 0), 0);
        if (oldPods === 0) scale(newRs, desired);
      } else {
        let maxSurge = resolve(strategy.rollingUpdate?.maxSurge ?? '25%', desired, true);
        let maxUnavailable = resolve(strategy.rollingUpdate?.maxUnavailable ?? '25%', desired, false);
        if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
        if (desired === 0) maxSurge = 0;
        const current = (rs: KubeObject): number => Number(spec(rs).replicas ?? 0);
        // Scale up the new ReplicaSet within the surge.
        const total = all.reduce((n, rs) => n + current(rs), 0);
        const newCount = current(newRs);
        if (newCount > desired) scale(newRs, desired);
        else if (newCount < desired) {
          const room = desired + maxSurge - total;
          if (room > 0) scale(newRs, Math.min(desired, newCount + room));
        }
        newRs = api.getShared(rsType, namespace, newRs.metadata.name);
        // Scale down old ones while enough pods stay available.
        const minAvailable = desired - maxUnavailable;
        const allPods = all.reduce((n, rs) => n + (rs.metadata.uid === newRs!.metadata.uid ? current(newRs!) : current(rs)), 0);
        const newUnavailable = Math.max(0, current(newRs) - Number(status(newRs).availableReplicas ?? 0));
        let budget = Math.max(0, allPods - minAvailable - newUnavailable);
        for (const rs of olds) {
          const unhealthy = Math.max(0, current(rs) - Number(status(rs).availableReplicas ?? 0));
          const cut = Math.min(unhealthy, budget);
          if (cut > 0) {
            scale(rs, current(rs) - cut);
            budget -= cut;
          }
        }
        const refreshed = owned();
        const available = refreshed.reduce((n, rs) => n + Number(status(rs).availableReplicas ?? 0), 0);
        let canDown = Math.max(0, available - minAvailable);
        for (const old of olds) {
          const rs = refreshed.find((r) => r.metadata.uid === old.metadata.uid);
          if (!rs || canDown <= 0) continue;
          const cut = Math.min(current(rs), canDown);
          if (cut > 0) {
            scale(rs, current(rs) - cut);
            canDown -= cut;
          }
        }
      }
      // Old, empty ReplicaSets beyond the history limit go.
      const limit = Number(s.revisionHistoryLimit ?? 10);
      const empty = owned()
        .filter((rs) => rs.metadata.uid !== newRs!.metadata.uid && Number(spec(rs).replicas ?? 0) === 0 && Number(status(rs).replicas ?? 0) === 0)
        .sort((a, b) => revisionOf(a) - revisionOf(b));
      for (const rs of empty.slice(0, Math.max(0, empty.length - limit))) api.delete(rsType, namespace, rs.metadata.name);
    }

    writeDeploymentStatus(api, queue, api.getShared(deployments, namespace, name), owned(), newRs && api.peek(rsType, namespace, newRs.metadata.name));
  }

  // Not runOwnerController: reconcile re-queues itself for the progress deadline.
  const queue = new WorkQueue(reconcile);
  const unsubscribe = api.store.subscribe((event) => {
    if (isEvent(event, 'apps', 'deployments')) queue.add(key(event.object));
    else if (isEvent(event, 'apps', 'replicasets')) {
      const ref = controllerOf(event.object);
      if (ref?.kind === 'Deployment') queue.add(`${event.object.metadata.namespace}/${ref.name}`);
    }
  });
  for (const d of api.scan(deployments)) queue.add(key(d));
  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
