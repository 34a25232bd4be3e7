/**
 * Package scripts in hooks: the document a script reads, its environment,
 * its output in the operation log (secrets redacted), failures, abort
 * stopping its whole process group, and the operator's consent; the helpers
 * that seal and open secrets in requests.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError, ValidationError, VnfmError } from '../../src/errors.js';
import type { VimConnection, VnfInstance } from '../../src/lcm/index.js';
import {
  createManagementDriver,
  openSealed,
  redactSecrets,
  runPackageScript,
  sealedStrings,
  sealFields,
  type HookContext,
  type PackageScriptUse,
  type SealedValue,
} from '../../src/mgmt/index.js';
import type { HookImplementation } from '../../src/vnfd/index.js';

const seal = async (plain: string): Promise<SealedValue> => ({ sealed: `enc:${Buffer.from(plain).toString('base64')}`, keyId: 'k1' });
const open = async (v: SealedValue) => Buffer.from(v.sealed.slice(4), 'base64').toString();

describe('sealed values', () => {
  it('seals the strings at the paths (with * for every key or element), once; opens every sealed object; lists the plain values', async () => {
    const request = {
      flavourId: 'simple',
      additionalParams: {
        nodes: [{ name: 'a', password: 'pw-a' }, { name: 'b', password: 'pw-b' }, { name: 'c' }],
        registry: { user: 'u', password: 'reg-secret', port: 5000 },
      },
    };
    const paths = ['additionalParams.nodes.*.password', 'additionalParams.registry.password', 'additionalParams.registry.port', 'additionalParams.missing.password'];
    const sealed = await sealFields(request, paths, seal);
    expect(sealed.additionalParams.nodes[0]!.password).toEqual({ sealed: `enc:${Buffer.from('pw-a').toString('base64')}`, keyId: 'k1' });
    expect(sealed.additionalParams.nodes[2]).toEqual({ name: 'c' });
    expect(sealed.additionalParams.registry).toMatchObject({ user: 'u', port: 5000 });
    expect(JSON.stringify(sealed)).not.toMatch(/pw-a|pw-b|reg-secret/);
    expect(request.additionalParams.registry.password).toBe('reg-secret');
    // Sealing again leaves sealed values as they are.
    expect(await sealFields(sealed, paths, seal)).toEqual(sealed);

    const opened = await openSealed(sealed, open);
    expect(opened).toEqual(request);
    expect(sealedStrings(sealed, opened).sort()).toEqual(['pw-a', 'pw-b', 'reg-secret']);
    expect(redactSecrets('login u/reg-secret then pw-a', sealedStrings(sealed, opened))).toBe('login u/*** then ***');
  });
});

const vim: VimConnection = {
  id: 'vim-id',
  name: 'edge',
  inline: false,
  spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
  secrets: { bearerToken: 'vim-token-must-not-leak' } as never,
};

function instance(vnfcs: string[]): VnfInstance {
  return {
    id: 'inst-1',
    vnfInstanceDescription: '',
    vnfdId: 'd',
    vnfPkgId: 'p',
    vnfProvider: '',
    vnfProductName: '',
    vnfSoftwareVersion: '',
    vnfdVersion: '',
    instantiationState: vnfcs.length ? 'INSTANTIATED' : 'NOT_INSTANTIATED',
    vimId: 'vim-id',
    createdAt: '',
    updatedAt: '',
    ...(vnfcs.length
      ? {
          instantiatedVnfInfo: {
            flavourId: 'simple',
            vnfState: 'STARTED',
            scaleStatus: [],
            maxScaleLevels: [],
            vnfcInfo: [],
            resources: [],
            vnfcResourceInfo: vnfcs.map((id) => ({ id, vduId: 'VDU1', computeResource: { resourceId: id, vimLevelResourceType: 'Pod' } })) as never,
            metadata: { namespace: 'default', 'lcm-kubernetes-def-files': [], vduReplicas: {} },
          },
        }
      : {}),
  };
}

/** A package directory with the given scripts (bash bodies). */
function pkg(scripts: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-pkgscript-'));
  mkdirSync(join(dir, 'Scripts'));
  for (const [name, body] of Object.entries(scripts)) writeFileSync(join(dir, 'Scripts', name), body);
  return dir;
}

function ctx(packageDir: string, file: string, over: Partial<HookContext> = {}): HookContext & { logs: string[]; reports: string[] } {
  const logs: string[] = [];
  const reports: string[] = [];
  return {
    hook: 'instantiate_end',
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    request: { flavourId: 'simple', additionalParams: { user: 'admin', password: { sealed: `enc:${Buffer.from('s3cret-pw').toString('base64')}`, keyId: 'k1' } } },
    implementation: { implementation: 'configure', artifactFile: file },
    packageDir,
    signal: new AbortController().signal,
    report: (m) => reports.push(m),
    log: (l) => logs.push(l),
    vim,
    instance: instance([]),
    result: instance(['vnfc-1', 'vnfc-2']),
    acceptHostKeys: [],
    allowPackageScripts: true,
    logs,
    reports,
    ...over,
  };
}

const impl = (c: HookContext) => c.implementation as HookImplementation;

describe('runPackageScript', () => {
  it('gives the script the operation as JSON on stdin, in the package directory, with a minimal environment', async () => {
    const dir = pkg({ 'record.sh': 'cat > payload.json\nenv > env.txt\npwd > cwd.txt\necho "configured $VNFM_HOOK"\necho \'{"vnfm_record": {"configured": true}}\'\n' });
    const c = ctx(dir, 'Scripts/record.sh');
    const outcome = await runPackageScript(c, impl(c), { open, env: { PATH: process.env['PATH'], HOME: '/root', VNFM_MASTER_KEY: 'master-key-must-not-leak', VNFM_HOME: '/x' } });

    const payload = JSON.parse(readFileSync(join(dir, 'payload.json'), 'utf8'));
    expect(payload).toEqual({
      operation: 'instantiate_end',
      lcmOperation: 'INSTANTIATE',
      request: { flavourId: 'simple', additionalParams: { user: 'admin', password: 's3cret-pw' } },
      vnf_instance: JSON.parse(JSON.stringify(instance(['vnfc-1', 'vnfc-2']))),
      vnf_instance_before: JSON.parse(JSON.stringify(instance([]))),
      package_dir: dir,
      vim: { id: 'vim-id', name: 'edge', type: 'kubernetes' },
    });
    expect(payload.vnf_instance.instantiatedVnfInfo.vnfcResourceInfo.map((v: { id: string }) => v.id)).toEqual(['vnfc-1', 'vnfc-2']);

    const env = readFileSync(join(dir, 'env.txt'), 'utf8');
    expect(env).not.toContain('VNFM_MASTER_KEY');
    expect(env).not.toContain('VNFM_HOME');
    expect(env).not.toContain('vim-token-must-not-leak');
    expect(env).toContain('VNFM_HOOK=instantiate_end');
    expect(readFileSync(join(dir, 'cwd.txt'), 'utf8').trim()).toBe(dir);

    expect(c.logs).toContain('Scripts/record.sh: configured instantiate_end');
    expect(c.logs.at(-1)).toBe('Scripts/record.sh: exited with code 0');
    expect(outcome).toEqual({ record: { 'package-script:configure': { configured: true } } });
  });

  it('does not pass the process environment on either (the master key stays with vnfm)', async () => {
    const dir = pkg({ 'env.sh': 'env\n' });
    process.env['VNFM_MASTER_KEY'] = 'process-master-key';
    try {
      const c = ctx(dir, 'Scripts/env.sh');
      await runPackageScript(c, impl(c), { open });
      expect(c.logs.join('\n')).not.toContain('process-master-key');
      expect(c.logs.some((l) => l.startsWith('Scripts/env.sh: PATH='))).toBe(true);
    } finally {
      delete process.env['VNFM_MASTER_KEY'];
    }
  });

  it('a non-zero exit fails the hook with the exit code and the last 20 output lines, secrets redacted', async () => {
    const dir = pkg({ 'fail.sh': 'for i in $(seq 1 30); do echo "line $i"; done\necho "login admin with $(sed -n \'s/.*"password":"\\([^"]*\\)".*/\\1/p\')" >&2\nexit 3\n' });
    const c = ctx(dir, 'Scripts/fail.sh');
    const err = (await runPackageScript(c, impl(c), { open }).catch((e: unknown) => e)) as VnfmError;
    expect(err).toBeInstanceOf(VnfmError);
    expect(err.message).toMatch(/^hook instantiate_end: package script Scripts\/fail\.sh \(hook instantiate_end, artifact configure\) exited with code 3; its last output:\n/);
    const shown = err.message.split('\n').slice(1);
    expect(shown).toHaveLength(20);
    expect(shown[0]).toBe('  line 12');
    expect(shown.at(-1)).toBe('  login admin with ***');
    expect(err.message).not.toContain('s3cret-pw');
    expect(err.hint).toContain('--allow-package-scripts');
    expect(c.logs).toContain('Scripts/fail.sh [stderr]: login admin with ***');
    expect(c.logs.join('\n')).not.toContain('s3cret-pw');
  });

  it('an abort stops the script and what it started (its process group)', async () => {
    const dir = pkg({ 'hang.sh': 'sleep 300 &\necho $! > child.pid\necho $$ > script.pid\necho started\nwait\n' });
    const controller = new AbortController();
    const c = ctx(dir, 'Scripts/hang.sh', { signal: controller.signal, log: (l) => void (l.endsWith('started') && controller.abort(new Error('timed out after 5s'))) });
    const err = (await runPackageScript(c, impl(c), { open }).catch((e: unknown) => e)) as VnfmError;
    expect(err.message).toBe('package script Scripts/hang.sh (hook instantiate_end, artifact configure) was stopped: timed out after 5s');
    for (const name of ['script.pid', 'child.pid']) {
      const pid = Number(readFileSync(join(dir, name), 'utf8'));
      while (alive(pid)) await new Promise((r) => setTimeout(r, 20));
      expect(alive(pid)).toBe(false);
    }
  });

  it('runs *.py with python3', async () => {
    const dir = pkg({
      'configure.py':
        'import json, sys\ndoc = json.load(sys.stdin)\nprint(json.dumps({"vnfm_record": {"hook": doc["operation"], "vnfcs": len(doc["vnf_instance"]["instantiatedVnfInfo"]["vnfcResourceInfo"])}}))\n',
    });
    const c = ctx(dir, 'Scripts/configure.py');
    expect(await runPackageScript(c, impl(c), { open })).toEqual({ record: { 'package-script:configure': { hook: 'instantiate_end', vnfcs: 2 } } });
    expect(c.logs[0]).toBe(
      `running Scripts/configure.py: /usr/bin/env python3 ${join(dir, 'Scripts/configure.py')} in ${dir} as vnfm's own user, what it starts followed in /proc and stopped with it`,
    );
  });

  it('refuses a file that is neither *.sh, *.py nor executable', async () => {
    const dir = pkg({ 'tool.bin': '#!/bin/sh\nexit 0\n' });
    const c = ctx(dir, 'Scripts/tool.bin');
    await expect(runPackageScript(c, impl(c), { open })).rejects.toThrow(/Scripts\/tool\.bin is not executable/);
    chmodSync(join(dir, 'Scripts/tool.bin'), 0o755);
    await expect(runPackageScript(c, impl(c), { open })).resolves.toEqual({});
  });
});

/** Running, not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('consent', () => {
  const services = {
    secrets: async () => {
      throw new Error('unused');
    },
    seal,
    open,
  };
  const SCRIPT: HookImplementation = { implementation: 'configure', artifactFile: 'Scripts/record.sh' };
  const input = (packageDir: string, answer: boolean, asked: PackageScriptUse[][]) => ({
    operation: 'INSTANTIATE' as const,
    hooks: ['instantiate_start', 'instantiate_end'] as const,
    implementations: { instantiate_end: SCRIPT, scale_end: { implementation: 'other', artifactFile: 'Scripts/other.sh' } },
    request: { flavourId: 'simple' },
    source: 'inst.json',
    packageDir,
    allowPackageScripts: async (s: readonly PackageScriptUse[]) => (asked.push([...s]), answer),
  });

  it('asks for the scripts of this operation only; a refusal names hook, artifact and file', async () => {
    const driver = createManagementDriver(services);
    const dir = pkg({ 'record.sh': 'exit 0\n' });
    const asked: PackageScriptUse[][] = [];
    expect(await driver.prepare!(input(dir, true, asked))).toEqual({ flavourId: 'simple' });
    expect(asked).toEqual([[{ hook: 'instantiate_end', artifact: 'configure', file: 'Scripts/record.sh' }]]);

    const err = (await driver.prepare!(input(dir, false, [])).catch((e: unknown) => e)) as UsageError;
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toBe('inst.json: package scripts were not allowed: hook instantiate_end runs Scripts/record.sh (artifact configure)');
    expect(err.hint).toBe('review the script, then run again with --allow-package-scripts');
  });

  it('a script missing from the package is refused before consent is asked', async () => {
    const driver = createManagementDriver(services);
    const asked: PackageScriptUse[][] = [];
    const err = await driver.prepare!(input(pkg({}), true, asked)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toBe('inst.json: hook instantiate_end (artifact configure): package script Scripts/record.sh is not in the package');
    expect(asked).toEqual([]);
  });

  it('runHook refuses a package script without consent (a retry without the flag)', async () => {
    const driver = createManagementDriver(services);
    const dir = pkg({ 'record.sh': 'touch ran\n' });
    await expect(driver.runHook(ctx(dir, 'Scripts/record.sh', { allowPackageScripts: false }))).rejects.toThrow(
      /package scripts were not allowed: hook instantiate_end runs Scripts\/record\.sh/,
    );
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    await driver.runHook(ctx(dir, 'Scripts/record.sh'));
    expect(existsSync(join(dir, 'ran'))).toBe(true);
  });
});
