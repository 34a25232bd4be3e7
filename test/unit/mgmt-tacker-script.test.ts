/**
 * Tacker v2's management-driver contract: which scripts get it, the wrapper
 * that pickles vnfm's JSON for the script and reads its pickled output back
 * (a dict kept, anything else ignored), and runPackageScript with such a
 * script: the pickled dict it reads, the instance fields kept, a failure
 * with its stderr, error-handling data carried from the start hook to the end
 * hook, and python3 missing refused before the operation.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ValidationError, VnfmError } from '../../src/errors.js';
import type { VimConnection, VnfInstance } from '../../src/lcm/index.js';
import { resolveScriptIsolation, runPackageScript, type HookContext } from '../../src/mgmt/index.js';
import { checkPackageScripts } from '../../src/mgmt/package-script.js';
import { mergeTackerOutput, scriptContract, TACKER_WRAPPER } from '../../src/mgmt/tacker-script.js';
import type { HookImplementation } from '../../src/vnfd/index.js';

const PY = 'tosca.artifacts.Implementation.Python';

/** A Tacker-style script: reads the pickle, acts on its operation, writes a pickled dict (or what BODY says). */
function tackerScript(body: string): string {
  return ['import os, pickle, sys', 'doc = pickle.load(sys.stdin.buffer)', 'op = doc["operation"]', 'inst = doc["vnf_instance"]', body, ''].join('\n');
}

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'vnfm-tacker-script-'));
  mkdirSync(join(d, 'Scripts'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, 'Scripts', name), text);
  return d;
}

/** Runs the wrapper as vnfm does, returning its exit code, stderr and fd-3 report. */
function wrap(script: string, doc: unknown) {
  const r = spawnSync('python3', ['-c', TACKER_WRAPPER, script], { input: JSON.stringify(doc), stdio: ['pipe', 'pipe', 'pipe', 'pipe'], encoding: 'utf8' });
  return { code: r.status, stderr: String(r.output[2] ?? ''), stdout: String(r.output[1] ?? ''), report: JSON.parse(String(r.output[3] ?? '')) as Record<string, unknown> };
}

describe('scriptContract', () => {
  it.each([
    [{ artifactFile: 'Scripts/sample_script.py', artifactType: PY }, 'tacker-pickle'],
    [{ artifactFile: 'Scripts/SAMPLE.PY', artifactType: PY }, 'tacker-pickle'],
    [{ artifactFile: 'Scripts/configure.py' }, 'vnfm-json'],
    [{ artifactFile: 'Scripts/configure.py', artifactType: 'tosca.artifacts.Implementation' }, 'vnfm-json'],
    [{ artifactFile: 'Scripts/record.sh', artifactType: 'tosca.artifacts.Implementation.Bash' }, 'vnfm-json'],
    [{ artifactFile: 'Scripts/run', artifactType: PY }, 'vnfm-json'],
  ])('%j speaks %s', (impl, contract) => {
    expect(scriptContract(impl)).toBe(contract);
  });
});

describe('the wrapper', () => {
  it('pickles the JSON document to the script and reports the dict it pickles back', () => {
    const d = dir({
      's.py': tackerScript(
        'sys.stderr.write("got %s %s\\n" % (op, sorted(doc)))\nsys.stdout.buffer.write(pickle.dumps({"vnf_instance": {"metadata": {"seen": inst["id"]}}, "user_script_err_handling_data": {"step": 1}, "other": 1}))',
      ),
    });
    const r = wrap(join(d, 'Scripts/s.py'), { operation: 'instantiate_start', vnf_instance: { id: 'i-1' }, request: {} });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("got instantiate_start ['operation', 'request', 'vnf_instance']\n");
    expect(r.stdout).toBe('');
    expect(r.report).toEqual({ returncode: 0, output: { vnf_instance: { metadata: { seen: 'i-1' } }, user_script_err_handling_data: { step: 1 } } });
  });

  it.each([
    ['a list', 'sys.stdout.buffer.write(pickle.dumps([1, 2]))', 'its output is a list, not a dict'],
    ['None', 'sys.stdout.buffer.write(pickle.dumps(None))', 'its output is a NoneType, not a dict'],
    ['nothing', 'pass', 'it wrote nothing on stdout'],
  ])('ignores %s, as Tacker does', (_what, body, ignored) => {
    const d = dir({ 's.py': tackerScript(body) });
    const r = wrap(join(d, 'Scripts/s.py'), { operation: 'x', vnf_instance: {} });
    expect(r.code).toBe(0);
    expect(r.report).toEqual({ returncode: 0, ignored });
  });

  it('ignores text that is not a pickle, and reports a pickle of an unknown class as an error', () => {
    const d = dir({
      'text.py': tackerScript('print("hello")'),
      'cls.py': tackerScript('class Obj:\n    pass\nsys.stdout.buffer.write(pickle.dumps({"vnf_instance": Obj()}))'),
    });
    expect(wrap(join(d, 'Scripts/text.py'), { operation: 'x', vnf_instance: {} }).report['ignored']).toMatch(/^its stdout is not a pickle/);
    expect(wrap(join(d, 'Scripts/cls.py'), { operation: 'x', vnf_instance: {} }).report['error']).toMatch(/^its stdout could not be unpickled: AttributeError: /);
  });

  it("exits with the script's exit code, its stderr passed through, and still reports what it handed back", () => {
    const d = dir({
      's.py': tackerScript(
        'sys.stdout.buffer.write(pickle.dumps({"user_script_err_handling_data": {"half": True}}))\nsys.stdout.flush()\nsys.stderr.write("boom at %s" % op)\nos._exit(3)',
      ),
    });
    const r = wrap(join(d, 'Scripts/s.py'), { operation: 'instantiate_end', vnf_instance: {} });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('boom at instantiate_end');
    expect(r.report).toEqual({ returncode: 3, output: { user_script_err_handling_data: { half: true } } });
  });

  it('turns values JSON has no form for into strings', () => {
    const d = dir({ 's.py': tackerScript('import datetime\nsys.stdout.buffer.write(pickle.dumps({"vnf_instance": {"metadata": {"at": datetime.date(2026, 1, 2), "b": b"x"}}}))') });
    expect(wrap(join(d, 'Scripts/s.py'), { operation: 'x', vnf_instance: {} }).report).toEqual({
      returncode: 0,
      output: { vnf_instance: { metadata: { at: '2026-01-02', b: "b'x'" } } },
    });
  });
});

describe('mergeTackerOutput', () => {
  it('replaces the kept fields, merges error-handling data key by key, and names changed fields vnfm keeps itself', () => {
    const given = { id: 'i', instantiationState: 'INSTANTIATED', metadata: { a: 1 } };
    const r = mergeTackerOutput({ vnf_instance: { metadata: { a: 1 }, extensions: { e: 1 } }, user_script_err_handling_data: { x: 1 } }, given, {
      vnf_instance: { ...given, instantiationState: 'NOT_INSTANTIATED', metadata: { b: 2 } },
      user_script_err_handling_data: { y: 2 },
    });
    expect(r.record).toEqual({ vnf_instance: { metadata: { b: 2 }, extensions: { e: 1 } }, user_script_err_handling_data: { x: 1, y: 2 } });
    expect(r.refused).toEqual(['instantiationState']);
  });
});

const vim: VimConnection = {
  id: 'vim-id',
  name: 'edge',
  inline: false,
  spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
  secrets: { bearerToken: 'vim-token-must-not-leak' } as never,
};

const inst: VnfInstance = {
  id: 'inst-1',
  vnfInstanceDescription: '',
  vnfdId: 'd',
  vnfPkgId: 'p',
  vnfProvider: '',
  vnfProductName: '',
  vnfSoftwareVersion: '',
  vnfdVersion: '',
  instantiationState: 'NOT_INSTANTIATED',
  vimId: 'vim-id',
  createdAt: '',
  updatedAt: '',
};
const open = async () => 'opened';

function ctx(packageDir: string, hook: HookContext['hook'], instance: VnfInstance, logs: string[]): HookContext {
  return {
    hook,
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    request: { flavourId: 'simple', additionalParams: { k: 'v' } },
    implementation: { implementation: 'sample-script', artifactFile: 'Scripts/sample.py', artifactType: PY },
    packageDir,
    signal: new AbortController().signal,
    report: () => {},
    log: (l) => logs.push(l),
    vim,
    instance,
    acceptHostKeys: [],
    allowPackageScripts: true,
  };
}

describe('runPackageScript with a Tacker script', () => {
  const script = tackerScript(
    [
      'assert doc["grant_request"] is None and doc["grant_response"] is None',
      'assert os.path.isdir(doc["tmp_csar_dir"]), doc["tmp_csar_dir"]',
      'assert doc["request"] == {"flavourId": "simple", "additionalParams": {"k": "v"}}, doc["request"]',
      'data = doc["user_script_err_handling_data"]',
      'sys.stderr.write("%s sees metadata=%s data=%s\\n" % (op, inst.get("metadata"), data))',
      'if op == "instantiate_start":',
      '    out = {"vnf_instance": dict(inst, metadata={"configured": "start"}, instantiationState="BROKEN"), "user_script_err_handling_data": {"started": True}}',
      'elif op == "instantiate_end":',
      '    out = {"vnf_instance": dict(inst, extensions={"done": True})}',
      'else:',
      '    sys.stdout.buffer.write(pickle.dumps({}))',
      '    sys.stderr.write("no %s here" % op)',
      '    sys.stderr.flush()',
      '    os._exit(1)',
      'sys.stdout.buffer.write(pickle.dumps(out))',
    ].join('\n'),
  );

  it("carries the start hook's updates and data to the end hook, and keeps the instance fields vnfm takes", async () => {
    const d = dir({ 'sample.py': script });
    const logs: string[] = [];
    const instance = { ...inst };
    const c1 = ctx(d, 'instantiate_start', instance, logs);
    const start = await runPackageScript(c1, c1.implementation as HookImplementation, { open });
    expect(start).toEqual({
      record: { 'tacker-script': { vnf_instance: { metadata: { configured: 'start' } }, user_script_err_handling_data: { started: true } } },
      instanceFields: { metadata: { configured: 'start' } },
    });
    expect(logs).toContain('Scripts/sample.py: vnf_instance fields vnfm keeps itself were not taken: instantiationState');
    const c2 = ctx(d, 'instantiate_end', instance, logs);
    const end = await runPackageScript(c2, c2.implementation as HookImplementation, { open });
    expect(logs).toContain("Scripts/sample.py [stderr]: instantiate_end sees metadata={'configured': 'start'} data={'started': True}");
    expect(end).toEqual({
      record: { 'tacker-script': { vnf_instance: { metadata: { configured: 'start' }, extensions: { done: true } }, user_script_err_handling_data: { started: true } } },
      instanceFields: { metadata: { configured: 'start' }, extensions: { done: true } },
    });
  });

  it("fails the hook on a non-zero exit with the script's stderr", async () => {
    const d = dir({ 'sample.py': script });
    const logs: string[] = [];
    const c = ctx(d, 'terminate_start', { ...inst }, logs);
    const err = await runPackageScript(c, c.implementation as HookImplementation, { open }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VnfmError);
    expect((err as Error).message).toMatch(
      /^hook terminate_start: package script Scripts\/sample\.py \(hook terminate_start, artifact sample-script\) exited with code 1; its last output:\n/,
    );
    expect((err as Error).message).toContain('no terminate_start here');
  });

  it('gives new_csar_dir when the operation moves to a new package, and hides sealed values in what it keeps', async () => {
    const d = dir({
      'sample.py': tackerScript(
        'sys.stdout.buffer.write(pickle.dumps({"vnf_instance": {"metadata": {"new": os.path.basename(doc.get("new_csar_dir", "none")), "copied": doc["request"]["additionalParams"]["password"]}}}))',
      ),
    });
    const newPkg = mkdtempSync(join(tmpdir(), 'vnfm-new-pkg-'));
    const logs: string[] = [];
    const c: HookContext = {
      ...ctx(d, 'modify_information_end', { ...inst }, logs),
      operation: 'MODIFY_INFO',
      newPackageDir: newPkg,
      request: { additionalParams: { password: { sealed: 'enc:x', keyId: 'k1' } } },
    };
    const out = await runPackageScript(c, c.implementation as HookImplementation, { open: async () => 'pw-must-not-be-kept' });
    const kept = { metadata: { new: newPkg.split('/').at(-1), copied: '***' } };
    expect(out).toEqual({ record: { 'tacker-script': { vnf_instance: kept } }, instanceFields: kept });
    expect(JSON.stringify(logs)).not.toContain('pw-must-not-be-kept');
  });

  it('leaves nothing running that the script started: a setsid child, a double-forked daemon (as vnfm runs it here)', async () => {
    const token = String(Date.now() % 1_000_000);
    const d = dir({
      'sample.py': tackerScript(
        [
          'import subprocess',
          `subprocess.Popen(["setsid", "sleep", "300.${token}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)`,
          'if os.fork() == 0:',
          '    os.setsid()',
          '    if os.fork() == 0:',
          `        os.execvp("sleep", ["sleep", "301.${token}"])`,
          '    os._exit(0)',
          'os.wait()',
          'import time',
          'def mine():',
          '    found = []',
          '    for p in filter(str.isdigit, os.listdir("/proc")):',
          '        try:',
          `            if b".${token}" in open("/proc/%s/cmdline" % p, "rb").read(): found.append(p)`,
          '        except OSError:',
          '            pass',
          '    return found',
          'while len(mine()) < 2:',
          '    time.sleep(0.02)',
          'sys.stderr.write("left %d\\n" % len(mine()))',
          'sys.stdout.buffer.write(pickle.dumps({"vnf_instance": {"metadata": {"left": "two"}}}))',
        ].join('\n'),
      ),
    });
    const logs: string[] = [];
    const c = ctx(d, 'instantiate_end', { ...inst }, logs);
    const isolation = resolveScriptIsolation({ uid: process.getuid?.(), hide: [], path: process.env['PATH'] });
    const out = await runPackageScript(c, c.implementation as HookImplementation, { open, isolation });
    // The script saw both running as it ended; its output was read through whatever contains it.
    expect(logs, logs.join('\n')).toContain('Scripts/sample.py [stderr]: left 2');
    expect(out).toEqual({ record: { 'tacker-script': { vnf_instance: { metadata: { left: 'two' } } } }, instanceFields: { metadata: { left: 'two' } } });
    expect(running(`.${token}`)).toEqual([]);
  });

  it('refuses a Python script before the operation when python3 is not on the PATH', () => {
    const d = dir({ 'sample.py': script });
    const use = [{ hook: 'instantiate_start' as const, artifact: 'sample-script', file: 'Scripts/sample.py', artifactType: PY }];
    expect(() => checkPackageScripts('req.json', d, use, { PATH: '/nonexistent' })).toThrow(ValidationError);
    expect(() => checkPackageScripts('req.json', d, use, { PATH: '/nonexistent' })).toThrow(
      'req.json: hook instantiate_start (artifact sample-script): package script Scripts/sample.py needs python3, which is not on the PATH (/nonexistent)',
    );
    expect(() => checkPackageScripts('req.json', d, use, { PATH: process.env['PATH'] })).not.toThrow();
  });
});

/** The pids of the processes running (not zombies) with `text` in their command line. */
function running(text: string): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, 'utf8').includes(text) && readFileSync(`/proc/${n}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map(Number);
}
