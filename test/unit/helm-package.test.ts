/**
 * Helm charts in packages: a chart directory or a `helm package` archive
 * under Files/ is recognised by its Chart.yaml, its templates are never read
 * as Kubernetes YAML, its shape is checked offline, and with the real helm
 * (test/support/helm.ts) it is linted and rendered, the rendered objects
 * going through the removed-apiVersion lint.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHelmChartTool } from '../../src/infra/helm/index.js';
import { findCharts, readTarGz } from '../../src/csar/helm-chart.js';
import { createChartRenderer } from '../../src/csar/helm-render.js';
import { openPackage } from '../../src/csar/open-package.js';
import { validatePackage } from '../../src/csar/validate.js';
import { helmPath } from '../support/helm.js';

const sample = resolve(import.meta.dirname, '../../csar-samples/helm-cnf/package');
const CHART = 'Files/kubernetes/helm-cnf';
const work = mkdtempSync(join(tmpdir(), 'vnfm-helm-pkg-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** A copy of the sample package, changed by `edit` (given the copy's root). */
function variant(edit: (dir: string) => void): string {
  const dir = join(work, `pkg-${++n}`);
  cpSync(sample, dir, { recursive: true });
  // The variants change the chart: TOSCA.meta's blocks would no longer match.
  writeFileSync(join(dir, 'TOSCA-Metadata/TOSCA.meta'), readFileSync(join(sample, 'TOSCA-Metadata/TOSCA.meta'), 'utf8').split('\n\nName:')[0] + '\n');
  edit(dir);
  return dir;
}

/** The sample with its chart as Tacker's packages carry it: Files/kubernetes/helm-cnf-0.1.0.tgz, packed by GNU tar as helm package would. */
function archived(edit?: (chartDir: string) => void): string {
  return variant((dir) => {
    if (edit) edit(join(dir, CHART));
    execFileSync('tar', ['-czf', join(dir, 'Files/kubernetes/helm-cnf-0.1.0.tgz'), '-C', join(dir, 'Files/kubernetes'), 'helm-cnf']);
    rmSync(join(dir, CHART), { recursive: true });
  });
}

const codes = (findings: { code: string; severity: string }[]) => findings.filter((f) => f.severity !== 'info').map((f) => f.code);

describe('Helm charts in a package, offline', () => {
  it('takes the sample: its chart directory is a chart, and no template is read as a Kubernetes manifest', async () => {
    const r = await validatePackage(sample);
    expect(codes(r.findings)).toEqual([]);
    expect(r.valid).toBe(true);
    expect(r.helmCharts).toEqual([{ path: CHART, form: 'directory', name: 'helm-cnf', version: '0.1.0' }]);
    expect(r.kubernetesDefinitions).toEqual([]);
  });

  it('takes a chart archive (.tgz) under Files/kubernetes/, read through its Chart.yaml', async () => {
    const r = await validatePackage(archived());
    expect(codes(r.findings)).toEqual([]);
    expect(r.helmCharts).toEqual([{ path: 'Files/kubernetes/helm-cnf-0.1.0.tgz', form: 'archive', name: 'helm-cnf', version: '0.1.0' }]);
  });

  it('reads a tar.gz: every regular file under the chart directory', () => {
    const dir = archived();
    const entries = readTarGz(readFileSync(join(dir, 'Files/kubernetes/helm-cnf-0.1.0.tgz')));
    expect(entries.map((e) => e.name).sort()).toEqual([
      'helm-cnf/Chart.yaml',
      'helm-cnf/templates/_helpers.tpl',
      'helm-cnf/templates/configmap.yaml',
      'helm-cnf/templates/deployment-vdu1.yaml',
      'helm-cnf/templates/deployment-vdu2.yaml',
      'helm-cnf/templates/service.yaml',
      'helm-cnf/values.yaml',
    ]);
  });

  it.each([
    ['no version', (c: string) => writeFileSync(join(c, 'Chart.yaml'), 'apiVersion: v2\nname: helm-cnf\n'), /no version/],
    ['apiVersion v3', (c: string) => writeFileSync(join(c, 'Chart.yaml'), 'apiVersion: v3\nname: helm-cnf\nversion: 0.1.0\n'), /apiVersion "v3"/],
    ['a name that is not a chart name', (c: string) => writeFileSync(join(c, 'Chart.yaml'), 'apiVersion: v2\nname: "Helm CNF!"\nversion: 0.1.0\n'), /not a chart name/],
    ['a version that is not SemVer', (c: string) => writeFileSync(join(c, 'Chart.yaml'), 'apiVersion: v2\nname: helm-cnf\nversion: one\n'), /not SemVer/],
    ['no templates', (c: string) => rmSync(join(c, 'templates'), { recursive: true }), /no templates/],
    ['a Chart.yaml that does not parse', (c: string) => writeFileSync(join(c, 'Chart.yaml'), 'apiVersion: v2\nname: [helm-cnf\n'), /Chart.yaml is not valid YAML/],
  ])('refuses a chart with %s, directory and archive alike, naming the chart', async (_what, edit, message) => {
    for (const dir of [variant((d) => edit(join(d, CHART))), archived(edit)]) {
      const r = await validatePackage(dir);
      expect(r.valid).toBe(false);
      const errors = r.findings.filter((f) => f.severity === 'error');
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]!.file).toMatch(/^Files\/kubernetes\/helm-cnf/);
      expect(errors.map((f) => f.message).join('\n')).toMatch(message);
    }
  });

  it('refuses an archive that is not gzip, and ignores one that holds no chart', async () => {
    const broken = variant((d) => writeFileSync(join(d, 'Files/kubernetes/broken-0.1.0.tgz'), 'not gzip at all'));
    const r = await validatePackage(broken);
    expect(r.findings.find((f) => f.code === 'helm-chart-unreadable')).toMatchObject({ file: 'Files/kubernetes/broken-0.1.0.tgz', severity: 'error' });
    const other = variant((d) => {
      writeFileSync(join(d, 'Files/notes.txt'), 'hello');
      execFileSync('tar', ['-czf', join(d, 'Files/data.tgz'), '-C', join(d, 'Files'), 'notes.txt']);
    });
    const r2 = await validatePackage(other);
    expect(r2.valid).toBe(true);
    expect(r2.helmCharts.map((c) => c.path)).toEqual([CHART]);
  });

  it("finds a chart's subcharts as part of it, not as charts of their own", async () => {
    const dir = variant((d) => {
      cpSync(join(sample, CHART), join(d, CHART, 'charts', 'sub'), { recursive: true });
    });
    const files = await openPackage(dir);
    try {
      expect(findCharts(files).map((c) => c.path)).toEqual([CHART]);
    } finally {
      await files.close();
    }
  });
});

describe('Helm charts in a package, with the real helm', () => {
  const renderer = createChartRenderer(createHelmChartTool({ executable: helmPath(), env: {} }));

  it('lints and renders the sample: no finding', async () => {
    const r = await validatePackage(sample, { chartRenderer: renderer });
    expect(codes(r.findings)).toEqual([]);
    const archive = await validatePackage(archived(), { chartRenderer: renderer });
    expect(codes(archive.findings)).toEqual([]);
  });

  it("shows Helm's message when a template does not render", async () => {
    const dir = variant((d) => writeFileSync(join(d, CHART, 'templates/broken.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Values.missing.deeper }}\n'));
    const r = await validatePackage(dir, { chartRenderer: renderer });
    expect(r.valid).toBe(false);
    const f = r.findings.find((x) => x.severity === 'error')!;
    expect(f.code).toMatch(/^helm-(lint|template)-failed$/);
    expect(f.file).toBe(CHART);
    expect(f.message).toMatch(/broken\.yaml/);
    expect(f.message).toMatch(/nil pointer|missing/);
  });

  it('runs the removed-apiVersion lint over the rendered objects, naming the template', async () => {
    const dir = archived((c) => {
      const path = join(c, 'templates/deployment-vdu2.yaml');
      writeFileSync(path, readFileSync(path, 'utf8').replace('apiVersion: apps/v1', 'apiVersion: extensions/v1beta1'));
    });
    const r = await validatePackage(dir, { chartRenderer: renderer });
    expect(r.valid).toBe(false);
    const f = r.findings.find((x) => x.code === 'removed-api-version')!;
    expect(f.file).toBe('Files/kubernetes/helm-cnf-0.1.0.tgz (helm-cnf/templates/deployment-vdu2.yaml)');
    expect(f.message).toMatch(/Deployment vdu2-vnfpkg-validate uses apiVersion extensions\/v1beta1/);
    expect(f.hint).toMatch(/apps\/v1/);
  });

  it('notes a chart it could not lint when there is no helm', async () => {
    const r = await validatePackage(sample, { chartRenderer: null });
    expect(r.valid).toBe(true);
    expect(r.findings).toEqual([expect.objectContaining({ severity: 'info', code: 'helm-not-available', file: CHART })]);
  });
});
