/**
 * Package validation: the CSAR structure (TOSCA.meta, manifest, hashes,
 * safety), the VNFD and its references, and the Kubernetes manifests — every
 * finding, not just the first. Offline; writes nothing.
 */
import { loadVnfd, lintKubernetesDefinitions, lintRenderedChart, type Vnfd } from '../vnfd/index.js';
import { checkCsarStructure, verifyPackageHashes, type CheckStructureOptions } from './check-structure.js';
import { chartFiles, checkChart, findCharts, inChartDirectory, type PackageChart } from './helm-chart.js';
import type { Finding, PackageFiles } from '../model/package-files.js';
import { openPackage, type FileTap, type OpenedPackage, type PackageLimits } from './open-package.js';
import { findingsFromError } from './package-error.js';
import { imageChecksums } from './sw-images.js';
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
  /** The package's Helm charts (archives and unpacked chart directories), well formed or not. */
  helmCharts: PackageChart[];
}

/** What Helm said about a chart: `helm lint`, then `helm template` when the lint passed. */
export interface ChartRendering {
  lint: { ok: boolean; output: string };
  /** `namespace`: the one the chart was rendered in (its objects without one go there). */
  template?: { ok: boolean; manifest: string; output: string; namespace?: string };
}

/**
 * Lints and renders a chart with the real Helm, offline (no cluster). The
 * chart's files are given relative to its root; the renderer writes them
 * where Helm can read them and removes them after.
 */
export interface ChartRenderer {
  render(chart: PackageChart, files: Map<string, Buffer>): Promise<ChartRendering>;
}

export interface ValidateOptions extends CheckStructureOptions {
  limits?: Partial<PackageLimits>;
  /**
   * Runs `helm lint` and `helm template` over each well-formed chart; without
   * it the chart's shape alone is checked. null: Helm was looked for and is
   * not there, which a note says.
   */
  chartRenderer?: ChartRenderer | null;
  /**
   * A rendered chart's objects that reach beyond the instance (cluster-scoped,
   * or in another namespace) are errors, not warnings (--strict).
   */
  strict?: boolean;
  /**
   * A zip only: handed every byte of the file by the same reading that
   * checks the members (onboarding hashes the package with it); the whole
   * file has passed through it before `use` is called.
   */
  tap?: FileTap;
}

/** Opens and validates a package; the opened files are handed to `use` while still open, when given. */
export async function validatePackage(
  path: string,
  opts: ValidateOptions = {},
  use?: (files: PackageFiles, result: PackageValidation) => Promise<void>,
): Promise<PackageValidation> {
  let files: OpenedPackage;
  try {
    files = await openPackage(path, opts.limits, opts.tap);
  } catch (err) {
    const findings = findingsFromError(err, path);
    return { origin: path, valid: false, findings, kubernetesDefinitions: [], helmCharts: [] };
  }
  try {
    const result = await validateFiles(files, opts);
    if (opts.tap && result.valid) await files.finishReading();
    if (use && result.valid) await use(files, result);
    return result;
  } finally {
    await files.close();
  }
}

export async function validateFiles(files: PackageFiles, opts: CheckStructureOptions & Pick<ValidateOptions, 'chartRenderer' | 'strict'> = {}): Promise<PackageValidation> {
  // The members are read once, after the VNFD: its image checksums are checked in the same reading as the manifest's hashes.
  const structure = await checkCsarStructure(files, { ...opts, deferHashes: true });
  const findings = [...structure.findings];
  let vnfd: Vnfd | undefined;
  const entry = structure.meta?.entryDefinitions;
  if (entry && files.has(entry)) {
    const loaded = await loadVnfd(files, entry);
    findings.push(...loaded.findings);
    vnfd = loaded.vnfd;
  }
  const images = vnfd ? imageChecksums(vnfd) : { declarations: [], findings: [] };
  findings.push(...images.findings, ...(await verifyPackageHashes(files, [...structure.declarations, ...images.declarations], opts)));
  const helmCharts: PackageChart[] = [];
  for (const chart of findCharts(files)) {
    const found = await checkChart(files, chart);
    if (!found) continue;
    helmCharts.push(chart);
    findings.push(...found);
    if (found.length === 0 && opts.chartRenderer) findings.push(...(await renderChart(files, chart, opts.chartRenderer, opts.strict === true)));
    else if (found.length === 0 && opts.chartRenderer === null) {
      findings.push({
        severity: 'info',
        code: 'helm-not-available',
        file: chart.path,
        message: "the chart's shape was checked, but not linted or rendered: there is no helm (VNFM_HELM is not set and PATH has none)",
        hint: 'install Helm 3 on PATH or set VNFM_HELM to its path, to run helm lint and helm template over the chart',
      });
    }
  }
  // A chart directory's templates are Go templates, not Kubernetes YAML.
  const kubernetesDefinitions = (await findKubernetesDefinitions(files)).filter((p) => !inChartDirectory(p, helmCharts));
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
    helmCharts,
  };
}

/**
 * helm lint, then helm template, of a well-formed chart; the rendered objects go through the removed-apiVersion lint,
 * and those that reach beyond the instance are warned of (refused when `strict`).
 */
async function renderChart(files: PackageFiles, chart: PackageChart, renderer: ChartRenderer, strict: boolean): Promise<Finding[]> {
  const rendering = await renderer.render(chart, await chartFiles(files, chart));
  const said = (output: string) =>
    output
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-12)
      .join('; ');
  if (!rendering.lint.ok) {
    return [
      {
        severity: 'error',
        code: 'helm-lint-failed',
        file: chart.path,
        message: `helm lint failed: ${said(rendering.lint.output)}`,
        hint: 'run "helm lint" on the chart and fix what it reports',
      },
    ];
  }
  const template = rendering.template;
  if (!template) return [];
  if (!template.ok) {
    return [
      {
        severity: 'error',
        code: 'helm-template-failed',
        file: chart.path,
        message: `helm template cannot render the chart: ${said(template.output)}`,
        hint: 'run "helm template" on the chart and fix the template it names',
      },
    ];
  }
  return lintRenderedChart(chart.path, template.manifest, { namespace: template.namespace ?? 'default', strict });
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
