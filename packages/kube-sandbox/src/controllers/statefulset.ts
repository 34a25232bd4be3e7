/**
 * The StatefulSet controller: pods `<name>-0 … <name>-(n-1)`, created in
 * order (OrderedReady: the next once the previous is Running and Ready;
 * Parallel: all at once), removed from the highest ordinal down; a PVC per
 * volumeClaimTemplate and ordinal (`<template>-<name>-<i>`), kept when the
 * set scales down or goes (the Retain policy); a ControllerRevision per
 * template; RollingUpdate replaces pods of an old revision from the highest
 * ordinal down, one at a time, above `partition`. OnDelete waits for the
 * user to delete pods.
 */
import type { KubeObject } from '../resources.js';
import {
  CONTROLLER_MANAGER,
  controllerRef,
  isControlledBy,
  isPodReady,
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
const REVISION_LABEL = 'controller-revision-hash';

/** The set's pods by ordinal (`<name>-<i>`). */
function podsByOrdinal(pods: KubeObject[], sts: KubeObject): Map<number, KubeObject> {
  const name = sts.metadata.name;
  const byOrdinal = new Map<number, KubeObject>();
  for (const p of pods) {
    if (!isControlledBy(p, sts)) continue;
    const m = new RegExp(`^${name.replace(/[.]/g, '\\.')}-(\\d+)$`).exec(p.metadata.name);
    if (m) byOrdinal.set(Number(m[1]), p);
  }
  return byOrdinal;
}

/** The set's status from its live pods (`current`). */
function statefulSetStatus(sts: KubeObject, current: KubeObject[], replicas: number, updateRevision: string): Obj {
  const ready = current.filter(isPodReady).length;
  const updated = current.filter((p) => p.metadata.labels?.[REVISION_LABEL] === updateRevision).length;
  const old = status(sts);
  const done = updated === replicas && ready === replicas && current.length === replicas;
  const currentRevision = done || !old.currentRevision ? updateRevision : (old.currentRevision as string);
  const next: Obj = {
    observedGeneration: sts.metadata.generation,
    replicas: current.length,
    readyReplicas: ready,
    currentReplicas: current.filter((p) => p.metadata.labels?.[REVISION_LABEL] === currentRevision).length,
    updatedReplicas: updated,
    availableReplicas: ready,
    currentRevision,
    updateRevision,
    collisionCount: 0,
  };
  if (next.readyReplicas === 0) delete next.readyReplicas;
  return next;
}

export function startStatefulSetController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const sets = api.type('apps', 'statefulsets');
  const pods = api.type('', 'pods');
  const claims = api.type('', 'persistentvolumeclaims');
  const revisions = api.type('apps', 'controllerrevisions');

  function ensureRevision(sts: KubeObject, hash: string): string {
    const name = `${sts.metadata.name}-${hash}`;
    if (!api.find(revisions, sts.metadata.namespace, name)) {
      const existing = api.controlledBy(revisions, sts);
      const revision = Math.max(0, ...existing.map((r) => Number(r.revision ?? 0))) + 1;
      api.create(
        revisions,
        {
          metadata: {
            name,
            namespace: sts.metadata.namespace,
            labels: { ...((spec(sts).template as Obj | undefined)?.metadata?.labels as object | undefined), [REVISION_LABEL]: name },
            ownerReferences: [controllerRef(sts, sets)],
          },
          data: { spec: { template: { ...structuredClone(spec(sts).template), $patch: 'replace' } } },
          revision,
        } as unknown as KubeObject,
        { manager: CONTROLLER_MANAGER },
      );
    }
    return name;
  }

  function ensureClaims(sts: KubeObject, ordinal: number): Obj[] {
    const volumes: Obj[] = [];
    for (const t of (spec(sts).volumeClaimTemplates as Obj[] | undefined) ?? []) {
      const templateName = t.metadata?.name as string;
      const claimName = `${templateName}-${sts.metadata.name}-${ordinal}`;
      if (!api.find(claims, sts.metadata.namespace, claimName)) {
        const selectorLabels = (spec(sts).selector as Obj | undefined)?.matchLabels ?? {};
        api.create(
          claims,
          {
            metadata: { name: claimName, namespace: sts.metadata.namespace, labels: { ...t.metadata?.labels, ...selectorLabels } },
            spec: structuredClone(t.spec ?? {}),
          } as unknown as KubeObject,
          { manager: CONTROLLER_MANAGER },
        );
      }
      volumes.push({ name: templateName, persistentVolumeClaim: { claimName } });
    }
    return volumes;
  }

  function createPod(sts: KubeObject, ordinal: number, revision: string): void {
    const name = `${sts.metadata.name}-${ordinal}`;
    const volumes = ensureClaims(sts, ordinal);
    const pod = podFromTemplate(sts, controllerRef(sts, sets), (spec(sts).template as Obj | undefined) ?? {}, {
      name,
      labels: { [REVISION_LABEL]: revision, 'statefulset.kubernetes.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(ordinal) },
    });
    const podSpec = pod.spec as Obj;
    podSpec.hostname = name;
    if (spec(sts).serviceName) podSpec.subdomain = spec(sts).serviceName;
    if (volumes.length) {
      const names = new Set(volumes.map((v) => v.name));
      podSpec.volumes = [...((podSpec.volumes as Obj[] | undefined) ?? []).filter((v) => !names.has(v.name)), ...volumes];
    }
    api.create(pods, pod, { manager: CONTROLLER_MANAGER });
  }

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const sts = api.peek(sets, namespace, name);
    if (!sts) return;
    const s = spec(sts);
    const replicas = Number(s.replicas ?? 1);
    const parallel = s.podManagementPolicy === 'Parallel';
    // Its pods from the owner index: the same pods, in the same order, as a list of the namespace filtered by controller.
    const byOrdinal = podsByOrdinal(api.controlledBy(pods, sts), sts);
    const update = templateHash(s.template);
    let updateRevision = `${name}-${update}`;

    if (!sts.metadata.deletionTimestamp) {
      updateRevision = ensureRevision(sts, update);
      let blocked = false;
      for (let i = 0; i < replicas && !blocked; i++) {
        const pod = byOrdinal.get(i);
        if (!pod) {
          createPod(sts, i, updateRevision);
          if (!parallel) blocked = true;
          continue;
        }
        const phase = status(pod).phase;
        if (!pod.metadata.deletionTimestamp && (phase === 'Failed' || phase === 'Succeeded')) {
          api.delete(pods, namespace, pod.metadata.name, { gracePeriodSeconds: 0 });
          if (!parallel) blocked = true;
          continue;
        }
        if (!parallel && (pod.metadata.deletionTimestamp || !isPodReady(pod))) blocked = true;
      }
      const condemned = [...byOrdinal.keys()].filter((i) => i >= replicas).sort((a, b) => b - a);
      const anyTerminating = [...byOrdinal.values()].some((p) => p.metadata.deletionTimestamp);
      if (parallel) {
        for (const i of condemned) if (!byOrdinal.get(i)!.metadata.deletionTimestamp) api.delete(pods, namespace, byOrdinal.get(i)!.metadata.name);
      } else if (!blocked && condemned.length && !anyTerminating) {
        api.delete(pods, namespace, byOrdinal.get(condemned[0]!)!.metadata.name);
      }
      const strategy = (s.updateStrategy as Obj | undefined) ?? {};
      const allReady = [...Array(replicas).keys()].every((i) => byOrdinal.get(i) && isPodReady(byOrdinal.get(i)!) && !byOrdinal.get(i)!.metadata.deletionTimestamp);
      if (strategy.type !== 'OnDelete' && allReady && condemned.length === 0 && !anyTerminating) {
        const partition = Number(strategy.rollingUpdate?.partition ?? 0);
        for (let i = replicas - 1; i >= partition; i--) {
          const pod = byOrdinal.get(i)!;
          if (pod.metadata.labels?.[REVISION_LABEL] !== updateRevision) {
            api.delete(pods, namespace, pod.metadata.name);
            break;
          }
        }
      }
    }

    const current = api.controlledBy(pods, sts).filter((p) => !p.metadata.deletionTimestamp);
    writeStatus(api, sets, sts, statefulSetStatus(sts, current, replicas, updateRevision));
  }

  return runOwnerController(api, { type: sets, kind: 'StatefulSet' }, { group: '', resource: 'pods' }, reconcile);
}
