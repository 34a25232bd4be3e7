/**
 * The real program against the Kubernetes API sandbox: every VIM command,
 * good and bad input, and what stays in the store.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';
import { newHome, vnfm } from '../support/cli.js';

let sandbox: Sandbox;
let other: Sandbox;
let dir: string;
let vimConfig: string;
let kubeconfig: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-k8s-'));
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  // A second sandbox has its own CA: its certificate is the "wrong CA" below.
  other = await startSandbox({ host: '127.0.0.1', port: 0 });
  vimConfig = join(dir, 'vim-config.yaml');
  kubeconfig = join(dir, 'kubeconfig');
  writeSandboxConfigs(sandbox, { vimConfigPath: vimConfig, kubeconfigPath: kubeconfig });
});

afterAll(async () => {
  await sandbox?.close();
  await other?.close();
});

/** A vim-config for the sandbox with some fields replaced. */
function variant(name: string, changes: Record<string, unknown>): string {
  const doc = { ...(yaml.load(readFileSync(vimConfig, 'utf8')) as Record<string, unknown>), ...changes };
  for (const [k, v] of Object.entries(doc)) if (v === undefined) delete doc[k];
  const path = join(dir, name);
  writeFileSync(path, yaml.dump(doc));
  return path;
}

const listJson = async (home: string) => JSON.parse((await vnfm(['vim-list', '-o', 'json'], { home })).stdout) as Record<string, unknown>[];

describe('vim commands against the sandbox', () => {
  it('registers, lists, shows, updates and deletes a Kubernetes VIM', async () => {
    const home = newHome();
    const reg = await vnfm(['vim-register', '--config-file', vimConfig, '--description', 'lab cluster', 'vim-k8s', '-o', 'json'], { home });
    expect(reg.stderr).toMatch(/Kubernetes v1\.\d+/);
    expect(reg.code).toBe(0);
    const created = JSON.parse(reg.stdout);
    expect(created).toMatchObject({ name: 'vim-k8s', type: 'kubernetes', description: 'lab cluster', is_default: true, status: 'REACHABLE', auth_url: sandbox.url });
    expect(created.auth_cred).toMatchObject({ auth_method: 'bearer-token', bearer_token: '***', ssl_ca_cert: '***' });

    const table = await vnfm(['vim-list'], { home });
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+TYPE\s+DEFAULT\s+STATUS$/);
    expect(table.stdout).toMatch(/vim-k8s\s+kubernetes\s+yes/);

    const byId = await vnfm(['vim-show', created.id, '-o', 'yaml'], { home });
    expect(yaml.load(byId.stdout)).toMatchObject({ id: created.id, name: 'vim-k8s' });
    const col = await vnfm(['vim-show', 'vim-k8s', '-o', 'json', '-c', 'auth_url', '-c', 'name'], { home });
    expect(JSON.parse(col.stdout)).toEqual({ auth_url: sandbox.url, name: 'vim-k8s' });

    const second = await vnfm(['vim-register', '--kubeconfig', kubeconfig, '--namespace', 'kube-system', 'vim-kc'], { home });
    expect(second.code, second.stderr).toBe(0);
    let all = await listJson(home);
    expect(all.map((v) => [v['name'], v['is_default']])).toEqual([
      ['vim-k8s', true],
      ['vim-kc', false],
    ]);
    expect((all[1]!['vim_project'] as { name: string }).name).toBe('kube-system');

    const upd = await vnfm(['vim-update', 'vim-kc', '--is-default', '--name', 'vim-edge', '--description', 'edge'], { home });
    expect(upd.code, upd.stderr).toBe(0);
    all = await listJson(home);
    expect(all.map((v) => [v['name'], v['is_default'], v['description']])).toEqual([
      ['vim-k8s', false, 'lab cluster'],
      ['vim-edge', true, 'edge'],
    ]);

    const refused = await vnfm(['vim-delete', 'vim-k8s'], { home });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--yes/);
    expect(await listJson(home)).toHaveLength(2);

    const del = await vnfm(['vim-delete', '--yes', 'vim-k8s', 'vim-edge'], { home });
    expect(del.code, del.stderr).toBe(0);
    expect((await vnfm(['vim-list', '-o', 'json'], { home })).stdout.trim()).toBe('[]');
  });

  it('a bad token fails registration with exit 6 and stores nothing', async () => {
    const home = newHome();
    const r = await vnfm(['vim-register', '--config-file', variant('badtoken.yaml', { bearer_token: 'not-the-token' }), 'v'], { home });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/rejected the bearer token \(401 Unauthorized\)/);
    expect(r.stderr).toMatch(/hint: .*kubectl create token/);
    expect(r.stderr).not.toContain('not-the-token');
    expect(await listJson(home)).toEqual([]);
  });

  it('the wrong CA fails with a certificate message; None skips verification with a warning', async () => {
    const home = newHome();
    const wrong = await vnfm(['vim-register', '--config-file', variant('wrongca.yaml', { ssl_ca_cert: other.caPem }), 'v'], { home });
    expect(wrong.code).toBe(6);
    expect(wrong.stderr).toMatch(/TLS certificate of https:\/\/127\.0\.0\.1:\d+ could not be verified/);
    expect(await listJson(home)).toEqual([]);

    const none = await vnfm(['vim-register', '--config-file', variant('none.yaml', { ssl_ca_cert: 'None' }), 'v'], { home });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toMatch(/warning: .*will not be verified/);
  });

  it('an unreachable API server is exit 6; --no-check stores it PENDING', async () => {
    const home = newHome();
    const path = variant('closed.yaml', { auth_url: 'https://127.0.0.1:9' });
    const r = await vnfm(['vim-register', '--config-file', path, 'v'], { home });
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/cannot reach https:\/\/127\.0\.0\.1:9 \(ECONNREFUSED\)/);
    const ok = await vnfm(['vim-register', '--no-check', '--config-file', path, 'v', '-o', 'json'], { home });
    expect(JSON.parse(ok.stdout).status).toBe('PENDING');
  });

  it('duplicate names, unknown VIMs, type changes and bad files have their own exit codes', async () => {
    const home = newHome();
    expect((await vnfm(['vim-register', '--config-file', vimConfig, 'v'], { home })).code).toBe(0);
    const dup = await vnfm(['vim-register', '--config-file', vimConfig, 'v'], { home });
    expect(dup.code).toBe(4);
    expect(dup.stderr).toMatch(/vim "v" already exists/);
    const missing = await vnfm(['vim-show', 'nope'], { home });
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/vim "nope" not found\nhint: .*vnfm vim-list/);
    const os = join(dir, 'os.yaml');
    writeFileSync(os, 'auth_url: http://127.0.0.1:5000/v3\nusername: u\npassword: p\nproject_name: p\n');
    const typeChange = await vnfm(['vim-update', 'v', '--no-check', '--config-file', os], { home });
    expect(typeChange.code).toBe(2);
    expect(typeChange.stderr).toMatch(/type of a VIM never changes/);
    const bad = await vnfm(['vim-register', '--config-file', variant('bad.yaml', { auth_url: 'nohost' }), 'w'], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml: auth_url \(line \d+\): "nohost" is not a URL/);
    expect((await listJson(home)).map((v) => v['name'])).toEqual(['v']);
    const none = await vnfm(['vim-register', 'w'], { home });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/exactly one of --config-file, --kubeconfig and --os-cloud/);
  });

  it('eight vnfm processes registering at once on a new store all succeed, with one key and one default', async () => {
    const home = newHome();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => vnfm(['vim-register', '--no-check', '--config-file', vimConfig, `vim-${i}`], { home })));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const all = await listJson(home);
    expect(all.map((v) => v['name']).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `vim-${i}`));
    expect(all.filter((v) => v['is_default'])).toHaveLength(1);
    expect(readFileSync(join(home, 'master.key'), 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('secrets at rest and in output', () => {
  it('the database, its WAL, a copy without the key, and every output format hold no secret', async () => {
    const home = newHome();
    const token = sandbox.token;
    const caBody = sandbox.caPem
      .split('\n')
      .filter((l) => l && !l.startsWith('-----'))
      .join('');
    const password = 'pw-' + Math.random().toString(36).slice(2);
    const basic = variant('basic.yaml', { bearer_token: undefined, username: 'someone', password, ssl_ca_cert: 'None' });
    expect((await vnfm(['vim-register', '--config-file', vimConfig, 'vim-a'], { home })).code).toBe(0);
    expect((await vnfm(['vim-register', '--no-check', '--config-file', basic, 'vim-b'], { home })).code).toBe(0);
    const outputs: string[] = [];
    for (const fmt of ['table', 'json', 'yaml']) {
      for (const args of [['vim-list'], ['vim-show', 'vim-a'], ['vim-show', 'vim-b'], ['vim-update', 'vim-a', '--description', 'x']]) {
        const r = await vnfm([...args, '-o', fmt], { home });
        expect(r.code, r.stderr).toBe(0);
        outputs.push(r.stdout, r.stderr);
      }
      const r = await vnfm(['vim-register', '--config-file', vimConfig, `vim-${fmt}`, '-o', fmt], { home });
      outputs.push(r.stdout, r.stderr);
    }
    const files = ['vnfm.db', 'vnfm.db-wal'].filter((f) => existsSync(join(home, f))).map((f) => readFileSync(join(home, f)).toString('latin1'));
    expect(files.length).toBeGreaterThan(0);
    const copy = mkdtempSync(join(tmpdir(), 'vnfm-copy-'));
    copyFileSync(join(home, 'vnfm.db'), join(copy, 'vnfm.db'));
    files.push(readFileSync(join(copy, 'vnfm.db')).toString('latin1'));
    for (const text of [...outputs, ...files]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(password);
      expect(text).not.toContain(caBody.slice(0, 40));
    }
    // The copy alone: without the key file, vnfm refuses to write secrets (exit 5) rather than making a new key.
    const r = await vnfm(['vim-register', '--config-file', vimConfig, 'vim-c'], { home: copy });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/master\.key/);
    expect(existsSync(join(copy, 'master.key'))).toBe(false);
  });
});
