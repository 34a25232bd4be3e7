/**
 * Tacker's command-line forms, run as the real program against the sandbox:
 * the request file as a positional argument, `vnf-create VNFD_ID`,
 * `--vnfc-instance A B`, `--additional-param-file` on scale and heal,
 * `vnf-terminate --delete`, `vnf-create --instantiate-file` and
 * `vim-update --is-default true|false` — and what each refuses, with
 * nothing recorded.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eCluster, type E2eCluster } from '../support/e2e-cluster.js';
import { newHome, vnfm, okWith } from '../support/cli.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

let cluster: E2eCluster;
let home: string;
let dir: string;
let vnfdId: string;
let NS: string;

const REQ = (name: string) => join(dir, 'requests', name);
const json = <T = Record<string, unknown>>(out: string) => JSON.parse(out) as T;

const ok = okWith((args) => vnfm(args, { home }));

const run = (args: string[]) => vnfm(args, { home });

/** The names of the instances vnfm has. */
async function instanceNames(): Promise<string[]> {
  return json<{ vnfInstanceName?: string }[]>((await ok(['vnf-list', '-o', 'json'])).stdout).map((i) => i.vnfInstanceName ?? '');
}

async function occurrencesOf(vnf: string): Promise<{ operation: string; operationState: string }[]> {
  return json((await ok(['op-list', '--vnf', vnf, '-o', 'json'])).stdout);
}

function writeFile(name: string, body: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  return path;
}

beforeAll(async () => {
  cluster = await e2eCluster('e2e-tacker-cli', { controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  NS = cluster.namespace;
  dir = mkdtempSync(join(tmpdir(), 'vnfm-tacker-cli-'));
  mkdirSync(join(dir, 'requests'));
  for (const f of readdirSync(join(SAMPLE, 'requests'))) {
    const body = JSON.parse(readFileSync(join(SAMPLE, 'requests', f), 'utf8')) as { additionalParams?: { namespace?: string } };
    if (body.additionalParams?.namespace !== undefined) body.additionalParams.namespace = NS;
    writeFileSync(REQ(f), JSON.stringify(body, null, 2));
  }
  const vimConfig = join(dir, 'vim-config.yaml');
  cluster.writeVimConfig(vimConfig, NS);
  // A VIM nothing answers at: registered unchecked, refused at an operation's pre-flight check.
  writeFileSync(join(dir, 'dead-vim.yaml'), readFileSync(vimConfig, 'utf8').replace(/^auth_url: .*$/m, 'auth_url: https://127.0.0.1:9'));
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vim-register', '--config-file', join(dir, 'dead-vim.yaml'), '--no-check', 'dead']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package'), '--name', 'basic-cnf']);
  await ok(['vnfpkg-onboard', join(SAMPLE, 'package-v2'), '--name', 'basic-cnf-v2']);
  vnfdId = json<{ vnfdId: string }>((await ok(['vnfpkg-show', 'basic-cnf', '-o', 'json'])).stdout).vnfdId;
});

afterAll(async () => {
  await cluster?.close();
});

describe("Tacker's command-line forms", () => {
  it('vnf-create VNFD_ID; the vnfdId twice, or with --package, is refused (exit 2) and creates nothing', async () => {
    const twice = await run(['vnf-create', vnfdId, '--vnfd-id', vnfdId, '--name', 'nope']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/the vnfdId is given twice/);
    const both = await run(['vnf-create', vnfdId, '--package', 'basic-cnf', '--name', 'nope']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/both a vnfdId .* and --package basic-cnf are given/);
    const notVnfd = await run(['vnf-create', 'basic-cnf', '--name', 'nope']);
    expect(notVnfd.code).toBe(2);
    expect(notVnfd.stderr).toMatch(/"basic-cnf" is not a vnfdId/);
    expect(await instanceNames()).toEqual([]);

    const created = json<{ vnfdId: string; instantiationState: string }>((await ok(['vnf-create', vnfdId, '--name', 'web', '-o', 'json'])).stdout);
    expect(created).toMatchObject({ vnfdId, instantiationState: 'NOT_INSTANTIATED' });
  });

  it('vnf-instantiate VNF FILE; the file twice or not at all is refused (exit 2) before anything starts', async () => {
    const twice = await run(['vnf-instantiate', 'web', REQ('instantiate.json'), '--request-file', REQ('instantiate.json')]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`error: the request file is given twice: "${REQ('instantiate.json')}" and --request-file "${REQ('instantiate.json')}"`);
    const none = await run(['vnf-instantiate', 'web']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/the request file is missing\nhint: vnfm vnf-instantiate VNF FILE/);
    expect(await occurrencesOf('web')).toEqual([]);

    const inst = await ok(['vnf-instantiate', 'web', REQ('instantiate.json'), '-o', 'json']);
    expect(json(inst.stdout)).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    // --request-file keeps working: a second instantiate is refused by the instance's state, not by the form.
    const again = await run(['vnf-instantiate', 'web', '--request-file', REQ('instantiate.json')]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/is already INSTANTIATED/);
  });

  it('vnf-scale --additional-param-file: the file is merged into the request; a file of bare parameters is refused', async () => {
    const params = writeFile('scale-params.json', { additionalParams: { reason: 'load' } });
    const out = json<{ operationState: string; operationParams: Record<string, unknown> }>(
      (await ok(['vnf-scale', 'web', '--type', 'SCALE_OUT', '--aspect-id', 'vdu1_aspect', '--additional-param-file', params, '-o', 'json'])).stdout,
    );
    expect(out.operationState).toBe('COMPLETED');
    expect(out.operationParams).toMatchObject({ type: 'SCALE_OUT', aspectId: 'vdu1_aspect', additionalParams: { reason: 'load' } });

    const before = (await occurrencesOf('web')).length;
    const bare = writeFile('bare-params.json', { reason: 'load' });
    const refused = await run(['vnf-scale', 'web', '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect', '--additional-param-file', bare]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`error: ${bare}: reason: is not a field of the request`);
    expect(refused.stderr).toContain('hint: put the parameters under additionalParams: {"additionalParams": {"reason": ...}}');
    const list = writeFile('list-params.json', '[1, 2]');
    const notObject = await run(['vnf-scale', 'web', '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect', '--additional-param-file', list]);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain(`error: ${list}: is not a JSON object`);
    const missing = await run(['vnf-scale', 'web', '--type', 'SCALE_IN', '--aspect-id', 'vdu1_aspect', '--additional-param-file', join(dir, 'none.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read request file .*none\.json: it does not exist/);
    expect(await occurrencesOf('web')).toHaveLength(before);
  });

  it('vnf-heal --vnfc-instance A B (and --additional-param-file); the VNF after the list needs "--"', async () => {
    const info = json<{ instantiatedVnfInfo: { vnfcInfo: { id: string; vduId: string }[] } }>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo;
    const vdu1 = info.vnfcInfo.filter((v) => v.vduId === 'VDU1').map((v) => v.id);
    expect(vdu1).toHaveLength(2);

    const swallowed = await run(['vnf-heal', '--vnfc-instance', vdu1[0]!, 'web']);
    expect(swallowed.code).toBe(2);
    expect(swallowed.stderr).toMatch(/error: name the VNF instance to heal\nhint: --vnfc-instance took every word after it: .*end the list with "--"/);

    const params = writeFile('heal-params.json', { additionalParams: { all: false } });
    const healed = json<{ operationState: string; operationParams: Record<string, unknown>; resourceChanges: { affectedVnfcs: { id: string; changeType: string }[] } }>(
      (await ok(['vnf-heal', '--vnfc-instance', vdu1[0]!, vdu1[1]!, '--additional-param-file', params, '-o', 'json', '--', 'web'])).stdout,
    );
    expect(healed.operationState).toBe('COMPLETED');
    expect(healed.operationParams).toMatchObject({ vnfcInstanceId: vdu1, additionalParams: { all: false } });
    const removed = healed.resourceChanges.affectedVnfcs.filter((a) => a.changeType === 'REMOVED').map((a) => a.id);
    expect(removed.sort()).toEqual([...vdu1].sort());

    // Repeating the flag still works, and adds to the list.
    const now = json<{ instantiatedVnfInfo: { vnfcInfo: { id: string; vduId: string }[] } }>((await ok(['vnf-show', 'web', '-o', 'json'])).stdout).instantiatedVnfInfo.vnfcInfo;
    const [a, b] = now.filter((v) => v.vduId === 'VDU1').map((v) => v.id);
    const c = now.find((v) => v.vduId === 'VDU2')!.id;
    const repeated = json<{ operationParams: { vnfcInstanceId: string[] } }>((await ok(['vnf-heal', 'web', '--vnfc-instance', a!, b!, '--vnfc-instance', c, '-o', 'json'])).stdout);
    expect(repeated.operationParams.vnfcInstanceId).toEqual([a, b, c]);
  });

  it('vnf-change-package VNF FILE; the file twice is refused (exit 2)', async () => {
    const twice = await run(['vnf-change-package', 'web', REQ('change-package.json'), '--request-file', REQ('change-package.json')]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/the request file is given twice/);
    const out = await ok(['vnf-change-package', 'web', REQ('change-package.json'), '-o', 'json']);
    expect(json(out.stdout)).toMatchObject({ operation: 'CHANGE_VNFPKG', operationState: 'COMPLETED' });
  });

  it('vnf-terminate --delete: a terminate that fails deletes nothing and exits as the failure; one that completes deletes the instance', async () => {
    // A finalizer nobody removes: the Deployment never goes, so the terminate times out.
    const path = `/apis/apps/v1/namespaces/${NS}/deployments/vdu1`;
    const held = await cluster.request('PATCH', path, { metadata: { finalizers: ['example.com/hold'] } }, 'application/merge-patch+json');
    expect(held.status).toBe(200);
    const failed = await run(['vnf-terminate', 'web', '--delete', '--yes', '--timeout', '10s', '-o', 'json']);
    expect(failed.code).toBe(124);
    expect(json(failed.stdout)).toMatchObject({ operation: 'TERMINATE', operationState: 'FAILED_TEMP' });
    expect(failed.stderr).not.toMatch(/vnf instance \S+ deleted/);
    expect(json((await ok(['vnf-show', 'web', '-o', 'json'])).stdout)).toMatchObject({ instantiationState: 'INSTANTIATED' });

    const lifted = await cluster.request('PATCH', path, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    expect(lifted.status).toBe(200);
    const op = (await occurrencesOf('web')).find((o) => o.operationState === 'FAILED_TEMP');
    expect(op).toMatchObject({ id: expect.any(String), operationState: 'FAILED_TEMP' });
    await ok(['op-fail', (op as unknown as { id: string }).id]);
    // op-fail leaves the instance INSTANTIATED (its resources as the journal left them): terminate it again, and delete it.
    const done = await run(['vnf-terminate', 'web', '--delete', '--yes']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).toMatch(/TERMINATE of vnf instance \S+ COMPLETED/);
    expect(done.stderr).toMatch(/vnf instance \S+ deleted/);
    expect((await run(['vnf-show', 'web'])).code).toBe(3);
    expect(json((await ok(['vnfpkg-show', 'basic-cnf-v2', '-o', 'json'])).stdout)['usageState']).toBe('NOT_IN_USE');
  });

  it('vnf-create --instantiate-file: a request the checks refuse creates nothing; a good one creates and instantiates', async () => {
    const badFlavour = writeFile('bad-flavour.json', { ...(json(readFileSync(REQ('instantiate.json'), 'utf8')) as Record<string, unknown>), flavourId: 'large' });
    const refused = await run(['vnf-create', '--package', 'basic-cnf', '--name', 'one-go', '--instantiate-file', badFlavour]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`error: ${badFlavour}: flavourId: "large" is not a flavour of VNFD`);
    expect(refused.stderr).not.toMatch(/created/);
    const badFile = writeFile('bad-file.json', {
      flavourId: 'simple',
      additionalParams: { 'lcm-kubernetes-def-files': ['Files/kubernetes/nowhere.yaml'], namespace: NS },
    });
    expect((await run(['vnf-create', vnfdId, '--name', 'one-go', '--instantiate-file', badFile])).code).toBe(2);
    const unparsable = writeFile('unparsable.json', '{"flavourId": [');
    expect((await run(['vnf-create', vnfdId, '--name', 'one-go', '--instantiate-file', unparsable])).code).toBe(2);
    expect(await instanceNames()).toEqual([]);
    expect(json((await ok(['vnfpkg-show', 'basic-cnf', '-o', 'json'])).stdout)['usageState']).toBe('NOT_IN_USE');

    const out = await ok(['vnf-create', '--package', 'basic-cnf', '--name', 'one-go', '--instantiate-file', REQ('instantiate.json'), '-o', 'json']);
    const op = json<{ operation: string; operationState: string; vnfInstanceId: string }>(out.stdout);
    expect(op).toMatchObject({ operation: 'INSTANTIATE', operationState: 'COMPLETED' });
    expect(out.stderr).toContain(`vnf instance ${op.vnfInstanceId} created`);
    expect(json((await ok(['vnf-show', 'one-go', '-o', 'json'])).stdout)).toMatchObject({ id: op.vnfInstanceId, instantiationState: 'INSTANTIATED' });
    // Tacker's spelling of --delete.
    await ok(['vnf-terminate', 'one-go', '--D', '--yes']);
    expect(await instanceNames()).toEqual([]);
  });

  it('vnf-create --instantiate-file: an instantiate stopped before it started (the VIM unreachable) leaves no instance', async () => {
    const toDead = writeFile('to-dead-vim.json', {
      ...(json(readFileSync(REQ('instantiate.json'), 'utf8')) as Record<string, unknown>),
      vimConnectionInfo: { vim1: { vimId: 'dead', vimType: 'kubernetes' } },
    });
    // Tacker's spelling of --instantiate-file.
    const r = await run(['vnf-create', vnfdId, '--name', 'unreached', '--I', toDead]);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/vnf instance \S+ created/);
    expect(await instanceNames()).toEqual([]);
    expect(json<unknown[]>((await ok(['op-list', '-o', 'json'])).stdout).filter((o) => (o as { operationState: string }).operationState !== 'COMPLETED')).toEqual([]);
  });

  it('vim-update --is-default false leaves no default VIM (a request without vimConnectionInfo is refused, nothing created); true makes it the default again', async () => {
    const isDefault = async (vim: string) => json<{ is_default: boolean }>((await ok(['vim-show', vim, '-o', 'json'])).stdout).is_default;
    expect(await isDefault('sandbox')).toBe(true);
    await ok(['vim-update', 'sandbox', '--is-default', 'false']);
    expect([await isDefault('sandbox'), await isDefault('dead')]).toEqual([false, false]);
    const r = await run(['vnf-create', vnfdId, '--name', 'no-vim', '--instantiate-file', REQ('instantiate.json')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/default VIM/);
    expect(await instanceNames()).toEqual([]);

    await ok(['vim-update', 'dead', '--is-default', 'True']);
    await ok(['vim-update', 'sandbox', '--is-default', 'true']);
    expect([await isDefault('sandbox'), await isDefault('dead')]).toEqual([true, false]);
    await ok(['vim-update', 'sandbox', '--is-default']);
    expect(await isDefault('sandbox')).toBe(true);

    const maybe = await run(['vim-update', 'sandbox', '--is-default', 'maybe']);
    expect(maybe.code).toBe(2);
    expect(maybe.stderr).toContain('error: --is-default "maybe" is not true or false');
    // The form from before --is-default took a value: the word after it names the VIM.
    await ok(['vim-update', 'sandbox', '--is-default', 'false']);
    await ok(['vim-update', '--is-default', 'sandbox']);
    expect(await isDefault('sandbox')).toBe(true);
  });
});
