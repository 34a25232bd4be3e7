/**
 * What the engine reads from an onboarded package: its VNFD, and the
 * Kubernetes objects of the definition files a request names, read from the
 * stored zip in place.
 */
import yaml from 'js-yaml';
import { ensurePackageContent, openStoredZip, packageZip, unpackedWorkDir, type VnfPackage } from '../csar/index.js';
import { parseToscaMeta, TOSCA_META_PATH } from '../csar/tosca-meta.js';
import { ValidationError, VnfmError } from '../errors.js';
import type { PackageContentRepository } from '../store/index.js';
import type { KubeObject } from '../infra/kubernetes/driver-contract.js';
import { sourceKey } from '../infra/kubernetes/package-kinds.js';
import { CREATE_ONLY_KINDS, loadVnfd, type Vnfd } from '../vnfd/index.js';
import type { PackageView } from './requests.js';
import type { PackageFiles } from '../model/package-files.js';
import type { ManifestCache } from './manifest-cache.js';

export interface OnboardedPackage extends PackageView {
  pkg: VnfPackage;
  vnfd: Vnfd;
  /** The stored zip: its members are read in place (`openStoredZip`). */
  zip: string;
  /**
   * The members under `prefix` ('' or absent: all) unpacked into a private
   * directory with the package's layout, for what needs real files (a
   * package script and its working directory, helm and a chart); made once
   * per process, removed when it exits.
   */
  workDir(prefix?: string): Promise<string>;
}

/** Where the engine finds packages: their directories under VNFM_HOME, and on the shared store their zips. */
export interface PackageSource {
  home: string;
  store: { packages: { get(id: string): Promise<VnfPackage> }; packageContents?: PackageContentRepository | undefined };
}

/** The onboarded package an instance was made from (or another, by id), opened. */
export async function packageOf(deps: PackageSource, pkgId: string): Promise<OnboardedPackage> {
  return openOnboarded(deps, await deps.store.packages.get(pkgId));
}

/**
 * Opens an onboarded package's files: every planner, package script and
 * management driver reaches them through what this returns (the zip read in
 * place, or a work directory unpacked from it). A client of the shared store
 * that lacks the zip fetches it first (given the store; given VNFM_HOME
 * alone, the zip must be there).
 */
export async function openOnboarded(from: PackageSource | string, pkg: VnfPackage): Promise<OnboardedPackage> {
  const deps = typeof from === 'string' ? { home: from, store: { packageContents: undefined } } : from;
  await ensurePackageContent({ home: deps.home, contents: deps.store.packageContents }, pkg);
  const zip = packageZip(deps.home, pkg.id);
  const broken = (why: string) => new VnfmError(`the stored copy of package ${pkg.id} at ${zip} ${why}`, { hint: 'onboard the package again (vnfm vnfpkg-onboard)' });
  let files;
  try {
    files = await openStoredZip(zip);
  } catch (err) {
    throw Object.assign(broken('cannot be read'), { cause: err });
  }
  try {
    const meta = files.has(TOSCA_META_PATH) ? parseToscaMeta(await files.readText(TOSCA_META_PATH)).meta : undefined;
    const entry = meta?.entryDefinitions;
    if (!entry) throw broken('has no Entry-Definitions');
    const { vnfd } = await loadVnfd(files, entry);
    if (!vnfd) throw broken('holds a VNFD that no longer loads');
    const members = new Set(files.list());
    return {
      pkg,
      vnfd,
      zip,
      workDir: (prefix = '') => unpackedWorkDir(deps.home, zip, prefix),
      hasMember: (path) => members.has(path),
      kubernetesDefinitions: pkg.summary.kubernetesDefinitions,
    };
  } finally {
    await files.close();
  }
}

/** The objects of the definition files, in file then document order. */
export async function readObjects(zip: string, defFiles: string[], cache?: ManifestCache): Promise<KubeObject[]> {
  return (await readPackageObjects(zip, defFiles, cache)).objects;
}

/**
 * The objects, and the file each came from (`<group>/<Kind>/<name>` → path)
 * for the driver's messages; each file parsed as before when `cache` has it
 * (manifest-cache.ts).
 */
export async function readPackageObjects(zip: string, defFiles: string[], cache?: ManifestCache): Promise<{ objects: KubeObject[]; sources: Record<string, string> }> {
  const files = await openStoredZip(zip);
  try {
    return await objectsOf(files, defFiles, cache);
  } finally {
    await files.close();
  }
}

async function objectsOf(files: PackageFiles, defFiles: string[], cache: ManifestCache | undefined): Promise<{ objects: KubeObject[]; sources: Record<string, string> }> {
  const objects: KubeObject[] = [];
  const sources: Record<string, string> = {};
  for (const file of defFiles) {
    if (!files.has(file)) throw new ValidationError(file, undefined, `is not in the package (${files.origin})`);
    const text = await files.readText(file, files.size(file));
    let docs = cache?.load(text);
    if (!docs) {
      try {
        docs = yaml.loadAll(text, undefined, { schema: yaml.DEFAULT_SCHEMA });
      } catch (err) {
        throw new ValidationError(file, undefined, `is not valid YAML: ${(err as Error).message}`);
      }
      // Before the checks below fill in what they fill in.
      cache?.save(text, docs);
    }
    docs.forEach((doc, i) => {
      if (doc === null || doc === undefined) return;
      const o = doc as Partial<KubeObject>;
      // A review kind may have no name: the driver creates it and keeps nothing, as Tacker does.
      const createOnly = typeof o === 'object' && typeof o.kind === 'string' && CREATE_ONLY_KINDS.has(o.kind);
      if (typeof o !== 'object' || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || (!createOnly && typeof o.metadata?.name !== 'string')) {
        throw new ValidationError(file, `document ${i + 1}`, 'is not a Kubernetes object (apiVersion, kind and metadata.name are required)');
      }
      if (createOnly && (o.metadata === null || typeof o.metadata !== 'object')) o.metadata = {} as KubeObject['metadata'];
      objects.push(o as KubeObject);
      // Unnamed objects (reviews) too: sourceKey knows them by their spec.
      sources[sourceKey(o as KubeObject)] ??= file;
    });
  }
  return { objects, sources };
}
