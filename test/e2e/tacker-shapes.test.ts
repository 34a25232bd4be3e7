/**
 * Packages in the shapes of Tacker's functional-test samples (our own
 * content: v1 test_cnf_scale, test_cnf_heal, test_cnf, test_cnf_multi_ns;
 * v2 test_instantiate_cnf_resources, test_change_vnf_pkg_with_deployment),
 * through the real program. What Tacker accepts validates and onboards with
 * notes, not errors: VDUs without a workload in the package, one object in
 * alternative files, access and token reviews without metadata.name, SOL004
 * manifest metadata at column 0; and with warnings saying what vnfm does: a
 * flavour id the VNF type does not list (test_cnf's vdumap), an initial delta
 * outside its VDU's vdu_profile (test_cnf_heal). What Tacker's TOSCA parser
 * refuses is refused. On the sandbox, an instantiate deploys only what its
 * request names: one bare Pod of a six-VDU flavour, or a ConfigMap alone; the
 * scale shape runs with each of its alternative workload files, the heal
 * shape heals a Deployment's pod and a bare Pod, unnamed reviews are created
 * and answered, the vdumap flavour is instantiated and scaled, and an initial
 * delta outside the vdu_profile gives the count it says, each with a warning.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm } from '../support/cli.js';

const SHAPES = resolve(import.meta.dirname, '../fixtures/tacker-shapes');
const work = mkdtempSync(join(tmpdir(), 'vnfm-tacker-shapes-'));

interface Finding {
  severity: string;
  code: string;
  file?: string;
}

/** Each package, the notes and the warnings (`code file`) its validation reports. */
const PACKAGES: Array<[name: string, notes: string[], warnings: string[]]> = [
  ['v1-cnf-scale', [], []],
  // Tacker's test_cnf_heal gives VDU1 an initial delta of 1 and a vdu_profile of 2..3: Tacker onboards it, vnfm warns.
  ['v1-cnf-heal', [], ['initial-delta-out-of-range Definitions/mender_df_simple.yaml']],
  // Tacker's test_cnf has a flavour vdumap its VNF type does not list: Tacker onboards and instantiates it, vnfm warns.
  ['v1-cnf', ['vdu-resource-missing Definitions/toolbox_df_simple.yaml'], ['flavour-id-not-allowed Definitions/toolbox_df_vdumap.yaml']],
  ['v1-cnf-multi-ns', [], []],
  ['v2-instantiate-cnf-resources', ['kubernetes-object-alternative Files/kubernetes/deployment_fail_test.yaml', 'vdu-resource-missing Definitions/stack_df_simple.yaml'], []],
  [
    'v2-change-vnf-pkg-with-deployment',
    [
      'kubernetes-object-alternative Files/new_kubernetes/error_deployment.yaml',
      'kubernetes-object-alternative Files/new_kubernetes/new_deployment.yaml',
      'manifest-metadata-unindented swap.mf',
      'vdu-resource-missing Definitions/swap_df_simple.yaml',
      'vdu-resource-missing Definitions/swap_df_simple.yaml',
    ],
    [],
  ],
];

describe('Tacker-shaped packages', () => {
  it.each(PACKAGES)('%s validates (exit 0, notes and warnings only) and onboards', async (name, notes, warnings) => {
    const home = newHome();
    const v = await vnfm(['vnfpkg-validate', join(SHAPES, name), '-o', 'json'], { home });
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const report = JSON.parse(v.stdout) as { valid: boolean; findings: Finding[] };
    expect(report.valid).toBe(true);
    expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
    const said = (severity: string) => report.findings.filter((f) => f.severity === severity).map((f) => `${f.code} ${f.file}`);
    expect(said('info').sort()).toEqual([...notes].sort());
    expect(said('warning').sort()).toEqual([...warnings].sort());

    // The table form shows the notes and warnings and still exits 0.
    const table = await vnfm(['vnfpkg-validate', join(SHAPES, name)], { home });
    expect(table.code).toBe(0);
    for (const finding of [...notes, ...warnings]) expect(table.stdout).toContain(finding.split(' ')[0]);

    const on = await vnfm(['vnfpkg-onboard', join(SHAPES, name), '--name', name, '-o', 'json'], { home });
    expect(on.code, on.stderr).toBe(0);
    expect(JSON.parse(on.stdout)).toMatchObject({ onboardingState: 'ONBOARDED' });
    // Onboarding reports the same notes and warnings, on stderr.
    expect(on.stderr.split('\n').filter((l) => l.startsWith('note: '))).toHaveLength(notes.length);
    expect(on.stderr.split('\n').filter((l) => l.startsWith('warning: '))).toHaveLength(warnings.length);
  });
});

describe("what Tacker onboards against the VNFD's own rules: a warning saying what vnfm does", () => {
  const warningOf = async (name: string, code: string) => {
    const v = await vnfm(['vnfpkg-validate', join(SHAPES, name), '-o', 'json'], { home: newHome() });
    expect(v.code, v.stderr).toBe(0);
    return (JSON.parse(v.stdout) as { findings: Array<Finding & { message: string; line?: number }> }).findings.find((f) => f.code === code)!;
  };

  it('an initial delta outside the vdu_profile: the levels set the count (Tacker v2), so the delta is not used', async () => {
    expect(await warningOf('v1-cnf-heal', 'initial-delta-out-of-range')).toMatchObject({
      severity: 'warning',
      file: 'Definitions/mender_df_simple.yaml',
      message:
        "initial delta VDU1_initial_delta gives VDU1 1 instance, outside its vdu_profile 2..3; vnfm, as Tacker, accepts it: an instantiate does not use it, the instantiation levels set VDU1's instances (2 at instantiation_level_1, 3 at instantiation_level_2), as Tacker v2 grants them",
    });
    const on = await vnfm(['vnfpkg-onboard', join(SHAPES, 'v1-cnf-heal')], { home: newHome() });
    expect(on.stderr).toContain('warning: Definitions/mender_df_simple.yaml: initial delta VDU1_initial_delta gives VDU1 1 instance, outside its vdu_profile 2..3');
  });

  it('a flavour id its VNF type does not list: onboarded, and instantiated when a request names it', async () => {
    expect(await warningOf('v1-cnf', 'flavour-id-not-allowed')).toMatchObject({
      severity: 'warning',
      file: 'Definitions/toolbox_df_vdumap.yaml',
      message: expect.stringContaining(
        'flavour vdumap is not one of the flavour_id values node type example.edge.Toolbox allows (simple); vnfm, as Tacker, onboards the package and instantiates flavour vdumap',
      ),
    });
  });
});

/** A copy of a shape to break. */
function copyOf(name: string): string {
  const dir = mkdtempSync(join(work, `${name}-`));
  cpSync(join(SHAPES, name), dir, { recursive: true });
  return dir;
}

describe('what Tacker refuses stays refused', () => {
  it('a node template of an unknown type, named by no policy, is an error (exit 2)', async () => {
    const dir = copyOf('v2-instantiate-cnf-resources');
    const df = join(dir, 'Definitions/stack_df_simple.yaml');
    const text = readFileSync(df, 'utf8');
    writeFileSync(df, text.replace('\n  policies:\n', '\n    Watcher:\n      type: tosca.nodes.nfv.Vdu.Computer\n      properties:\n        name: watcher\n\n  policies:\n'));
    const home = newHome();
    const v = await vnfm(['vnfpkg-validate', dir, '-o', 'json'], { home });
    expect(v.code).toBe(2);
    const report = JSON.parse(v.stdout) as { findings: Finding[] };
    expect(report.findings).toContainEqual(expect.objectContaining({ severity: 'error', code: 'type-unknown', file: 'Definitions/stack_df_simple.yaml' }));
    const on = await vnfm(['vnfpkg-onboard', dir], { home });
    expect(on.code).toBe(2);
    expect(JSON.parse((await vnfm(['vnfpkg-list', '-o', 'json'], { home })).stdout)).toEqual([]);
  });

  it('an object other than a review without metadata.name is an error', async () => {
    const dir = copyOf('v1-cnf');
    // Keep TOSCA.meta's hash right, so only the intended finding appears.
    const file = 'Files/kubernetes/config-map.yaml';
    const changed = readFileSync(join(dir, file), 'utf8').replace('  name: toolbox-settings\n', '  labels: {app: toolbox}\n');
    writeFileSync(join(dir, file), changed);
    const meta = join(dir, 'TOSCA-Metadata/TOSCA.meta');
    const { createHash } = await import('node:crypto');
    writeFileSync(
      meta,
      readFileSync(meta, 'utf8').replace(
        new RegExp(`(Name: ${file.replace(/[.]/g, '\\.')}\\n(?:.+\\n)*?Hash: )([0-9a-f]+)`),
        `$1${createHash('sha256').update(changed).digest('hex')}`,
      ),
    );
    const v = await vnfm(['vnfpkg-validate', dir, '-o', 'json'], { home: newHome() });
    expect(v.code).toBe(2);
    expect((JSON.parse(v.stdout) as { findings: Finding[] }).findings.filter((f) => f.severity === 'error')).toEqual([
      expect.objectContaining({ code: 'kubernetes-object-invalid', file }),
    ]);
  });
});

describe('instantiate deploys only what the request names (sandbox)', () => {
  let cluster: E2eCluster;
  let home: string;

  const ok = async (args: string[]) => {
    const r = await vnfm(args, { home });
    if (r.code !== 0) throw new Error(`vnfm ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r;
  };
  const request = (name: string, body: unknown): string => {
    const path = join(work, `${name}.json`);
    writeFileSync(path, JSON.stringify(body, null, 2));
    return path;
  };
  /** Tacker v2's minimal instantiate request: a registered VIM by id or name, the files to deploy. */
  const instantiateBody = (files: string[], flavourId = 'simple') => ({
    flavourId,
    vimConnectionInfo: { vim1: { vimId: 'edge', vimType: 'kubernetes' } },
    additionalParams: { 'lcm-kubernetes-def-files': files, namespace: cluster.namespace },
  });

  beforeAll(async () => {
    cluster = await e2eCluster('e2e-tacker-shapes', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
    home = newHome();
    const vimConfig = join(work, 'vim-config.yaml');
    cluster.writeVimConfig(vimConfig);
    await ok(['vim-register', '--config-file', vimConfig, 'edge']);
    await ok(['vnfpkg-onboard', join(SHAPES, 'v2-instantiate-cnf-resources'), '--name', 'stack']);
    await ok(['vnfpkg-onboard', join(SHAPES, 'v1-cnf'), '--name', 'toolbox']);
    await ok(['vnfpkg-onboard', join(SHAPES, 'v1-cnf-scale'), '--name', 'relay']);
    await ok(['vnfpkg-onboard', join(SHAPES, 'v1-cnf-heal'), '--name', 'mender']);
  });

  afterAll(async () => {
    await cluster?.close();
  });

  it('one bare Pod of a six-VDU flavour: VNFCs of VDU1 only; an aspect of an undeployed VDU is refused; terminate', async () => {
    await ok(['vnf-create', '--package', 'stack', '--name', 'stack-min']);
    const inst = await vnfm(
      ['vnf-instantiate', 'stack-min', '--request-file', request('min', instantiateBody(['Files/kubernetes/pod.yaml'])), '--allow-package-scripts', '-o', 'json'],
      { home },
    );
    expect(inst.code, inst.stderr).toBe(0);
    expect(JSON.parse(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    const shown = JSON.parse((await ok(['vnf-show', 'stack-min', '-o', 'json'])).stdout);
    expect(shown.instantiatedVnfInfo.vnfcResourceInfo.map((v: { vduId: string }) => v.vduId)).toEqual(['VDU1']);
    const pod = await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/pods/stack-a`);
    expect(pod.status).toBe(200);
    const deployments = await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/deployments`);
    expect((deployments.json as { items: unknown[] }).items).toEqual([]);

    const scale = await vnfm(['vnf-scale', 'stack-min', '--type', 'SCALE_OUT', '--aspect-id', 'b_aspect', '--allow-package-scripts'], { home });
    expect(scale.code).toBe(2);
    expect(scale.stderr).toMatch(/aspect b_aspect scales VDU2, and this instance deployed none of them/);

    await ok(['vnf-terminate', 'stack-min', '--yes', '--allow-package-scripts']);
    expect((await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/pods/stack-a`)).status).toBe(404);
  });

  it('a request naming both alternative files is refused before anything is recorded', async () => {
    await ok(['vnf-create', '--package', 'stack', '--name', 'stack-both']);
    const body = instantiateBody(['Files/kubernetes/deployment.yaml', 'Files/kubernetes/deployment_fail_test.yaml']);
    const r = await vnfm(['vnf-instantiate', 'stack-both', '--request-file', request('both', body), '--allow-package-scripts'], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/stack-b.*defined twice/);
    const ops = JSON.parse((await ok(['op-list', '-o', 'json'])).stdout) as { vnfInstanceId: string }[];
    const instance = JSON.parse((await ok(['vnf-show', 'stack-both', '-o', 'json'])).stdout);
    expect(instance.instantiationState).toBe('NOT_INSTANTIATED');
    expect(ops.filter((o) => o.vnfInstanceId === instance.id)).toEqual([]);
  });

  it('a request naming unnamed reviews deploys: each is created and answered, nothing of them kept, terminate leaves nothing', async () => {
    await ok(['vnf-create', '--package', 'toolbox', '--name', 'toolbox-review']);
    const files = ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/token-review.yaml', 'Files/kubernetes/subject-access-review.yaml', 'Files/kubernetes/self-reviews.yaml'];
    const r = await vnfm(['vnf-instantiate', 'toolbox-review', '--request-file', request('review', instantiateBody(files)), '-o', 'json'], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    // Each review was posted and its answer reported.
    for (const kind of ['TokenReview', 'SubjectAccessReview', 'SelfSubjectAccessReview', 'SelfSubjectRulesReview']) expect(r.stderr).toMatch(new RegExp(`${kind}\\b.*answered`));
    const instance = JSON.parse((await ok(['vnf-show', 'toolbox-review', '-o', 'json'])).stdout);
    expect(instance.instantiationState).toBe('INSTANTIATED');
    const kinds = (instance.instantiatedVnfInfo.resources as { kind: string }[]).map((k) => k.kind);
    expect(kinds).toContain('Deployment');
    expect(kinds.filter((k) => k.endsWith('Review'))).toEqual([]);
    await ok(['vnf-terminate', 'toolbox-review', '--yes']);
    const after = JSON.parse((await ok(['vnf-show', 'toolbox-review', '-o', 'json'])).stdout);
    expect(after.instantiationState).toBe('NOT_INSTANTIATED');
  });

  it.each([
    ['Files/kubernetes/deployment_relay.yaml', 'Deployment', 'deployments'],
    ['Files/kubernetes/replicaset_relay.yaml', 'ReplicaSet', 'replicasets'],
    ['Files/kubernetes/statefulset_relay.yaml', 'StatefulSet', 'statefulsets'],
  ])('the scale shape with %s of its alternatives: instantiate, scale out and in, terminate', async (file, kind, plural) => {
    const name = `relay-${kind.toLowerCase()}`;
    await ok(['vnf-create', '--package', 'relay', '--name', name]);
    await ok(['vnf-instantiate', name, '--request-file', request(name, instantiateBody([file]))]);
    const vnfcs = async () => (JSON.parse((await ok(['vnf-show', name, '-o', 'json'])).stdout).instantiatedVnfInfo.vnfcResourceInfo as { vduId: string }[]).length;
    const workload = async () =>
      (await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/${plural}/relay-scale`)).json as { kind: string; spec: { replicas: number } };
    expect(await workload()).toMatchObject({ kind, spec: { replicas: 1 } });
    expect(await vnfcs()).toBe(1);
    await ok(['vnf-scale', name, '--type', 'SCALE_OUT', '--aspect-id', 'relay_aspect', '--number-of-steps', '2']);
    expect((await workload()).spec.replicas).toBe(3);
    expect(await vnfcs()).toBe(3);
    await ok(['vnf-scale', name, '--type', 'SCALE_IN', '--aspect-id', 'relay_aspect']);
    expect((await workload()).spec.replicas).toBe(2);
    await ok(['vnf-terminate', name, '--yes']);
    expect((await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/${plural}/relay-scale`)).status).toBe(404);
  });

  it('the heal shape: one pod of the Deployment and the bare Pod healed by VNFC id, then all', async () => {
    await ok(['vnf-create', '--package', 'mender', '--name', 'mender']);
    const inst = await ok([
      'vnf-instantiate',
      'mender',
      '--request-file',
      request('mender', instantiateBody(['Files/kubernetes/deployment_mender.yaml', 'Files/kubernetes/pod_mender.yaml'])),
    ]);
    // VDU1's initial delta (1) is outside its vdu_profile (2..3): the default level's VduInstantiationLevels (2) sets the count, and the instantiate says so.
    expect(inst.stderr).toContain(
      'warning: the initial delta of VDU1 (1) is outside its vdu_profile 2..3; VDU1 gets 2 instances (VduInstantiationLevels at instantiation_level_1, as Tacker v2 grants them)',
    );
    type Vnfc = { id: string; vduId: string; vnfcResourceInfoId: string };
    const vnfcs = async () => JSON.parse((await ok(['vnf-show', 'mender', '-o', 'json'])).stdout).instantiatedVnfInfo.vnfcInfo as Vnfc[];
    const before = await vnfcs();
    expect(before.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU1', 'VDU2']);
    const podUid = async () => ((await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/pods/mender-probe`)).json as { metadata: { uid: string } }).metadata.uid;
    const probeUid = await podUid();
    const web = before.find((v) => v.vduId === 'VDU1')!;
    const probe = before.find((v) => v.vduId === 'VDU2')!;
    await ok(['vnf-heal', 'mender', '--vnfc-instance', web.id, probe.id]);
    const after = await vnfcs();
    expect(after.map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU1', 'VDU2']);
    expect(after.map((v) => v.vnfcResourceInfoId)).not.toContain(web.vnfcResourceInfoId);
    // A bare Pod keeps its name: it is deleted and made again.
    expect(await podUid()).not.toBe(probeUid);
    await ok(['vnf-heal', 'mender']);
    expect((await vnfcs()).map((v) => v.vduId).sort()).toEqual(['VDU1', 'VDU1', 'VDU2']);
    await ok(['vnf-terminate', 'mender', '--yes']);
  });

  it("the heal shape without VDU1's VduInstantiationLevels: the initial delta outside the vdu_profile is what is created, as Tacker v1 does", async () => {
    const dir = copyOf('v1-cnf-heal');
    // A descriptor of its own, beside the shape onboarded as it is.
    for (const file of ['mender_top.vnfd.yaml', 'mender_types.yaml']) {
      const path = join(dir, 'Definitions', file);
      writeFileSync(path, readFileSync(path, 'utf8').replaceAll('5b0e8c52-8f0e-4b51-9a63-0c7c1e0a1a02', '5b0e8c52-8f0e-4b51-9a63-0c7c1e0a1b02'));
    }
    const df = join(dir, 'Definitions/mender_df_simple.yaml');
    const text = readFileSync(df, 'utf8');
    writeFileSync(df, text.slice(0, text.indexOf('    - VDU1_instantiation_levels:')) + text.slice(text.indexOf('    - VDU2_instantiation_levels:')));
    await ok(['vnfpkg-onboard', dir, '--name', 'mender-delta']);
    await ok(['vnf-create', '--package', 'mender-delta', '--name', 'mender-delta']);
    const inst = await vnfm(
      ['vnf-instantiate', 'mender-delta', '--request-file', request('mender-delta', instantiateBody(['Files/kubernetes/deployment_mender.yaml'])), '-o', 'json'],
      {
        home,
      },
    );
    expect(inst.code, inst.stderr).toBe(0);
    expect(JSON.parse(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    expect(inst.stderr).toContain(
      "warning: VDU1 gets 1 instance (its initial delta plus the aspects' deltas at instantiation_level_1, as Tacker v1 counts them), outside its vdu_profile 2..3: created all the same; a scale that would leave VDU1 outside 2..3 is refused, as in Tacker",
    );
    const replicas = async () =>
      ((await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/deployments/mender-web`)).json as { spec: { replicas: number } }).spec.replicas;
    // The manifest says 2; the initial delta at scale level 0 says 1, and 1 it is.
    expect(await replicas()).toBe(1);
    // Scale out brings VDU1 into 2..3; scaling back in would leave it outside, and is refused, as Tacker refuses it.
    await ok(['vnf-scale', 'mender-delta', '--type', 'SCALE_OUT', '--aspect-id', 'mender_aspect']);
    expect(await replicas()).toBe(2);
    const scaleIn = await vnfm(['vnf-scale', 'mender-delta', '--type', 'SCALE_IN', '--aspect-id', 'mender_aspect'], { home });
    expect(scaleIn.code).toBe(2);
    expect(scaleIn.stderr).toMatch(/SCALE_IN would give VDU1 1 instances, outside its vdu_profile \(2\.\.3\)/);
    expect(await replicas()).toBe(2);
    await ok(['vnf-terminate', 'mender-delta', '--yes']);
  });

  it("a flavour its VNF type does not list (Tacker's vdumap): instantiated with a warning, scaled, terminated", async () => {
    await ok(['vnf-create', '--package', 'toolbox', '--name', 'toolbox-vdumap']);
    const inst = await vnfm(
      ['vnf-instantiate', 'toolbox-vdumap', '--request-file', request('vdumap', instantiateBody(['Files/kubernetes/deployment_vdumap.yaml'], 'vdumap')), '-o', 'json'],
      {
        home,
      },
    );
    expect(inst.code, inst.stderr).toBe(0);
    expect(inst.stderr).toContain('warning: flavour vdumap is not one of the flavour_id values its VNF node type allows (simple): instantiated all the same, as Tacker does');
    const shown = JSON.parse((await ok(['vnf-show', 'toolbox-vdumap', '-o', 'json'])).stdout);
    expect(shown.instantiatedVnfInfo).toMatchObject({ flavourId: 'vdumap' });
    await ok(['vnf-scale', 'toolbox-vdumap', '--type', 'SCALE_OUT', '--aspect-id', 'mapped_aspect']);
    const deployment = (await cluster.request('GET', `/apis/apps/v1/namespaces/${cluster.namespace}/deployments/toolbox-mapped`)).json as { spec: { replicas: number } };
    expect(deployment.spec.replicas).toBe(2);
    await ok(['vnf-terminate', 'toolbox-vdumap', '--yes']);
  });

  it('a ConfigMap alone: instantiated with no VNFC, terminated', async () => {
    await ok(['vnf-create', '--package', 'toolbox', '--name', 'settings-only']);
    await ok(['vnf-instantiate', 'settings-only', '--request-file', request('cm', instantiateBody(['Files/kubernetes/config-map.yaml']))]);
    const shown = JSON.parse((await ok(['vnf-show', 'settings-only', '-o', 'json'])).stdout);
    expect(shown.instantiationState).toBe('INSTANTIATED');
    expect(shown.instantiatedVnfInfo.vnfcResourceInfo ?? []).toEqual([]);
    expect((await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/configmaps/toolbox-settings`)).status).toBe(200);
    await ok(['vnf-terminate', 'settings-only', '--yes']);
    expect((await cluster.request('GET', `/api/v1/namespaces/${cluster.namespace}/configmaps/toolbox-settings`)).status).toBe(404);
  });
});
