/**
 * Tacker v2 management-driver scripts through the real program against the
 * sandbox: a package shaped like Tacker's v2 functional-test packages (a
 * VNF node whose Vnflcm hooks name one artifact of type
 * tosca.artifacts.Implementation.Python, file ../Scripts/sample_script.py)
 * whose script is a plain Tacker-style script: a pickled dict on stdin, a
 * pickled dict on stdout. The instance keeps the vnf_instance fields it sets
 * (metadata, extensions) and the error-handling data it hands back; the end
 * hook sees what the start hook set; a failing script leaves FAILED_TEMP
 * with its stderr; a pickled output that is not a dict is ignored; python3
 * missing is refused (exit 2) before anything is recorded. Consent and
 * isolation are those of every package script.
 */
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';
import { newHome, vnfm, okWith } from '../support/cli.js';

const BASIC = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');

// A management script in Tacker v2's style: a class with one method per
// hook, the pickled dict read from stdin, a pickled dict written back.
const SAMPLE_SCRIPT = `import os
import pickle
import sys


class EdgeConfig(object):

    def __init__(self, doc):
        self.doc = doc
        self.req = doc['request']
        self.inst = doc['vnf_instance']
        self.data = doc['user_script_err_handling_data']
        self.params = self.req.get('additionalParams', {})

    def _check(self, op):
        if self.params.get('script_fail') == op:
            raise Exception('edge config refused %s: %s' % (op, self.params.get('script_reason')))

    def instantiate_start(self):
        self._check('instantiate_start')
        assert os.path.isfile(os.path.join(self.doc['tmp_csar_dir'], 'TOSCA-Metadata', 'TOSCA.meta'))
        assert self.doc['grant_request'] is None and self.doc['grant_response'] is None
        self.inst['metadata'] = {'configured_by': 'edge-config', 'stage': 'start'}
        self.data['instantiate_start'] = 'done'

    def instantiate_end(self):
        self._check('instantiate_end')
        vnfcs = self.inst['instantiatedVnfInfo']['vnfcResourceInfo']
        meta = dict(self.inst.get('metadata', {}))
        meta['stage'] = 'end'
        self.inst['metadata'] = meta
        self.inst['extensions'] = {'vnfc_count': len(vnfcs), 'seen_data': dict(self.data)}
        self.data['instantiate_end'] = 'done'

    def terminate_start(self):
        pass

    def terminate_end(self):
        pass


def main():
    doc = pickle.load(sys.stdin.buffer)
    script = EdgeConfig(doc)
    getattr(script, doc['operation'])()
    if script.params.get('script_output') == 'list':
        out = ['not', 'a', 'dict']
    else:
        out = {'vnf_instance': script.inst, 'user_script_err_handling_data': script.data}
    sys.stdout.buffer.write(pickle.dumps(out))
    sys.stdout.flush()


if __name__ == '__main__':
    try:
        main()
        os._exit(0)
    except Exception as ex:
        sys.stderr.write(str(ex))
        sys.stderr.flush()
        os._exit(1)
`;

let sandbox: Sandbox;
let home: string;
let work: string;

function buildPackage(dir: string): string {
  const pkg = join(dir, 'tacker-scripted-cnf');
  cpSync(join(BASIC, 'package'), pkg, { recursive: true });
  mkdirSync(join(pkg, 'Scripts'));
  writeFileSync(join(pkg, 'Scripts/sample_script.py'), SAMPLE_SCRIPT);
  const hash = createHash('sha256').update(SAMPLE_SCRIPT).digest('hex');
  appendFileSync(join(pkg, 'TOSCA-Metadata/TOSCA.meta'), `\nName: Scripts/sample_script.py\nContent-Type: text/x-python\nAlgorithm: SHA-256\nHash: ${hash}\n`);
  const df = join(
    pkg,
    'Definitions',
    readdirSync(join(pkg, 'Definitions')).find((f) => f.includes('_df_'))!,
  );
  const text = readFileSync(df, 'utf8').replace(
    /    VNF:\n      type: vnfm.samples.BasicCnf\n/,
    [
      '    VNF:',
      '      type: vnfm.samples.BasicCnf',
      '      interfaces:',
      '        Vnflcm:',
      '          instantiate_start:',
      '            implementation: sample-script',
      '          instantiate_end:',
      '            implementation: sample-script',
      '          terminate_start:',
      '            implementation: sample-script',
      '          terminate_end:',
      '            implementation: sample-script',
      '      artifacts:',
      '        sample-script:',
      '          description: Sample script',
      '          type: tosca.artifacts.Implementation.Python',
      '          file: ../Scripts/sample_script.py',
      '',
    ].join('\n'),
  );
  expect(text).toContain('implementation: sample-script');
  writeFileSync(df, text);
  return pkg;
}

function request(extra: Record<string, unknown>): string {
  const base = JSON.parse(readFileSync(join(BASIC, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  Object.assign(base.additionalParams, extra);
  const file = join(work, `req-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(base));
  return file;
}

const run = (args: string[], env: Record<string, string | undefined> = {}) => vnfm(args, { home, env: { VNFM_MASTER_KEY: undefined, ...env } });
const ok = okWith((args) => run(args));
const json = <T = any>(s: string) => JSON.parse(s) as T;
const create = async (name: string) => json<{ id: string }>((await ok(['vnf-create', '--package', 'tacker-scripted-cnf', '--name', name, '-o', 'json'])).stdout).id;
const ops = async (vnf: string) => json<any[]>((await ok(['op-list', '--vnf', vnf, '-o', 'json', '--all-fields'])).stdout);
const show = async (vnf: string) => json((await ok(['vnf-show', vnf, '-o', 'json'])).stdout);

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 20, terminationDelayMs: 20 } });
  work = mkdtempSync(join(tmpdir(), 'vnfm-tacker-scripts-'));
  const vimConfig = join(work, 'vim-config.yaml');
  writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: join(work, 'kubeconfig') });
  home = newHome();
  await ok(['vim-register', '--config-file', vimConfig, 'sandbox']);
  await ok(['vnfpkg-onboard', buildPackage(work), '--name', 'tacker-scripted-cnf']);
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('Tacker v2 management scripts', () => {
  it("run with Tacker's pickle contract: the instance keeps the metadata and extensions they set, the end hook sees the start hook's data", async () => {
    const vnf = await create('tacker-ok');
    const refused = await run(['vnf-instantiate', vnf, '--request-file', request({})]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'package scripts were not allowed: hook instantiate_start runs Scripts/sample_script.py (artifact sample-script), hook instantiate_end runs Scripts/sample_script.py (artifact sample-script)',
    );
    expect(await ops(vnf)).toEqual([]);

    await ok(['vnf-instantiate', vnf, '--request-file', request({}), '--allow-package-scripts', '--timeout', '60s']);
    const inst = await show(vnf);
    expect(inst.instantiationState).toBe('INSTANTIATED');
    expect(inst.instantiatedVnfInfo.metadata.mgmt['tacker-script']).toEqual({
      vnf_instance: {
        metadata: { configured_by: 'edge-config', stage: 'end' },
        extensions: { vnfc_count: 2, seen_data: { instantiate_start: 'done' } },
      },
      user_script_err_handling_data: { instantiate_start: 'done', instantiate_end: 'done' },
    });
    // As Tacker applies a script's vnf_instance to the instance itself.
    expect(inst.metadata).toEqual({ configured_by: 'edge-config', stage: 'end' });
    expect(inst.extensions).toEqual({ vnfc_count: 2, seen_data: { instantiate_start: 'done' } });
    const [op] = await ops(vnf);
    expect(op.operationState).toBe('COMPLETED');
    const log = (await ok(['op-log', op.id])).stdout;
    expect(log).toMatch(
      /\[instantiate_start\] running Scripts\/sample_script\.py: python3 \S+\/Scripts\/sample_script\.py \(Tacker's contract: a pickled dict on stdin and stdout\)/,
    );
    expect(log).toContain('[instantiate_end] Scripts/sample_script.py: kept vnf_instance metadata, extensions and user_script_err_handling_data');
    if (process.getuid?.() === 0) expect(log).toMatch(/running Scripts\/sample_script\.py: .* as nobody \(uid 65534\)/);

    await ok(['vnf-terminate', vnf, '--yes', '--allow-package-scripts', '--timeout', '60s']);
    expect((await ops(vnf)).find((o) => o.operation === 'TERMINATE').operationState).toBe('COMPLETED');
  }, 90_000);

  it('a script that exits non-zero leaves FAILED_TEMP with its stderr', async () => {
    const vnf = await create('tacker-fail');
    const r = await run([
      'vnf-instantiate',
      vnf,
      '--request-file',
      request({ script_fail: 'instantiate_end', script_reason: 'no uplink' }),
      '--allow-package-scripts',
      '--timeout',
      '60s',
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('hook instantiate_end: package script Scripts/sample_script.py (hook instantiate_end, artifact sample-script) exited with code 1; its last output:');
    expect(r.stderr).toContain('  edge config refused instantiate_end: no uplink');
    const [op] = await ops(vnf);
    expect(op.operationState).toBe('FAILED_TEMP');
    expect(op.error.detail).toContain('edge config refused instantiate_end: no uplink');
    expect((await ok(['op-log', op.id])).stdout).toContain('[instantiate_end] Scripts/sample_script.py [stderr]: edge config refused instantiate_end: no uplink');
    await ok(['op-rollback', op.id, '--timeout', '60s']);
    expect((await ops(vnf))[0]).toMatchObject({ id: op.id, operationState: 'ROLLED_BACK' });
  }, 90_000);

  it('a pickled output that is not a dict is ignored, as Tacker ignores it', async () => {
    const vnf = await create('tacker-list');
    await ok(['vnf-instantiate', vnf, '--request-file', request({ script_output: 'list' }), '--allow-package-scripts', '--timeout', '60s']);
    const inst = await show(vnf);
    expect(inst.instantiationState).toBe('INSTANTIATED');
    expect(inst.instantiatedVnfInfo.metadata.mgmt?.['tacker-script']).toBeUndefined();
    const [op] = await ops(vnf);
    expect(op.operationState).toBe('COMPLETED');
    expect((await ok(['op-log', op.id])).stdout).toContain('[instantiate_end] Scripts/sample_script.py: output ignored, as Tacker ignores it: its output is a list, not a dict');
    await ok(['vnf-terminate', vnf, '--yes', '--allow-package-scripts', '--timeout', '60s']);
  }, 90_000);

  it('without python3 on the PATH the operation is refused before anything is recorded (exit 2)', async () => {
    const vnf = await create('tacker-nopython');
    const r = await run(['vnf-instantiate', vnf, '--request-file', request({}), '--allow-package-scripts', '--timeout', '60s'], { PATH: '/nonexistent-vnfm-bin' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'hook instantiate_start (artifact sample-script): package script Scripts/sample_script.py needs python3, which is not on the PATH (/nonexistent-vnfm-bin)',
    );
    expect(r.stderr).toContain('hint: install python3');
    expect(await ops(vnf)).toEqual([]);
    expect((await show(vnf)).instantiationState).toBe('NOT_INSTANTIATED');
  }, 60_000);
});
