/**
 * Package validation: the CSAR structure (TOSCA.meta, manifest, hashes,
 * safety), the VNFD and its references, and the Kubernetes manifests — every
 * finding, not just the first. Offline; writes nothing.
 */
import { loadVnfd, lintKubernetesDefinitions, type Vnfd } from '../vnfd/index.js';
import { checkCsarStructure, type CheckStructureOptions } from './check-structure.js';
import type { Finding, PackageFiles } from './model.js';
import { openPackage, type PackageLimits } from './open-package.js';
import { findingsFromError } from './package-error.js';
import type { ToscaMeta } from './tosca-meta.js';

export interface PackageValidation {
  /** The package path as given. */
  origin: string;
  valid: boolean;
  findings: Finding[];
  meta?: ToscaMeta;
  vnfd?: Vnfd;
  /** The members that hold Kubernetes objects (`Files/**.yaml` with apiVersion/kind). */
  kubernetesDefinitions: string[];
}

export interface ValidateOptions extends CheckStructureOptions {
  limits?: Partial<PackageLimits>;
}

/** Opens and validates a package; the opened files are handed to `use` while still open, when given. */
export async function validatePackage(
  path: string,
  opts: ValidateOptions = {},
  use?: (files: PackageFiles, result: PackageValidation) => Promise<void>,
): Promise<PackageValidation> {
  let files: PackageFiles;
  try {
    files = await openPackage(path, opts.limits);
  } catch (err) {
    const findings = findingsFromError(err, path);
    return { origin: path, valid: false, findings, kubernetesDefinitions: [] };
  }
  try {
    const result = await validateFiles(files, opts);
    if (use && result.valid) await use(files, result);
    return result;
  } finally {
    await files.close();
  }
}

export async function validateFiles(files: PackageFiles, opts: CheckStructureOptions = {}): Promise<PackageValidation> {
  const structure = await checkCsarStructure(files, opts);
  const findings = [...structure.findings];
  let vnfd: Vnfd | undefined;
  const entry = structure.meta?.entryDefinitions;
  if (entry && files.has(entry)) {
    const loaded = await loadVnfd(files, entry);
    findings.push(...loaded.findings);
    vnfd = loaded.vnfd;
  }
  const kubernetesDefinitions = await findKubernetesDefinitions(files);
  if (kubernetesDefinitions.length > 0) {
    // VDU-to-workload names are checked only for CNFs: a VM-based VNF (BaseHOT) has no workloads.
    const isCnf = !files.list().some((p) => p.startsWith('BaseHOT/'));
    findings.push(...(await lintKubernetesDefinitions(files, kubernetesDefinitions, isCnf ? vnfd : undefined)));
  }
  const order = { error: 0, warning: 1, info: 2 } as const;
  findings.sort((a, b) => order[a.severity] - order[b.severity] || (a.file ?? '').localeCompare(b.file ?? '') || (a.line ?? 0) - (b.line ?? 0));
  return {
    origin: files.origin,
    valid: !findings.some((f) => f.severity === 'error'),
    findings,
    ...(structure.meta ? { meta: structure.meta } : {}),
    ...(vnfd ? { vnfd } : {}),
    kubernetesDefinitions,
  };
}

/** YAML members under Files/ that declare Kubernetes objects. */
async function findKubernetesDefinitions(files: PackageFiles): Promise<string[]> {
  const found: string[] = [];
  for (const path of files.list()) {
    if (!/^Files\/.+\.ya?ml$/i.test(path) || files.size(path) > 4 * 1024 * 1024) continue;
    const text = await files.readText(path).catch(() => '');
    if (/^apiVersion\s*:/m.test(text) && /^kind\s*:/m.test(text)) found.push(path);
  }
  return found;
}
