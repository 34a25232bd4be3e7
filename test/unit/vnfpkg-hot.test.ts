/**
 * `vnfm vnfpkg-hot`, in-process through main(): the templates a flavour's
 * stack is made of, offline, for a package given by path (no store opened)
 * or onboarded; its Base HOT as the package has it, else the HOT made from
 * the VNFD; and the refusals with their exit codes.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

const RELAY = resolve('test/fixtures/tacker-shapes/v1-no-basehot');
const HEAT_VNF = resolve('csar-samples/heat-vnf/package');
const BASIC_CNF = resolve('csar-samples/basic-cnf/package');

async function run(argv: string[], home = join(mkdtempSync(join(tmpdir(), 'vnfm-hot-')), 'home')) {
  let stdout = '';
  let stderr = '';
  const out = new PassThrough();
  const err = new PassThrough();
  out.on('data', (d: Buffer) => (stdout += d.toString()));
  err.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await main(argv, { env: { VNFM_HOME: home }, cwd: resolve('.'), streams: { stdin: new PassThrough(), stdout: out, stderr: err } });
  return { code, stdout, stderr, storeOpened: existsSync(home), home };
}

type Hot = { resources: Record<string, { type: string }> };
/** The YAML stream's documents, each with the comment line that heads it. */
const documents = (text: string) =>
  text.split(/^---\n/m).map((d) => ({ heading: d.split('\n')[0]!, doc: yaml.load(d, { schema: yaml.CORE_SCHEMA }) as Hot & Record<string, unknown> }));

describe('vnfm vnfpkg-hot', () => {
  it('a package without a Base HOT, by path: the HOT made from the VNFD and its nested template, without opening a store', async () => {
    const r = await run(['vnfpkg-hot', RELAY, '--flavour', 'simple']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.storeOpened).toBe(false);
    const [top, member, ...more] = documents(r.stdout);
    expect(more).toEqual([]);
    expect(top!.heading).toBe('# the HOT vnfm makes from flavour simple of VNFD 7d3e51c0-8a2f-4c6b-9e15-3b4f0a6d2c81');
    expect(top!.doc['heat_template_version']).toBe('2013-05-23');
    expect(top!.doc.resources['worker_instance']!.type).toBe('OS::Heat::AutoScalingGroup');
    expect(top!.doc.resources['worker_instance_scale_out']!.type).toBe('OS::Heat::ScalingPolicy');
    expect(top!.doc.resources['edge']!.type).toBe('OS::Nova::Server');
    expect(member!.heading).toBe('# worker_instance.hot.yaml, nested');
    expect(Object.keys(member!.doc.resources)).toEqual(['worker_CP1', 'worker_CP2', 'worker_root', 'worker']);
  });

  it('-o json: one object, the templates as data; the level sizes the group', async () => {
    const r = await run(['vnfpkg-hot', RELAY, '-o', 'json', '--instantiation-level', 'instantiation_level_2']);
    expect(r.code).toBe(0);
    const data = JSON.parse(r.stdout);
    expect(data).toMatchObject({
      vnfdId: '7d3e51c0-8a2f-4c6b-9e15-3b4f0a6d2c81',
      flavourId: 'simple',
      generated: true,
      templatePath: 'Definitions/relay_df_simple.yaml (HOT generated for flavour simple)',
      notes: [],
    });
    expect(data.template.resources.worker_instance.properties).toMatchObject({ min_size: 1, max_size: 3, desired_capacity: 2 });
    expect(Object.keys(data.files)).toEqual(['worker_instance.hot.yaml']);
    expect(data.files['worker_instance.hot.yaml'].resources.worker.type).toBe('OS::Nova::Server');
  });

  it("a package with a Base HOT: the package's own files as they are; --generate makes one from the VNFD instead", async () => {
    const r = await run(['vnfpkg-hot', HEAT_VNF]);
    expect(r.code).toBe(0);
    const [top, nested] = r.stdout.split(/^---\n/m);
    expect(top).toBe(`# BaseHOT/simple/heat_vnf.yaml, the Base HOT of flavour simple\n${readFileSync(join(HEAT_VNF, 'BaseHOT/simple/heat_vnf.yaml'), 'utf8')}`);
    expect(nested).toBe(`# BaseHOT/simple/nested/VDU1.yaml\n${readFileSync(join(HEAT_VNF, 'BaseHOT/simple/nested/VDU1.yaml'), 'utf8')}`);

    const made = JSON.parse((await run(['vnfpkg-hot', HEAT_VNF, '--generate', '-o', 'json'])).stdout);
    expect(made.generated).toBe(true);
    expect(made.template.resources.vdu1_aspect.type).toBe('OS::Heat::AutoScalingGroup');
    expect(made.template.resources.VDU2.type).toBe('OS::Nova::Server');
  });

  it('an onboarded package by name, its only flavour taken: the same templates as from its path', async () => {
    const home = join(mkdtempSync(join(tmpdir(), 'vnfm-hot-')), 'home');
    expect((await run(['vnfpkg-onboard', RELAY, '--name', 'relay'], home)).code).toBe(0);
    const onboarded = await run(['vnfpkg-hot', 'relay'], home);
    expect(onboarded.code).toBe(0);
    expect(onboarded.stdout).toBe((await run(['vnfpkg-hot', RELAY])).stdout);
  });

  it('refusals: an unknown flavour or level (exit 2), a VNFD that cannot make a HOT (exit 2), no such package (exit 3)', async () => {
    const flavour = await run(['vnfpkg-hot', RELAY, '--flavour', 'big']);
    expect(flavour.code).toBe(2);
    expect(flavour.stderr).toMatch(/^error: "big" is not a flavour of VNFD 7d3e51c0-8a2f-4c6b-9e15-3b4f0a6d2c81\nhint: --flavour simple\n/);
    const level = await run(['vnfpkg-hot', RELAY, '--instantiation-level', 'huge']);
    expect(level.code).toBe(2);
    expect(level.stderr).toMatch(/^error: "huge" is not an instantiation level of flavour simple\nhint: choose from: instantiation_level_1, instantiation_level_2\n/);
    const cnf = await run(['vnfpkg-hot', BASIC_CNF]);
    expect(cnf.code).toBe(2);
    expect(cnf.stdout).toBe('');
    expect(cnf.stderr).toMatch(
      /^error: package .*basic-cnf\/package has no Base HOT for flavour "simple" \(BaseHOT\/simple\/\), and the HOT .* VDUs VDU1, VDU2 have no virtual_compute size/,
    );
    expect(cnf.stderr).toMatch(/\nhint: .*a CNF's VDUs are Kubernetes workloads: instantiate it on a Kubernetes VIM\n/);
    const none = await run(['vnfpkg-hot', 'no-such-package']);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^error: .*no-such-package is no file or directory, and no onboarded package has the id, vnfdId or name "no-such-package"\n/);
  });
});
