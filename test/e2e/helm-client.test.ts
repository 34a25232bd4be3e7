/**
 * The Helm seam (src/infra/helm) with the real helm binary against the
 * sandbox: a release through install, manifest, upgrade --reuse-values
 * --set, history, rollback and uninstall; Helm's failures as typed errors;
 * the private kubeconfig gone after success, failure and abort; no secret on
 * helm's command line.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, InterruptedError } from '../../src/errors.js';
import { createHelmChartTool, createHelmClient, findHelm, HelmError, HelmNotFoundError, type HelmClient } from '../../src/infra/helm/index.js';
import type { KubeAccess } from '../../src/infra/kubernetes/kube-api.js';
import { startSandbox, type Sandbox } from '@vnfm/kube-sandbox';
import { helmPath, HELM_VERSION } from '../support/helm.js';
import { kubeRequest, type KubeEndpoint } from '../support/kube-http.js';

let sandbox: Sandbox;
let endpoint: KubeEndpoint;
let access: KubeAccess;
let dir: string;
let chart: string;
let brokenChart: string;

/** Each helm process started: its argv as /proc showed it while it ran, and its kubeconfig's mode then. */
const seen: Array<{ pid: number; argv: readonly string[]; cmdline: string; kubeconfig?: string; fileMode?: number; dirMode?: number; kubeconfigText?: string }> = [];
const observeSpawn = (pid: number, argv: readonly string[]) => {
  const kubeconfig = argv[argv.indexOf('--kubeconfig') + 1];
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    // Already exited.
  }
  const entry: (typeof seen)[number] = { pid, argv, cmdline };
  if (argv.includes('--kubeconfig') && kubeconfig) {
    entry.kubeconfig = kubeconfig;
    entry.fileMode = statSync(kubeconfig).mode & 0o777;
    entry.dirMode = statSync(dirname(kubeconfig)).mode & 0o777;
    entry.kubeconfigText = readFileSync(kubeconfig, 'utf8');
  }
  seen.push(entry);
};

let client: HelmClient;

function writeChart(root: string, files: Record<string, string>): string {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
  return root;
}

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 20 } });
  endpoint = { server: sandbox.url, token: sandbox.token, caPem: sandbox.caPem };
  access = { server: sandbox.url, verifyTls: true, caCert: sandbox.caPem, bearerToken: sandbox.token };
  dir = mkdtempSync(join(tmpdir(), 'vnfm-helm-client-'));
  chart = writeChart(join(dir, 'cnf'), {
    'Chart.yaml': 'apiVersion: v2\nname: cnf\nversion: 1.0.0\nappVersion: "2.1"\n',
    'values.yaml': 'vdu1:\n  replicaCount: 1\nimage: nginx:1.27\npassword: ""\n',
    'templates/vdu1.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: vdu1}
spec:
  replicas: {{ .Values.vdu1.replicaCount }}
  selector: {matchLabels: {app: vdu1}}
  template:
    metadata: {labels: {app: vdu1}}
    spec:
      containers: [{name: web, image: {{ .Values.image | quote }}}]
`,
    'templates/secret.yaml': `apiVersion: v1
kind: Secret
metadata: {name: cnf-credentials}
stringData: {password: {{ .Values.password | quote }}}
`,
  });
  brokenChart = writeChart(join(dir, 'broken'), {
    'Chart.yaml': 'apiVersion: v2\nname: broken\nversion: 0.0.1\n',
    'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: {{ .Values.nothing.here }}}\n',
  });
  client = createHelmClient({ access, executable: helmPath(), observeSpawn });
});
afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const replicas = async (name: string) => (await kubeRequest(endpoint, 'GET', `/apis/apps/v1/namespaces/default/deployments/${name}`)).json?.spec?.replicas;

describe('a release through its lifecycle', () => {
  it('installs (no --wait) and returns the release', async () => {
    const release = await client.install({ release: 'cnf1', chart, namespace: 'default', set: { 'vdu1.replicaCount': 2, password: 'pa55-in-values' } });
    expect(release).toMatchObject({ name: 'cnf1', namespace: 'default', revision: 1, status: 'deployed', chart: 'cnf-1.0.0', appVersion: '2.1' });
    expect(await replicas('vdu1')).toBe(2);
    const argv = seen.at(-1)!.argv;
    expect(argv.slice(1, 4)).toEqual(['install', 'cnf1', chart]);
    expect(argv).not.toContain('--wait');
    // The manifest it applied, as helm get manifest prints it.
    expect(release.manifest?.trimEnd()).toBe((await client.getManifest({ release: 'cnf1', namespace: 'default' })).trimEnd());
    expect(release.manifest).toMatch(/kind: Deployment\n/);
  });

  it('reads the manifest, status, values and list back', async () => {
    const manifest = await client.getManifest({ release: 'cnf1', namespace: 'default' });
    expect(manifest).toContain('kind: Deployment');
    expect(manifest).toContain('name: cnf-credentials');
    expect(await client.status({ release: 'cnf1', namespace: 'default' })).toMatchObject({ revision: 1, status: 'deployed' });
    expect(await client.getValues({ release: 'cnf1', namespace: 'default' })).toEqual({ vdu1: { replicaCount: 2 }, password: 'pa55-in-values' });
    expect((await client.getValues({ release: 'cnf1', namespace: 'default', all: true })).image).toBe('nginx:1.27');
    expect(await client.list({ namespace: 'default' })).toEqual([
      expect.objectContaining({ name: 'cnf1', namespace: 'default', revision: 1, status: 'deployed', chart: 'cnf-1.0.0' }),
    ]);
  });

  it('upgrades with --reuse-values and a --set value', async () => {
    const release = await client.upgrade({ release: 'cnf1', chart, namespace: 'default', reuseValues: true, set: { 'vdu1.replicaCount': 3 }, historyMax: 0 });
    expect(release).toMatchObject({ revision: 2, status: 'deployed' });
    expect(await replicas('vdu1')).toBe(3);
    expect(seen.at(-1)!.argv).toContain('--reuse-values');
    expect(seen.at(-1)!.argv.join(' ')).toContain('--history-max 0');
    expect(await client.getValues({ release: 'cnf1', namespace: 'default' })).toEqual({ vdu1: { replicaCount: 3 }, password: 'pa55-in-values' });
    const history = await client.history({ release: 'cnf1', namespace: 'default' });
    expect(history.map((h) => [h.revision, h.status, h.description])).toEqual([
      [1, 'superseded', 'Install complete'],
      [2, 'deployed', 'Upgrade complete'],
    ]);
  });

  it('rolls back to a revision', async () => {
    await client.rollback({ release: 'cnf1', namespace: 'default', revision: 1 });
    expect(await replicas('vdu1')).toBe(2);
    expect(await client.status({ release: 'cnf1', namespace: 'default' })).toMatchObject({
      name: 'cnf1',
      namespace: 'default',
      revision: 3,
      status: 'deployed',
      chart: 'cnf-1.0.0',
      appVersion: '2.1',
      description: 'Rollback to 1',
    });
    expect(await client.getManifest({ release: 'cnf1', namespace: 'default', revision: 2 })).toContain('replicas: 3');
  });

  it('refuses a second release of the same name (exit 4, nothing changed)', async () => {
    const err = await client.install({ release: 'cnf1', chart, namespace: 'default' }).catch((e) => e);
    expect(err).toBeInstanceOf(HelmError);
    expect(err).toMatchObject({ reason: 'name-in-use', exitCode: ExitCode.conflict, command: 'install' });
    expect(err.message).toContain('cannot re-use a name that is still in use');
    expect(err.message).toContain('release "cnf1" in namespace "default"');
    expect((await client.status({ release: 'cnf1', namespace: 'default' }))?.revision).toBe(3);
  });

  it("a chart that does not render is exit 2 with Helm's message, and nothing is installed", async () => {
    const err = await client.install({ release: 'bad1', chart: brokenChart, namespace: 'default' }).catch((e) => e);
    expect(err).toBeInstanceOf(HelmError);
    expect(err).toMatchObject({ reason: 'render', exitCode: ExitCode.usage });
    expect(err.message).toMatch(/nil pointer evaluating interface \{\}\.here/);
    expect(await client.status({ release: 'bad1', namespace: 'default' })).toBeUndefined();
  });

  it('a release that does not exist: status undefined, history [], get manifest exit 3, uninstall a no-op', async () => {
    expect(await client.status({ release: 'nope', namespace: 'default' })).toBeUndefined();
    expect(await client.history({ release: 'nope', namespace: 'default' })).toEqual([]);
    const err = await client.getManifest({ release: 'nope', namespace: 'default' }).catch((e) => e);
    expect(err).toMatchObject({ reason: 'not-found', exitCode: ExitCode.notFound });
    await expect(client.uninstall({ release: 'nope', namespace: 'default' })).resolves.toBeUndefined();
  });

  it('uninstalls (no --wait): the release and its objects go', async () => {
    await client.uninstall({ release: 'cnf1', namespace: 'default' });
    expect(await client.list({ namespace: 'default' })).toEqual([]);
    expect((await kubeRequest(endpoint, 'GET', '/api/v1/namespaces/default/secrets/cnf-credentials')).status).toBe(404);
    expect(seen.at(-1)!.argv).not.toContain('--wait');
  });
});

describe('helm killed mid-upgrade', () => {
  it('leaves the release pending: another upgrade is refused (in-progress, exit 4), a rollback recovers it', async () => {
    await client.install({ release: 'cut1', chart, namespace: 'default', set: { 'vdu1.replicaCount': 1 } });
    // The Deployment's update is held back (503, retry in 30 s), so helm stops after recording the pending revision.
    const lift = sandbox.faults.failRequests({ status: 503, retryAfterSeconds: 30, method: 'PATCH', path: '/apis/apps/v1/namespaces/default/deployments/vdu1' });
    let pid = 0;
    const killer = createHelmClient({ access, executable: helmPath(), observeSpawn: (p) => (pid = p) });
    const upgrading = killer.upgrade({ release: 'cut1', chart, namespace: 'default', reuseValues: true, set: { 'vdu1.replicaCount': 4 } }).catch((e) => e);
    const pendingSecret = async () =>
      (await kubeRequest(endpoint, 'GET', `/api/v1/namespaces/default/secrets?labelSelector=${encodeURIComponent('owner=helm,name=cut1,status=pending-upgrade')}`)).json.items
        .length;
    while ((await pendingSecret()) === 0) await new Promise((r) => setTimeout(r, 50));
    process.kill(pid, 'SIGKILL');
    const err = await upgrading;
    lift();
    expect(err).toBeInstanceOf(HelmError);
    expect(err.message).toContain('helm was killed by SIGKILL');
    expect(err.hint).toMatch(/op-retry rolls it back/);
    expect(await client.status({ release: 'cut1', namespace: 'default' })).toMatchObject({ revision: 2, status: 'pending-upgrade' });

    const again = await client.upgrade({ release: 'cut1', chart, namespace: 'default', reuseValues: true, set: { 'vdu1.replicaCount': 4 } }).catch((e) => e);
    expect(again).toMatchObject({ reason: 'in-progress', exitCode: ExitCode.conflict });

    await client.rollback({ release: 'cut1', namespace: 'default', revision: 1 });
    expect(await client.status({ release: 'cut1', namespace: 'default' })).toMatchObject({ revision: 3, status: 'deployed' });
    expect((await client.upgrade({ release: 'cut1', chart, namespace: 'default', reuseValues: true, set: { 'vdu1.replicaCount': 4 } })).revision).toBe(4);
    expect(await replicas('vdu1')).toBe(4);
    await client.uninstall({ release: 'cut1', namespace: 'default' });
  });
});

describe('credentials', () => {
  it('never puts a secret on the command line: the token goes by environment, values by a file', () => {
    expect(seen.length).toBeGreaterThan(10);
    for (const s of seen) {
      expect(s.cmdline || s.argv.join(' ')).not.toContain(sandbox.token);
      expect(s.cmdline || s.argv.join(' ')).not.toContain('pa55-in-values');
      expect(s.argv.join(' ')).not.toContain(sandbox.token);
      expect(s.argv.join(' ')).not.toContain('pa55-in-values');
    }
    // /proc showed the running process's argv at least once (the check above then read the real thing).
    expect(seen.some((s) => s.cmdline.includes('--kubeconfig'))).toBe(true);
  });

  it('writes the kubeconfig 0600 in a 0700 directory, without the token, and removes it after each call', () => {
    const withConfig = seen.filter((s) => s.kubeconfig);
    expect(withConfig.length).toBeGreaterThan(10);
    for (const s of withConfig) {
      expect(s.fileMode).toBe(0o600);
      expect(s.dirMode).toBe(0o700);
      expect(s.kubeconfigText).toContain(sandbox.url);
      expect(s.kubeconfigText).not.toContain(sandbox.token);
      expect(existsSync(dirname(s.kubeconfig!))).toBe(false);
    }
  });

  it("a rejected token: exit 6 with Helm's message, which carries no credential", async () => {
    const wrong = 'wrong-token-0123456789abcdef';
    const other = createHelmClient({ access: { ...access, bearerToken: wrong }, executable: helmPath(), observeSpawn });
    const err = await other.list({ namespace: 'default' }).catch((e) => e);
    expect(err).toBeInstanceOf(HelmError);
    expect(err).toMatchObject({ reason: 'unauthorized', exitCode: ExitCode.vimCheck });
    expect(err.stderr).toMatch(/Unauthorized|provide credentials/);
    expect(err.message).not.toContain(wrong);
    expect(err.message).not.toContain(sandbox.token);
    expect(existsSync(dirname(seen.at(-1)!.kubeconfig!))).toBe(false);
  });

  it('an abort kills helm and removes its directory; the call rejects with the abort reason', async () => {
    const controller = new AbortController();
    const reason = new InterruptedError('interrupted (Ctrl-C)');
    let pid = 0;
    let kubeconfig = '';
    const aborting = createHelmClient({
      access,
      executable: helmPath(),
      observeSpawn: (p, argv) => {
        pid = p;
        kubeconfig = argv[argv.indexOf('--kubeconfig') + 1]!;
        expect(existsSync(kubeconfig)).toBe(true);
        controller.abort(reason);
      },
    });
    const err = await aborting.install({ release: 'aborted1', chart, namespace: 'default', signal: controller.signal }).catch((e) => e);
    expect(err).toBe(reason);
    expect(pid).toBeGreaterThan(0);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    expect(existsSync(dirname(kubeconfig))).toBe(false);
  });

  it('an already aborted signal starts no helm', async () => {
    const controller = new AbortController();
    controller.abort(new InterruptedError('stopped'));
    const before = seen.length;
    await expect(client.list({ namespace: 'default', signal: controller.signal })).rejects.toThrow('stopped');
    expect(seen.length).toBe(before);
  });
});

describe('finding helm', () => {
  it('takes VNFM_HELM first, then PATH', () => {
    expect(findHelm({ VNFM_HELM: helmPath(), PATH: '' })).toBe(helmPath());
    expect(findHelm({ PATH: `/nonexistent:${dirname(helmPath())}` })).toBe(helmPath());
  });

  it('missing: exit 2 naming VNFM_HELM and PATH, before anything runs', () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const err = (() => {
      try {
        createHelmClient({ access, env: { PATH: empty } });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(HelmNotFoundError);
    expect(err).toMatchObject({ exitCode: ExitCode.usage });
    expect((err as Error).message).toContain('VNFM_HELM');
    expect((err as Error).message).toContain('PATH');
  });

  it('a helm that went away since it was found: exit 2 when a call runs it', async () => {
    const gone = createHelmClient({ access, executable: join(dir, 'removed-helm') });
    const err = await gone.list({ namespace: 'default' }).catch((e) => e);
    expect(err).toBeInstanceOf(HelmNotFoundError);
    expect(err.message).toContain('cannot run helm at');
    expect(err.exitCode).toBe(ExitCode.usage);
  });

  it('VNFM_HELM naming something that is not an executable file: exit 2', () => {
    const notExec = join(dir, 'not-helm');
    writeFileSync(notExec, 'text', { mode: 0o644 });
    expect(() => findHelm({ VNFM_HELM: notExec, PATH: dirname(helmPath()) })).toThrow(HelmNotFoundError);
    expect(() => findHelm({ VNFM_HELM: join(dir, 'absent'), PATH: dirname(helmPath()) })).toThrow(/VNFM_HELM=.*absent is not an executable file/);
  });
});

describe('offline chart checks', () => {
  const tool = () => createHelmChartTool({ executable: helmPath() });

  it('reports the version', async () => {
    expect(await tool().version()).toBe(HELM_VERSION);
  });

  it('lints and renders a good chart', async () => {
    expect(await tool().lint(chart)).toContain('1 chart(s) linted, 0 chart(s) failed');
    const rendered = await tool().template(chart, { release: 'r', namespace: 'ns1', set: { 'vdu1.replicaCount': 5 } });
    expect(rendered).toContain('replicas: 5');
  });

  it('a chart that does not render fails lint and template with reason render (exit 2)', async () => {
    const lint = await tool()
      .lint(brokenChart)
      .catch((e) => e);
    expect(lint).toMatchObject({ reason: 'render', exitCode: ExitCode.usage });
    expect(lint.message).toContain('nil pointer');
    const template = await tool()
      .template(brokenChart)
      .catch((e) => e);
    expect(template).toMatchObject({ reason: 'render', exitCode: ExitCode.usage });
  });
});
