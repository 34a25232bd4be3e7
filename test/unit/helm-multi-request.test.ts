/**
 * Tacker v1's using_helm_install_param of several charts, read offline:
 * each entry a release of its own with its own values, in the request's
 * order; vdu_mapping checked against the flavour and the releases; and which
 * release holds which VDU (assignVdus, with the real helm rendering the
 * charts): the one vdu_mapping names, else the one whose chart renders a
 * workload named for the VDU, refused when two do.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { ValidationError } from '../../src/errors.js';
import { createHelmChartTool } from '../../src/infra/helm/index.js';
import type { LcmDeps } from '../../src/lcm/engine.js';
import { checkHelmRequest, type HelmDeployment } from '../../src/lcm/helm-request.js';
import { assignVdus } from '../../src/lcm/planners/helm-release.js';
import type { Flavour } from '../../src/vnfd/index.js';
import { loadVnfd } from '../../src/vnfd/index.js';
import { helmPath } from '../support/helm.js';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/helm-multi');
const CHARTS = ['Files/kubernetes/webfront-0.1.0.tgz', 'Files/kubernetes/kvcache-0.1.0.tgz'];
const work = mkdtempSync(join(tmpdir(), 'vnfm-helm-multi-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let flavour: Flavour;
const vim = { spec: { projectName: 'default' } } as Parameters<typeof checkHelmRequest>[2]['vim'];
// Only the offline chart tool is used by assignVdus: the rest of the lcm dependencies is not needed.
const deps = { helm: { chartTool: () => createHelmChartTool({ executable: helmPath(), env: {} }) } } as unknown as LcmDeps;

beforeAll(async () => {
  const files = await openPackage(join(FIXTURE, 'package'));
  try {
    flavour = (await loadVnfd(files, 'Definitions/duo_top.vnfd.yaml')).vnfd!.flavours['helmchart']!;
  } finally {
    await files.close();
  }
});

/** The fixture's additionalParams, changed by `edit`. */
function params(edit?: (p: Record<string, any>) => void): Record<string, any> {
  const p = (JSON.parse(readFileSync(join(FIXTURE, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, any> }).additionalParams;
  edit?.(p);
  return p;
}

const check = (p: Record<string, unknown>) => checkHelmRequest('r.json', p, { instanceId: 'i', flavour, pkg: { helmCharts: CHARTS }, vim });

function refused(p: Record<string, unknown>): ValidationError {
  try {
    check(p);
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('using_helm_install_param of several charts', () => {
  it('reads each entry as a release of its own, in the request order, with its own values and vdu_mapping', () => {
    const helm = check(params());
    expect(helm.form).toBe('v1');
    expect(helm.releases).toEqual([
      { releaseName: 'vdu1', chartPath: CHARTS[0], parameters: { 'service.port': '8081' } },
      { releaseName: 'vdu2', chartPath: CHARTS[1], parameters: { maxMemory: '32mb', tier: 'cache' } },
    ]);
    expect(helm.replicaValues).toEqual({ VDU1: 'replicaCount', VDU2: 'replicaCount' });
    expect(helm.vduMapping).toEqual({
      VDU1: { name: 'vdu1-webfront', kind: 'Deployment', helmreleasename: 'vdu1' },
      VDU2: { name: 'vdu2-kvcache', kind: 'StatefulSet', helmreleasename: 'vdu2' },
    });
  });

  it.each<[string, (p: Record<string, any>) => void, string, RegExp]>([
    ['an entry that is not an object', (p) => (p.using_helm_install_param[1] = 'kvcache'), 'additionalParams.using_helm_install_param[1]', /must be an object/],
    [
      'a chart the package lacks in the second entry',
      (p) => (p.using_helm_install_param[1].helmchartfile_path = 'Files/kubernetes/other.tgz'),
      'additionalParams.using_helm_install_param[1].helmchartfile_path',
      /is not a Helm chart of the package/,
    ],
    [
      'a parameter without "="',
      (p) => (p.using_helm_install_param[1].helmparameter = ['tier']),
      'additionalParams.using_helm_install_param[1].helmparameter[0]',
      /is not "key=value"/,
    ],
    [
      'a VDU the flavour lacks in vdu_mapping',
      (p) => (p.vdu_mapping.VDU9 = { name: 'x', kind: 'Deployment', helmreleasename: 'vdu1' }),
      'additionalParams.vdu_mapping.VDU9',
      /is not a VDU of flavour helmchart/,
    ],
    ['a kind without VNFCs in vdu_mapping', (p) => (p.vdu_mapping.VDU1.kind = 'Service'), 'additionalParams.vdu_mapping.VDU1.kind', /is not a kind whose pods are VNFCs/],
    ['a vdu_mapping entry without a name', (p) => delete p.vdu_mapping.VDU2.name, 'additionalParams.vdu_mapping.VDU2.name', /is required/],
  ])('refuses %s, naming the field', (_what, edit, field, message) => {
    const err = refused(params(edit));
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
  });

  it("refuses vdu_mapping in a request of v2's form", () => {
    const err = refused({ helm_chart_path: CHARTS[0], vdu_mapping: { VDU1: { name: 'vdu1-webfront', kind: 'Deployment' } } });
    expect(err.field).toBe('additionalParams.vdu_mapping');
  });

  it('takes one entry with a vdu_mapping naming no release (it is the only one)', () => {
    const helm = check(
      params((p) => {
        p.using_helm_install_param.pop();
        p.vdu_mapping = { VDU1: { name: 'vdu1-webfront', kind: 'Deployment' } };
      }),
    );
    expect(helm.releases.map((r) => r.releaseName)).toEqual(['vdu1']);
    expect(helm.vduMapping).toEqual({ VDU1: { name: 'vdu1-webfront', kind: 'Deployment' } });
  });
});

describe('which release holds which VDU (the real helm renders the charts)', () => {
  const charts = [join(FIXTURE, 'charts/webfront'), join(FIXTURE, 'charts/kvcache')];
  const field = (vduId: string) => `additionalParams.helm_replica_values.${vduId}`;
  const named = (names: Record<string, string>): Flavour => ({
    ...flavour,
    vdus: Object.fromEntries(Object.entries(flavour.vdus).map(([id, vdu]) => [id, { ...vdu, name: names[id] ?? vdu.name }])),
  });

  it('the only release holds every VDU, without rendering', async () => {
    const helm = check(
      params((p) => {
        p.using_helm_install_param.pop();
        delete p.vdu_mapping;
      }),
    );
    expect(await assignVdus(deps, 'r.json', helm, flavour, field, ['/nonexistent'])).toEqual([undefined]);
  });

  it('vdu_mapping names the release', async () => {
    expect(await assignVdus(deps, 'r.json', check(params()), flavour, field, charts)).toEqual([['VDU1'], ['VDU2']]);
  });

  it('without vdu_mapping: the release whose chart renders a workload named for the VDU', async () => {
    const helm: HelmDeployment = check(params((p) => delete p.vdu_mapping));
    // vdu1-webfront is vdu1 and a suffix (Tacker v2's rule), vdu2-kvcache vdu2 and a suffix.
    expect(await assignVdus(deps, 'r.json', helm, named({ VDU1: 'vdu1', VDU2: 'vdu2' }), field, charts)).toEqual([['VDU1'], ['VDU2']]);
  });

  it('without vdu_mapping, a VDU no chart renders: refused when the request gives it a replica value', async () => {
    const helm = check(params((p) => delete p.vdu_mapping));
    await expect(assignVdus(deps, 'r.json', helm, flavour, field, charts)).rejects.toThrow(/no chart of using_helm_install_param renders a workload for VDU1/);
    const quiet = check(
      params((p) => {
        delete p.vdu_mapping;
        p.helm_replica_values = {};
      }),
    );
    expect(await assignVdus(deps, 'r.json', quiet, flavour, field, charts)).toEqual([[], []]);
  });

  it('without vdu_mapping, a VDU two charts render a workload for: refused, asking for vdu_mapping', async () => {
    // The same chart twice, each release's Deployment named cache-<something>: both are "cache" and a suffix.
    const twin = join(work, 'twin');
    cpSync(join(FIXTURE, 'charts/webfront'), twin, { recursive: true });
    const template = join(twin, 'templates/deployment.yaml');
    writeFileSync(template, readFileSync(template, 'utf8').replace('name: {{ .Release.Name }}-webfront', 'name: cache-{{ .Release.Name }}'));
    const helm = check(
      params((p) => {
        delete p.vdu_mapping;
        p.helm_replica_values = {};
      }),
    );
    const err = await assignVdus(deps, 'r.json', helm, named({ VDU1: 'cache' }), field, [twin, twin]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('additionalParams.vdu_mapping');
    expect((err as ValidationError).message).toMatch(/releases vdu1 and vdu2 each render a workload for VDU1 \(named cache\)/);
  });
});
