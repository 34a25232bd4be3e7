/**
 * The ChartRenderer of package validation, with the real Helm: the chart's
 * files are written to a private temporary directory (0700), `helm lint`
 * and `helm template` run over it offline, and the directory is removed
 * whatever happens.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { HelmChartTool } from '../infra/helm/contract.js';
import { HelmError, HelmNotFoundError } from '../infra/helm/errors.js';
import type { PackageChart } from './helm-chart.js';
import type { ChartRenderer, ChartRendering } from './validate.js';

/** The release and namespace a chart is rendered as for validation. */
const RENDER_RELEASE = 'vnfpkg-validate';
const RENDER_NAMESPACE = 'vnfpkg-validate';

/** Writes a chart's files (relative to its root) under a new private directory; returns the chart's path there. */
export function writeChart(files: Map<string, Buffer>, name = 'chart'): { chart: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'vnfm-chart-'));
  const chart = join(root, name);
  for (const [rel, data] of files) {
    const target = join(chart, ...rel.split('/'));
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writeFileSync(target, data, { mode: 0o600 });
  }
  return { chart, remove: () => rmSync(root, { recursive: true, force: true }) };
}

export function createChartRenderer(tool: HelmChartTool): ChartRenderer {
  return {
    async render(chart: PackageChart, files: Map<string, Buffer>): Promise<ChartRendering> {
      const written = writeChart(files, chart.name ?? 'chart');
      try {
        const attempt = async (run: () => Promise<string>) => {
          try {
            return { ok: true, output: await run() };
          } catch (err) {
            if (err instanceof HelmError) return { ok: false, output: err.stderr || err.message };
            throw err;
          }
        };
        const lint = await attempt(() => tool.lint(written.chart));
        if (!lint.ok) return { lint };
        // With the chart's crds/, as helm install creates them; in a namespace of its own, so objects the chart places elsewhere show.
        const template = await attempt(() => tool.template(written.chart, { release: RENDER_RELEASE, namespace: RENDER_NAMESPACE, includeCrds: true }));
        return {
          lint,
          template: { ok: template.ok, manifest: template.ok ? template.output : '', output: template.ok ? '' : template.output, namespace: RENDER_NAMESPACE },
        };
      } finally {
        written.remove();
      }
    },
  };
}

/** The renderer with the helm of VNFM_HELM or PATH; null when there is none (the charts are then checked offline only). */
export async function chartRendererFromEnv(env: NodeJS.ProcessEnv): Promise<ChartRenderer | null> {
  // The Helm seam is a chunk of its own, loaded when a command needs it.
  const { createHelmChartTool } = await import('../infra/helm/index.js');
  try {
    return createChartRenderer(createHelmChartTool({ env }));
  } catch (err) {
    if (err instanceof HelmNotFoundError) return null;
    throw err;
  }
}
