/**
 * The endpoints, endpointslice and persistent-volume controllers.
 *
 * Endpoints/EndpointSlice: a Service with a selector gets an Endpoints
 * object of the same name and one EndpointSlice (`kubernetes.io/service-name`
 * label, owned by the Service) listing the selected pods that have an IP:
 * ready ones as addresses, others as notReadyAddresses (ready: false in the
 * slice). Named target ports are resolved against the first selected pod.
 *
 * Volumes: a Pending PVC without a class gets the default StorageClass; one
 * naming a volume binds to it; otherwise, as the PV controller does, to the
 * smallest Available PV of its class (pre-bound to it, or free) with its
 * volume mode, access modes, enough capacity and labels its selector asks
 * for; failing that a PV `pvc-<uid>` is provisioned for a class with a
 * provisioner (not `kubernetes.io/no-provisioner`, whose claims wait for a
 * matching PV to appear), and both go Bound (WaitForFirstConsumer binds at
 * once too). Deleting a PVC deletes its provisioned PV (reclaim Delete) or
 * releases it (Retain). The `kubernetes.io/pvc-protection` finalizer holds
 * a PVC that a pod still uses.
 */
import type { KubeObject } from '../resources.js';
import { matchesSelector } from '../selectors.js';
import { CONTROLLER_MANAGER, controllerRef, isEvent, isPodActive, isPodReady, key, spec, splitKey, status, WorkQueue, type Controller, type ControllerContext } from './base.js';

type Obj = Record<string, any>;
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
/** The provisioner of local volumes: nothing is provisioned, claims bind to PVs made beforehand. */
const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A resource quantity (`5Gi`, `500M`, `1e3`) in bytes; NaN when it is not one. */
export function quantityBytes(q: unknown): number {
  const m = /^([0-9.]+)(?:[eE]([-+]?\d+))?(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/.exec(String(q).trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * 10 ** Number(m[2] ?? 0) * (BINARY[m[3] ?? ''] ?? DECIMAL[m[3] ?? '']!);
}

export function startEndpointsController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const services = api.type('', 'services');
  const endpoints = api.type('', 'endpoints');
  const slices = api.type('discovery.k8s.io', 'endpointslices');
  const pods = api.type('', 'pods');

  function targetPort(port: Obj, sample: KubeObject | undefined): number {
    const target = port.targetPort ?? port.port;
    if (typeof target === 'number') return target;
    for (const c of (spec(sample ?? ({} as KubeObject)).containers as Obj[] | undefined) ?? []) {
      for (const p of (c.ports as Obj[] | undefined) ?? []) if (p.name === target) return Number(p.containerPort);
    }
    return Number(port.port);
  }

  function upsert(type: typeof endpoints, obj: KubeObject): void {
    const existing = api.peek(type, obj.metadata.namespace, obj.metadata.name);
    if (!existing) api.create(type, obj, { manager: CONTROLLER_MANAGER });
    else api.update(type, { ...obj, metadata: { ...existing.metadata, labels: obj.metadata.labels } }, { manager: CONTROLLER_MANAGER });
  }

  function reconcile(k: string): void {
    const { namespace, name } = splitKey(k);
    const svc = api.peek(services, namespace, name);
    const ownSlices = api.selectByLabels(slices, namespace, { [SERVICE_NAME_LABEL]: name, [MANAGED_BY]: 'endpointslice-controller.k8s.io' });
    const selector = svc && (spec(svc).selector as Record<string, string> | undefined);
    if (!svc || !selector || svc.metadata.deletionTimestamp || spec(svc).type === 'ExternalName') {
      if (!svc && api.find(endpoints, namespace, name)?.metadata.labels?.['endpoints.kubernetes.io/managed-by'] === 'endpoint-controller') api.delete(endpoints, namespace, name);
      return;
    }
    // The Service's pods from the label index (an empty selector selects every pod, as before).
    const selected = api.selectByLabels(pods, namespace, selector).filter((p) => isPodActive(p) && status(p).podIP);
    const ports = ((spec(svc).ports as Obj[] | undefined) ?? []).map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      port: targetPort(p, selected[0]),
      protocol: p.protocol ?? 'TCP',
    }));
    const address = (p: KubeObject): Obj => ({
      ip: status(p).podIP,
      nodeName: spec(p).nodeName,
      targetRef: { kind: 'Pod', namespace, name: p.metadata.name, uid: p.metadata.uid },
    });
    const ready = selected.filter(isPodReady);
    const notReady = selected.filter((p) => !isPodReady(p));
    const subset: Obj = {};
    if (ready.length) subset.addresses = ready.map(address);
    if (notReady.length) subset.notReadyAddresses = notReady.map(address);
    subset.ports = ports;
    const labels = { ...svc.metadata.labels, 'endpoints.kubernetes.io/managed-by': 'endpoint-controller' };
    upsert(endpoints, { metadata: { name, namespace, labels }, ...(selected.length ? { subsets: [subset] } : {}) } as unknown as KubeObject);

    const slice: Obj = {
      metadata: {
        namespace,
        labels: { ...svc.metadata.labels, [SERVICE_NAME_LABEL]: name, [MANAGED_BY]: 'endpointslice-controller.k8s.io' },
        ownerReferences: [controllerRef(svc, services)],
      },
      addressType: 'IPv4',
      endpoints: selected.map((p) => ({
        addresses: [status(p).podIP],
        conditions: { ready: isPodReady(p), serving: isPodReady(p), terminating: false },
        nodeName: spec(p).nodeName,
        targetRef: { kind: 'Pod', namespace, name: p.metadata.name, uid: p.metadata.uid },
      })),
      ports,
    };
    if (ownSlices.length === 0) {
      slice.metadata.generateName = `${name}-`;
      api.create(slices, slice as KubeObject, { manager: CONTROLLER_MANAGER });
    } else {
      const [first, ...extra] = ownSlices;
      api.update(slices, { ...slice, metadata: { ...first!.metadata, labels: slice.metadata.labels } } as KubeObject, { manager: CONTROLLER_MANAGER });
      for (const e of extra) api.delete(slices, namespace, e.metadata.name);
    }
  }

  const queue = new WorkQueue(reconcile);
  const unsubscribe = api.store.subscribe((event) => {
    if (isEvent(event, '', 'services')) queue.add(key(event.object));
    else if (isEvent(event, '', 'pods')) {
      // Only the Services that select the pod, before or after the change, have endpoints to redo.
      const selects = (svc: KubeObject, pod: KubeObject | undefined): boolean => {
        const selector = spec(svc).selector as Record<string, string> | undefined;
        return !!pod && !!selector && Object.entries(selector).every(([lk, v]) => pod.metadata.labels?.[lk] === v);
      };
      for (const svc of api.scan(services, event.object.metadata.namespace)) {
        if (selects(svc, event.object) || selects(svc, event.old)) queue.add(key(svc));
      }
    }
  });
  for (const svc of api.scan(services)) queue.add(key(svc));
  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}

const claimRefOf = (pvc: KubeObject): Obj => ({
  kind: 'PersistentVolumeClaim',
  namespace: pvc.metadata.namespace,
  name: pvc.metadata.name,
  uid: pvc.metadata.uid,
  apiVersion: 'v1',
});

/** Whether an active pod mounts the claim `name`. */
const usesClaim = (p: KubeObject, name: string): boolean =>
  isPodActive(p) && ((spec(p).volumes as Obj[] | undefined) ?? []).some((v) => v.persistentVolumeClaim?.claimName === name);

/** The PV a provisioner makes for a claim of class `sc`. */
function provisionedVolume(pvc: KubeObject, sc: KubeObject, request: unknown): KubeObject {
  const s = spec(pvc);
  return {
    metadata: { name: `pvc-${pvc.metadata.uid}`, annotations: { 'pv.kubernetes.io/provisioned-by': String(sc.provisioner ?? '') } },
    spec: {
      capacity: { storage: request },
      accessModes: s.accessModes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: sc.reclaimPolicy ?? 'Delete',
      storageClassName: sc.metadata.name,
      claimRef: claimRefOf(pvc),
      volumeMode: s.volumeMode ?? 'Filesystem',
      hostPath: { path: `/var/lib/vnfm-sandbox/volumes/pvc-${pvc.metadata.uid}`, type: 'DirectoryOrCreate' },
    },
  } as unknown as KubeObject;
}

/** The PV controller's choice for a claim: pre-bound to it first, else the smallest free one that fits. */
function matchingVolume(volumes: KubeObject[], pvc: KubeObject): KubeObject | undefined {
  const s = spec(pvc);
  const cls = (s.storageClassName as string | undefined) ?? '';
  const want = quantityBytes(s.resources?.requests?.storage ?? '0');
  const modes = (s.accessModes as string[] | undefined) ?? [];
  const fits = volumes.filter((pv) => {
    const v = spec(pv);
    if (pv.metadata.deletionTimestamp || status(pv).phase !== 'Available') return false;
    if (v.claimRef && !(v.claimRef.name === pvc.metadata.name && v.claimRef.namespace === pvc.metadata.namespace && (!v.claimRef.uid || v.claimRef.uid === pvc.metadata.uid)))
      return false;
    if (((v.storageClassName as string | undefined) ?? '') !== cls) return false;
    if ((v.volumeMode ?? 'Filesystem') !== (s.volumeMode ?? 'Filesystem')) return false;
    if (!modes.every((m) => ((v.accessModes as string[] | undefined) ?? []).includes(m))) return false;
    if (s.selector && !matchesSelector(s.selector, pv.metadata.labels)) return false;
    return quantityBytes(v.capacity?.storage ?? '0') >= want;
  });
  const size = (pv: KubeObject) => quantityBytes(spec(pv).capacity?.storage ?? '0');
  return fits.find((pv) => spec(pv).claimRef) ?? fits.sort((a, b) => size(a) - size(b) || (a.metadata.name < b.metadata.name ? -1 : 1))[0];
}

/** A deleted claim's volumes: deleted (reclaim policy Delete) or Released. */
function releaseVolumes(api: ControllerContext['api'], claim: KubeObject): void {
  const volumes = api.type('', 'persistentvolumes');
  for (const pv of api.list(volumes)) {
    if (spec(pv).claimRef?.uid !== claim.metadata.uid) continue;
    if (spec(pv).persistentVolumeReclaimPolicy === 'Delete') api.delete(volumes, undefined, pv.metadata.name);
    else api.update(volumes, { ...pv, status: { phase: 'Released' } }, { subresource: 'status', manager: CONTROLLER_MANAGER });
  }
}

export function startVolumeController(ctx: ControllerContext): Controller {
  const { api } = ctx;
  const claims = api.type('', 'persistentvolumeclaims');
  const volumes = api.type('', 'persistentvolumes');
  const classes = api.type('storage.k8s.io', 'storageclasses');
  const pods = api.type('', 'pods');

  function defaultClass(): KubeObject | undefined {
    return api.list(classes).find((c) => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true');
  }

  function bind(pvc: KubeObject, volume: KubeObject): void {
    const claimRef = claimRefOf(pvc);
    const pv = api.get(volumes, undefined, volume.metadata.name);
    let boundPv = pv;
    if (spec(pv).claimRef?.uid !== pvc.metadata.uid) {
      boundPv = api.update(volumes, { ...pv, spec: { ...spec(pv), claimRef } }, { manager: CONTROLLER_MANAGER });
    }
    api.update(volumes, { ...boundPv, status: { phase: 'Bound' } }, { subresource: 'status', manager: CONTROLLER_MANAGER });
    const next = structuredClone(pvc);
    (next.spec as Obj).volumeName = pv.metadata.name;
    next.metadata.annotations = { ...next.metadata.annotations, 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' };
    const updated = api.update(claims, next, { manager: CONTROLLER_MANAGER });
    api.update(
      claims,
      { ...updated, status: { phase: 'Bound', accessModes: spec(pv).accessModes, capacity: spec(pv).capacity } },
      { subresource: 'status', manager: CONTROLLER_MANAGER },
    );
  }

  function reconcileClaim(namespace: string, name: string): void {
    const pvc = api.find(claims, namespace, name);
    if (!pvc) return;
    if (pvc.metadata.deletionTimestamp) {
      const inUse = api.list(pods, namespace).some((p) => usesClaim(p, name));
      if (!inUse && pvc.metadata.finalizers?.includes(PVC_PROTECTION)) {
        api.update(claims, { ...pvc, metadata: { ...pvc.metadata, finalizers: pvc.metadata.finalizers.filter((f) => f !== PVC_PROTECTION) } }, { manager: CONTROLLER_MANAGER });
      }
      return;
    }
    if (!pvc.metadata.finalizers?.includes(PVC_PROTECTION)) {
      api.update(claims, { ...pvc, metadata: { ...pvc.metadata, finalizers: [...(pvc.metadata.finalizers ?? []), PVC_PROTECTION] } }, { manager: CONTROLLER_MANAGER });
      return;
    }
    if (status(pvc).phase === 'Bound') return;
    if (ctx.faults.neverReady([{ kind: 'PersistentVolumeClaim', object: pvc }])) return;
    const s = spec(pvc);
    if (s.storageClassName === undefined && !s.volumeName) {
      const dflt = defaultClass();
      if (dflt) {
        api.update(claims, { ...pvc, spec: { ...s, storageClassName: dflt.metadata.name } }, { manager: CONTROLLER_MANAGER });
        return;
      }
    }
    if (s.volumeName) {
      const pv = api.find(volumes, undefined, s.volumeName as string);
      if (pv && (!spec(pv).claimRef || spec(pv).claimRef.uid === pvc.metadata.uid || spec(pv).claimRef.name === name)) bind(pvc, pv);
      return;
    }
    const request = s.resources?.requests?.storage ?? '1Gi';
    const match = matchingVolume(api.list(volumes), pvc);
    if (match) {
      bind(pvc, match);
      return;
    }
    if (!s.storageClassName) return;
    const sc = api.find(classes, undefined, s.storageClassName as string);
    // Pending, as with a class nobody provisions: local volumes bind only to PVs made for them.
    if (!sc || sc.provisioner === NO_PROVISIONER) return;
    const pv = api.create(volumes, provisionedVolume(pvc, sc, request), { manager: CONTROLLER_MANAGER });
    bind(pvc, pv);
  }

  /** Claims still waiting for a volume: a new Available PV may be theirs. */
  function requeuePending(): void {
    for (const pvc of api.list(claims)) if (status(pvc).phase !== 'Bound' && !pvc.metadata.deletionTimestamp) queue.add(key(pvc));
  }

  const released = new Map<string, KubeObject>();
  const queue = new WorkQueue((k) => {
    if (k.startsWith('released:')) {
      const claim = released.get(k);
      released.delete(k);
      if (claim) releaseVolumes(api, claim);
      return;
    }
    if (k.startsWith('pv:')) {
      const pv = api.find(volumes, undefined, k.slice(3));
      if (pv && status(pv).phase !== 'Available' && (!spec(pv).claimRef || !spec(pv).claimRef.uid)) {
        // A PV made free, or pre-bound by name to a claim (no uid yet), is Available.
        api.update(volumes, { ...pv, status: { phase: 'Available' } }, { subresource: 'status', manager: CONTROLLER_MANAGER });
      }
      if (pv && status(api.get(volumes, undefined, pv.metadata.name)).phase === 'Available') requeuePending();
      return;
    }
    const { namespace, name } = splitKey(k);
    reconcileClaim(namespace ?? '', name);
  });
  const unsubscribe = api.store.subscribe((event) => {
    if (isEvent(event, '', 'persistentvolumeclaims')) {
      if (event.type === 'DELETED') {
        released.set(`released:${event.object.metadata.uid}`, event.object);
        queue.add(`released:${event.object.metadata.uid}`);
      } else queue.add(key(event.object));
    } else if (isEvent(event, '', 'persistentvolumes') && event.type === 'ADDED') {
      queue.add(`pv:${event.object.metadata.name}`);
    } else if (isEvent(event, '', 'pods') && (event.type === 'DELETED' || !isPodActive(event.object))) {
      for (const v of (spec(event.object).volumes as Obj[] | undefined) ?? []) {
        if (v.persistentVolumeClaim?.claimName) queue.add(`${event.object.metadata.namespace}/${v.persistentVolumeClaim.claimName}`);
      }
    }
  });
  // A claim held Pending by a fault rule binds once the rule is lifted.
  const previous = ctx.faults.onChange;
  ctx.faults.onChange = () => {
    previous();
    requeuePending();
  };
  for (const pvc of api.list(claims)) queue.add(key(pvc));
  return {
    stop() {
      unsubscribe();
      queue.stop();
    },
  };
}
