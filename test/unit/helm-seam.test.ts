/**
 * Parts of the Helm seam that need no cluster: `--set`-style names turned
 * into a values file's tree, Helm's messages read for a reason, and the
 * private directory removed when the process ends by a signal or an exit.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { load } from 'js-yaml';
import { kubeconfigText } from '../../src/infra/helm/client.js';
import { failureReason } from '../../src/infra/helm/errors.js';
import { nestSetValues } from '../../src/infra/helm/values.js';
import { createWorkdir, liveWorkdirs } from '../../src/infra/helm/workdir.js';

describe('set values become a values tree', () => {
  it.each([
    [{ replicaCount: 3 }, { replicaCount: 3 }],
    [{ 'vdu1.replicaCount': 2, 'vdu1.image': 'nginx' }, { vdu1: { replicaCount: 2, image: 'nginx' } }],
    [{ 'a\\.b': 'dot' }, { 'a.b': 'dot' }],
    [{ 'list[1].name': 'x' }, { list: [null, { name: 'x' }] }],
    [{ 'm[0][1]': true }, { m: [[null, true]] }],
    [{ 'a.b': 1, 'a.c.d': 'x' }, { a: { b: 1, c: { d: 'x' } } }],
  ])('%j → %j', (set, tree) => {
    expect(nestSetValues(set)).toEqual(tree);
  });

  it.each(['', '.a', 'a..b', 'a.', '[0]', 'a[x]', 'a[1]b'])('refuses the name %j (exit 2)', (name) => {
    expect(() => nestSetValues({ [name]: 1 })).toThrow(UsageError);
  });
});

describe("Helm's messages", () => {
  it.each([
    ['Error: INSTALLATION FAILED: cannot re-use a name that is still in use', 'name-in-use'],
    ['Error: release: not found', 'not-found'],
    ['Error: UPGRADE FAILED: "x" has no deployed releases', 'not-found'],
    [
      'Error: INSTALLATION FAILED: Unable to continue with install: ConfigMap "c" in namespace "default" exists and cannot be imported into the current release: invalid ownership metadata',
      'ownership',
    ],
    [
      'Error: INSTALLATION FAILED: template: broken/templates/cm.yaml:4:22: executing "broken/templates/cm.yaml" at <.Values.nothing.here>: nil pointer evaluating interface {}.here',
      'render',
    ],
    ['Error: Kubernetes cluster unreachable: the server has asked for the client to provide credentials', 'unauthorized'],
    ['Error: Kubernetes cluster unreachable: Get "https://127.0.0.1:1/version": tls: failed to verify certificate: x509: certificate signed by unknown authority', 'unauthorized'],
    ['Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress', 'in-progress'],
    ['Error: something else', 'other'],
  ])('%s → %s', (text, reason) => {
    expect(failureReason(text)).toBe(reason);
  });
});

describe('the kubeconfig helm reads', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('carries the CA and a client certificate, never the bearer token', () => {
    const text = kubeconfigText({ server: 'https://127.0.0.1:6443', verifyTls: true, caCert: 'CA-PEM', bearerToken: 'tok-123', clientCert: 'CERT-PEM', clientKey: 'KEY-PEM' });
    expect(text).not.toContain('tok-123');
    const kc = load(text) as any;
    expect(kc['current-context']).toBe('vim');
    expect(kc.clusters[0].cluster).toEqual({ server: 'https://127.0.0.1:6443', 'certificate-authority-data': b64('CA-PEM') });
    expect(kc.users[0].user).toEqual({ 'client-certificate-data': b64('CERT-PEM'), 'client-key-data': b64('KEY-PEM') });
  });

  it('basic auth, and an explicitly insecure VIM (ssl_ca_cert: None)', () => {
    const kc = load(kubeconfigText({ server: 'https://h:6443', verifyTls: false, username: 'u', password: 'p' })) as any;
    expect(kc.clusters[0].cluster).toEqual({ server: 'https://h:6443', 'insecure-skip-tls-verify': true });
    expect(kc.users[0].user).toEqual({ username: 'u', password: 'p' });
  });
});

describe('the private directory', () => {
  it('is 0700, its files 0600, and gone after remove()', () => {
    const dir = createWorkdir();
    const file = dir.write('kubeconfig', 'x');
    expect(statSync(dir.path).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(liveWorkdirs()).toContain(dir.path);
    dir.remove();
    expect(existsSync(dir.path)).toBe(false);
    expect(liveWorkdirs()).not.toContain(dir.path);
  });

  describe('when the process ends first', () => {
    let scratch: string;
    let script: string;
    beforeAll(async () => {
      scratch = mkdtempSync(join(tmpdir(), 'vnfm-helm-workdir-'));
      script = join(scratch, 'holder.mjs');
      // A process that makes a directory, says where, then ends as told: exit, or a signal with or without its own listener.
      await build({
        stdin: {
          contents: `import { createWorkdir } from './src/infra/helm/workdir.ts';
const how = process.argv[2];
// As vnfm's operations do: a once-listener that finishes the work (asynchronously) and then exits.
const own = () => setTimeout(() => { console.log('own listener ran'); process.exit(130); }, 50);
if (how === 'own-listener-first') process.once('SIGINT', own);
const dir = createWorkdir();
dir.write('kubeconfig', 'secret');
if (how === 'own-listener') process.once('SIGINT', own);
console.log(dir.path);
if (how === 'exit') process.exit(3);
setInterval(() => {}, 1000);`,
          resolveDir: join(__dirname, '../..'),
          loader: 'ts',
        },
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: script,
        logLevel: 'silent',
      });
    });
    afterAll(() => rmSync(scratch, { recursive: true, force: true }));

    function run(how: string, signal?: NodeJS.Signals): Promise<{ dir: string; code: number | null; signal: NodeJS.Signals | null; out: string }> {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [script, how], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (signal && out.includes('\n')) child.kill(signal);
        });
        child.on('error', reject);
        child.on('close', (code, sig) => resolve({ dir: out.split('\n')[0]!, code, signal: sig, out }));
      });
    }

    it('on exit', async () => {
      const r = await run('exit');
      expect(r.code).toBe(3);
      expect(r.dir).toMatch(/vnfm-helm-/);
      expect(existsSync(r.dir)).toBe(false);
    });

    it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)('on %s, and the process still ends by the signal', async (sig) => {
      const r = await run('wait', sig);
      expect(r.signal).toBe(sig);
      expect(existsSync(r.dir)).toBe(false);
    });

    it('a helm still running when the process exits is ended with it', async () => {
      const script2 = join(scratch, 'runner.mjs');
      await build({
        stdin: {
          contents: `import { runHelm } from './src/infra/helm/run.ts';
void runHelm({ executable: '/bin/sleep', args: ['300'], env: {}, onSpawn: (pid) => { console.log(pid); process.exit(0); } });`,
          resolveDir: join(__dirname, '../..'),
          loader: 'ts',
        },
        bundle: true,
        platform: 'node',
        format: 'esm',
        outfile: script2,
        logLevel: 'silent',
      });
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [script2], { stdio: ['ignore', 'pipe', 'inherit'] });
        let text = '';
        child.stdout.on('data', (d: Buffer) => (text += d.toString()));
        child.on('error', reject);
        child.on('close', () => resolve(text));
      });
      const pid = Number(out.trim());
      expect(pid).toBeGreaterThan(0);
      // Gone, or at most a zombie waiting for its new parent to reap it.
      const alive = () => {
        try {
          return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
        } catch {
          return false;
        }
      };
      while (alive()) await new Promise((r) => setTimeout(r, 20));
      expect(alive()).toBe(false);
    });

    it.each(['own-listener', 'own-listener-first'])("on SIGINT with the program's own listener (%s): that listener decides how the process ends", async (how) => {
      const r = await run(how, 'SIGINT');
      expect(r.out).toContain('own listener ran');
      expect(r.code).toBe(130);
      expect(existsSync(r.dir)).toBe(false);
    });
  });
});
