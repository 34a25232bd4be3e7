/**
 * Helm charts inside a package: a chart archive (`Files/kubernetes/<name>-<version>.tgz`,
 * as Tacker's Helm packages carry it) or an unpacked chart directory (one
 * holding `Chart.yaml`, as a tree under version control has it). Both are
 * recognised by their Chart.yaml; the templates of a chart are Go templates,
 * never read as plain Kubernetes YAML. The checks here are offline (the
 * chart's shape); rendering and `helm lint` are the renderer's, when Helm is
 * there (see ChartRenderer).
 */
import type { Finding, PackageFiles } from '../model/package-files.js';
import { ChartArchiveError, readTarArchive } from './chart-archive.js';
import { isMapping } from '../yaml.js';
import { parseYaml } from '../vnfd/yaml-source.js';

export { ChartArchiveError, readTarGz, type TarEntry } from './chart-archive.js';

/** A chart of the package. */
export interface PackageChart {
  /** The package path a request names: the archive, or the chart's directory (no trailing '/'). */
  path: string;
  form: 'archive' | 'directory';
  /** From Chart.yaml, when it could be read. */
  name?: string;
  version?: string;
}

/** An archive larger than this (compressed) is not opened for checks. */
const MAX_ARCHIVE_BYTES = 16 * 1024 * 1024;

const ARCHIVE = /^Files\/.+\.(tgz|tar\.gz)$/i;

/** The members of a package that make up its charts, archives first. */
export function findCharts(files: PackageFiles): PackageChart[] {
  const charts: PackageChart[] = [];
  for (const path of files.list()) {
    if (ARCHIVE.test(path)) charts.push({ path, form: 'archive' });
    else if (/^Files\/(.+\/)?Chart\.yaml$/.test(path)) charts.push({ path: path.slice(0, -'/Chart.yaml'.length), form: 'directory' });
  }
  // A chart's subcharts (charts/<sub>/Chart.yaml, charts/<sub>.tgz) belong to it.
  const dirs = charts.filter((c) => c.form === 'directory').map((c) => `${c.path}/`);
  return charts.filter((c) => !dirs.some((d) => c.path.startsWith(d)));
}

/** Whether a member lies inside a chart directory of `charts` (its templates are not Kubernetes YAML). */
export function inChartDirectory(path: string, charts: readonly PackageChart[]): boolean {
  return charts.some((c) => c.form === 'directory' && path.startsWith(`${c.path}/`));
}

/** The files of a chart, relative to the chart's root (Chart.yaml, values.yaml, templates/…). */
export async function chartFiles(files: PackageFiles, chart: PackageChart): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (chart.form === 'directory') {
    for (const p of files.list()) {
      if (!p.startsWith(`${chart.path}/`)) continue;
      out.set(p.slice(chart.path.length + 1), await readMember(files, p));
    }
    return out;
  }
  if (files.size(chart.path) > MAX_ARCHIVE_BYTES) throw new Error(`is larger than ${MAX_ARCHIVE_BYTES} bytes`);
  const { entries, refused } = readTarArchive(await readMember(files, chart.path));
  // A tarball that is no chart is not judged as one; a chart's refused members are (Chart.yaml itself may be one).
  if (refused.length > 0 && [...entries.map((e) => e.name), ...refused.map((p) => p.member ?? '')].some(isChartYaml)) throw new ChartArchiveError(refused);
  const tops = new Set(entries.map((e) => e.name.split('/')[0]));
  // helm package writes every file under one directory named after the chart.
  const top = tops.size === 1 ? [...tops][0]! : undefined;
  // The reader refused every name that could escape: what is left is relative and has no '..'.
  for (const e of entries) {
    const rel = top && e.name.startsWith(`${top}/`) ? e.name.slice(top.length + 1) : e.name;
    if (rel !== '') out.set(rel, e.data);
  }
  return out;
}

/** A `Chart.yaml` at any depth, however the archive spells the path: an archive holding one is judged as a chart. */
const isChartYaml = (name: string): boolean => /(^|[\\/])Chart\.yaml$/.test(name);

async function readMember(files: PackageFiles, path: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of await files.stream(path)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const SEMVER = /^v?\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;
const CHART_NAME = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/i;

/**
 * Checks a chart's shape: Chart.yaml parses, with apiVersion v1 or v2, a
 * name and a SemVer version; templates/ holds at least one template. Fills
 * `chart.name` and `chart.version`. An archive that does not hold a chart
 * (no Chart.yaml) is not a chart: `undefined`, no findings.
 */
export async function checkChart(files: PackageFiles, chart: PackageChart): Promise<Finding[] | undefined> {
  const findings: Finding[] = [];
  const fail = (code: string, message: string, hint: string) => findings.push({ severity: 'error', code, file: chart.path, message, hint });
  let content: Map<string, Buffer>;
  try {
    content = await chartFiles(files, chart);
  } catch (err) {
    if (err instanceof ChartArchiveError) {
      // Each member refused is named, as the zip reader names a package's.
      for (const p of err.problems) fail(p.code, p.message, p.hint);
      return findings;
    }
    fail(
      'helm-chart-unreadable',
      `cannot be read as a Helm chart archive: it ${(err as Error).message}`,
      'make the archive with "helm package CHART_DIR" (a gzipped tar of one chart directory)',
    );
    return findings;
  }
  const chartYaml = content.get('Chart.yaml');
  if (!chartYaml) return chart.form === 'archive' ? undefined : findings;
  const parsed = parseYaml(chartYaml.toString('utf8'), `${chart.path}/Chart.yaml`);
  if (!parsed.ok) {
    findings.push({ ...parsed.finding, file: chart.path, message: `Chart.yaml is ${parsed.finding.message}` });
    return findings;
  }
  const doc = parsed.doc;
  if (!isMapping(doc)) {
    fail('helm-chart-invalid', 'Chart.yaml is not a mapping', 'Chart.yaml holds apiVersion: v2, name: CHART and version: X.Y.Z');
    return findings;
  }
  const { apiVersion, name, version } = doc;
  if (apiVersion !== 'v1' && apiVersion !== 'v2') {
    fail('helm-chart-invalid', `Chart.yaml has apiVersion ${JSON.stringify(apiVersion ?? null)}, where Helm 3 reads v2 (or v1)`, 'write "apiVersion: v2" in Chart.yaml');
  }
  if (typeof name !== 'string' || !CHART_NAME.test(name)) {
    fail(
      'helm-chart-invalid',
      `Chart.yaml has ${name === undefined ? 'no name' : `name ${JSON.stringify(name)}, which is not a chart name`}`,
      'give the chart a name of letters, digits and "-" (name: my-cnf)',
    );
  } else chart.name = name;
  const v = typeof version === 'number' ? String(version) : version;
  if (typeof v !== 'string' || !SEMVER.test(v)) {
    fail(
      'helm-chart-invalid',
      `Chart.yaml has ${version === undefined ? 'no version' : `version ${JSON.stringify(version)}, which is not SemVer`}`,
      'give the chart a SemVer version (version: 0.1.0)',
    );
  } else chart.version = v;
  const templates = [...content.keys()].filter((p) => p.startsWith('templates/') && !p.endsWith('/'));
  if (templates.length === 0) {
    fail('helm-chart-invalid', 'the chart has no templates/ (nothing to install)', "put the chart's Kubernetes templates under templates/");
  }
  const values = content.get('values.yaml');
  if (values) {
    const v2 = parseYaml(values.toString('utf8'), `${chart.path}/values.yaml`);
    if (!v2.ok) findings.push({ ...v2.finding, file: chart.path, message: `values.yaml is ${v2.finding.message}` });
  }
  return findings;
}

/** The chart's default values (values.yaml), {} when it has none or they do not parse. */
export async function chartValues(files: PackageFiles, chart: PackageChart): Promise<Record<string, unknown>> {
  const content = await chartFiles(files, chart);
  const values = content.get('values.yaml');
  if (!values) return {};
  const parsed = parseYaml(values.toString('utf8'), `${chart.path}/values.yaml`);
  return parsed.ok && isMapping(parsed.doc) ? (parsed.doc as Record<string, unknown>) : {};
}

/**
 * Whether a dotted value path (Helm's --set syntax, `a.b.c`, with `\.` for a
 * literal dot) names a value the chart's values.yaml has.
 */
export function hasValue(values: Record<string, unknown>, path: string): boolean {
  let node: unknown = values;
  for (const key of path.split(/(?<!\\)\./).map((k) => k.replace(/\\\./g, '.'))) {
    if (!isMapping(node) || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}
