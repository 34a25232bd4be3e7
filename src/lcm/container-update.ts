/**
 * Tacker v2's container update, the Kubernetes side of a modification
 * (modify.ts): the images the new package's manifests give the deployed
 * workloads, container by container name; the ConfigMaps and Secrets that
 * metadata.configmap_secret_paths lists, replaced, with the workloads that
 * use them restarted; then the driver applies it and the VNFC records follow.
 */
import { echo, ValidationError } from '../errors.js';
import type { ResourceRef } from '../infra/driver.js';
import type { KubeObject, KubernetesInfraDriver, VduTarget } from '../infra/kubernetes/driver-contract.js';
import type { VimConnection, VnfInstance } from '../model/lcm.js';
import { vnfcRecords } from '../model/vnfcs.js';
import type { Flavour } from '../vnfd/index.js';
import { readPackageObjects, type OnboardedPackage } from './package-content.js';

/** The kinds whose container images Tacker's container update changes. */
const IMAGE_KINDS = new Set(['Pod', 'Deployment', 'ReplicaSet', 'DaemonSet']);
const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet', 'Pod']);
const FIXED_KINDS = new Set(['DaemonSet', 'Pod']);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The containers of a workload's pod template (a Pod's own). */
function containersOf(o: KubeObject): Json[] {
  const spec = (o as unknown as { spec?: Json }).spec;
  const podSpec = o.kind === 'Pod' ? spec : ((spec?.['template'] as Json | undefined)?.['spec'] as Json | undefined);
  const list = podSpec?.['containers'];
  return Array.isArray(list) ? (list.filter(isObject) as Json[]) : [];
}

/**
 * The objects deployed, each container of a Pod, Deployment, ReplicaSet or
 * DaemonSet taking the image the new package gives the container of the
 * same name in the object of the same kind and name.
 */
export function withNewImages(deployed: KubeObject[], fromNewPackage: KubeObject[]): { objects: KubeObject[]; changed: string[] } {
  const changed: string[] = [];
  const objects = deployed.map((o) => {
    if (!IMAGE_KINDS.has(o.kind)) return o;
    const twin = fromNewPackage.find((n) => n.kind === o.kind && n.metadata.name === o.metadata.name);
    if (!twin) return o;
    const images = new Map(containersOf(twin).map((c) => [c['name'], c['image']]));
    const copy = structuredClone(o);
    for (const c of containersOf(copy)) {
      const image = images.get(c['name']);
      if (typeof image === 'string' && image !== c['image']) {
        changed.push(`${o.kind}/${o.metadata.name} ${String(c['name'])}: ${String(c['image'])} → ${image}`);
        c['image'] = image;
      }
    }
    return copy;
  });
  return { objects, changed };
}

function withNamespace(objects: KubeObject[], namespace: string): KubeObject[] {
  return objects.map((o) =>
    (o.kind === 'Pod' && !o.metadata.namespace) || (o.metadata.namespace && o.metadata.namespace !== namespace) ? { ...o, metadata: { ...o.metadata, namespace } } : o,
  );
}

function workloadTargets(flavour: Flavour, objects: KubeObject[], namespace: string): VduTarget[] {
  return Object.entries(flavour.vdus).flatMap(([vduId, vdu]) => {
    const o = objects.find((x) => x.metadata.name === vdu.name && WORKLOAD_KINDS.has(x.kind));
    if (!o) return [];
    const resource: ResourceRef = { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace ?? namespace };
    return [{ vduId, resource }];
  });
}

/** The container update's work on a Kubernetes VNF: the deployed objects with the new images, applied over the current ones. */
export interface ContainerUpdate {
  objects: KubeObject[];
  sources: Record<string, string>;
  targets: VduTarget[];
  replicas: Record<string, number>;
  changed: string[];
  /** The definition files recorded afterwards (ConfigMap/Secret files replaced). */
  defFiles: string[];
  /**
   * ReplicaSets whose pod template changed (`Kind/name`): a ReplicaSet does
   * not replace its Pods when its template changes, so they are deleted and
   * it makes new ones, as Tacker's container update deletes them.
   */
  recreate: string[];
}

const CONFIG_KINDS = new Set(['ConfigMap', 'Secret']);
const kindName = (o: KubeObject) => `${o.kind}/${o.metadata.name}`;

/**
 * Tacker's container update also replaces ConfigMaps and Secrets: each file
 * of the new package listed in the request's metadata.configmap_secret_paths
 * takes the place of the deployed definition file that has the same
 * ConfigMaps/Secrets (by kind and name; a file with only some of them is
 * refused, as Tacker refuses it), and the workloads that use them restart.
 */
async function configReplacements(source: string, paths: unknown, defFiles: string[], oldPkg: OnboardedPackage, newPkg: OnboardedPackage) {
  const files = [...defFiles];
  const replaced = new Map<string, KubeObject>();
  if (paths === undefined) return { files, replaced };
  const field = 'metadata.configmap_secret_paths';
  if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string')) throw new ValidationError(source, field, 'must be a list of files of the new package');
  for (const path of paths as string[]) {
    if (!newPkg.hasMember(path))
      throw new ValidationError(source, field, `the new package has no file ${echo(path)}`, { hint: 'name ConfigMap/Secret manifests of the package the vnfdId names' });
    const wanted = (await readPackageObjects(newPkg.zip, [path])).objects.filter((o) => CONFIG_KINDS.has(o.kind));
    const names = new Set(wanted.map(kindName));
    let found = false;
    for (const [i, file] of defFiles.entries()) {
      const shared = (await readPackageObjects(oldPkg.zip, [file])).objects.filter((o) => names.has(kindName(o)));
      if (!shared.length) continue;
      if (shared.length !== wanted.length) {
        throw new ValidationError(source, field, `${path} has ${wanted.length} ConfigMaps/Secrets, and ${file}, which it replaces, ${shared.length} of them`, {
          hint: 'the new file must define the same ConfigMaps/Secrets as the one it replaces (as Tacker requires)',
        });
      }
      files[i] = path;
      for (const o of wanted) replaced.set(kindName(o), o);
      found = true;
      break;
    }
    if (!found) throw new ValidationError(source, field, `${path} defines no ConfigMap or Secret the instance deployed`);
  }
  return { files, replaced };
}

/** The names of the ConfigMaps and Secrets a pod spec uses (env, envFrom, volumes). */
function configsUsed(o: KubeObject): Set<string> {
  const spec = (o as unknown as { spec?: Json }).spec;
  const podSpec = (o.kind === 'Pod' ? spec : (spec?.['template'] as Json | undefined)?.['spec']) as Json | undefined;
  const out = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isObject(v)) return;
    for (const [k, x] of Object.entries(v)) {
      if ((k === 'configMapKeyRef' || k === 'configMapRef' || k === 'configMap') && isObject(x) && typeof x['name'] === 'string') out.add(`ConfigMap/${x['name']}`);
      else if ((k === 'secretKeyRef' || k === 'secretRef') && isObject(x) && typeof x['name'] === 'string') out.add(`Secret/${x['name']}`);
      else if (k === 'secret' && isObject(x) && typeof x['secretName'] === 'string') out.add(`Secret/${x['secretName']}`);
      else walk(x);
    }
  };
  walk(podSpec);
  return out;
}

/** The workload restarts (a new pod template annotation, as `kubectl rollout restart`); a bare Pod cannot and keeps running. */
function restarted(o: KubeObject, at: string): KubeObject {
  if (o.kind === 'Pod') return o;
  const copy = structuredClone(o) as KubeObject & { spec: { template: { metadata?: { annotations?: Record<string, string> } } } };
  const meta = (copy.spec.template.metadata ??= {});
  meta.annotations = { ...meta.annotations, 'kubectl.kubernetes.io/restartedAt': at };
  return copy;
}

export async function planContainerUpdate(
  instance: VnfInstance,
  source: string,
  oldPkg: OnboardedPackage,
  newPkg: OnboardedPackage,
  flavour: Flavour,
  images: 'new' | 'old',
  configPaths?: unknown,
  now?: string,
): Promise<ContainerUpdate> {
  const info = instance.instantiatedVnfInfo!;
  const defFiles = info.metadata['lcm-kubernetes-def-files'];
  const config = images === 'new' ? await configReplacements(source, configPaths, defFiles, oldPkg, newPkg) : { files: defFiles, replaced: new Map<string, KubeObject>() };
  const missing = config.files.filter((f) => !newPkg.hasMember(f));
  if (missing.length) {
    throw new ValidationError(source, 'vnfdId', `the new package lacks the definition files the instance was deployed from: ${missing.join(', ')}`, {
      hint: 'a modification changes images in place; to deploy other files, change the package instead: vnfm vnf-change-package VNF FILE',
    });
  }
  const old = await readPackageObjects(oldPkg.zip, defFiles);
  const deployed = withNamespace(
    old.objects.map((o) => config.replaced.get(kindName(o)) ?? o),
    info.metadata.namespace,
  );
  const next = images === 'new' ? (await readPackageObjects(newPkg.zip, config.files)).objects : [];
  const { objects: imaged, changed } = withNewImages(deployed, next);
  const objects = imaged.map((o) => {
    if (!IMAGE_KINDS.has(o.kind) || !config.replaced.size) return o;
    const uses = [...configsUsed(o)].filter((n) => config.replaced.has(n));
    // A bare Pod is not restarted (Tacker replaces it unchanged): its mounted ConfigMaps and Secrets follow by themselves.
    if (!uses.length || o.kind === 'Pod') return o;
    changed.push(`${o.kind}/${o.metadata.name}: restarted for ${uses.join(', ')}`);
    return restarted(o, now ?? new Date(0).toISOString());
  });
  for (const n of config.replaced.keys()) changed.push(`${n} replaced`);
  const template = (o: KubeObject | undefined) => JSON.stringify((o as { spec?: { template?: unknown } } | undefined)?.spec?.template);
  // Rolling back, the live ReplicaSets carry the failed update's templates, which the plan does not know: all are renewed.
  const recreate = objects.filter((o, i) => o.kind === 'ReplicaSet' && (images === 'old' || template(o) !== template(deployed[i]))).map(kindName);
  const targets = workloadTargets(flavour, objects, info.metadata.namespace);
  const replicas: Record<string, number> = {};
  for (const t of targets) {
    const n = info.metadata.vduReplicas[t.vduId];
    if (n !== undefined && !FIXED_KINDS.has(t.resource.kind)) replicas[`${t.resource.kind}/${t.resource.name}`] = n;
  }
  return { objects, sources: old.sources, targets, replicas, changed, defFiles: config.files, recreate };
}

export async function applyContainerUpdate(
  driver: KubernetesInfraDriver,
  ctx: Parameters<KubernetesInfraDriver['changePackage']>[0],
  instance: VnfInstance,
  update: ContainerUpdate,
  vim: VimConnection,
): Promise<VnfInstance> {
  const info = instance.instantiatedVnfInfo!;
  const resources = await driver.changePackage(ctx, {
    instanceId: instance.id,
    namespace: info.metadata.namespace,
    objects: update.objects,
    current: info.resources,
    replicas: update.replicas,
    sources: update.sources,
    vdus: update.targets,
    ...(info.metadata.vnfm_readiness ? { readiness: info.metadata.vnfm_readiness } : {}),
  });
  const stale = update.targets.filter((t) => update.recreate.includes(`${t.resource.kind}/${t.resource.name}`));
  if (stale.length) {
    const vnfcs = await driver.listVnfcs(ctx, stale);
    await driver.heal(ctx, { instanceId: instance.id, vnfcs, barePods: {}, ...(info.metadata.vnfm_readiness ? { readiness: info.metadata.vnfm_readiness } : {}) });
  }
  const fresh = vnfcRecords(await driver.listVnfcs(ctx, update.targets), vim.id);
  // VDUs this update does not list (custom resources) keep their records.
  const listed = new Set(update.targets.map((t) => t.vduId));
  return {
    ...instance,
    instantiatedVnfInfo: {
      ...info,
      resources,
      vnfcResourceInfo: [...info.vnfcResourceInfo.filter((v) => !listed.has(v.vduId)), ...fresh.vnfcResourceInfo],
      vnfcInfo: [...info.vnfcInfo.filter((v) => !listed.has(v.vduId)), ...fresh.vnfcInfo],
      metadata: { ...info.metadata, 'lcm-kubernetes-def-files': update.defFiles },
    },
  };
}
