/**
 * The capi-credentials management driver through the real program, on any
 * management cluster a target provides (the sandbox and its Cluster API
 * emulation, or a real kube-apiserver with the stand-in Cluster API
 * controllers): a CNF whose Cluster becomes Provisioned hands the workload
 * cluster's credentials to a test HTTPS receiver (its own CA, a bearer
 * token) and registers it as a VIM that reaches the workload cluster's own
 * endpoint; terminate removes that VIM; a refusing
 * receiver leaves FAILED_TEMP and op-retry sends again; a kubeconfig Secret
 * that never appears ends in a timeout (124). The package is the basic CNF
 * with a Cluster CRD, a Cluster and the hooks added.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, vnfm, okWith } from '../support/cli.js';
import type { KubeEndpoint } from '../support/kube-http.js';
import { vimConfig } from './capi-suite.js';

const BASIC = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const BEARER = 'receiver-token-e2e-5f2a';

/** A management cluster the suite runs on. */
export interface CredentialsTarget {
  endpoint: KubeEndpoint;
  stop(): Promise<void>;
}

let target: CredentialsTarget | undefined;
let home: string;
let work: string;
let receiver: TestReceiver;

interface Delivery {
  authorization?: string;
  body: Record<string, string>;
}

/** The operator's credentials receiver: HTTPS on 127.0.0.1 with a CA made here. */
class TestReceiver {
  deliveries: Delivery[] = [];
  caCert = '';
  private key = '';
  private cert = '';
  private server?: https.Server;
  port = 0;

  constructor(dir: string) {
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=receiver CA');
    ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
    this.caCert = readFileSync(join(dir, 'ca.crt'), 'utf8');
    this.key = readFileSync(join(dir, 'server.key'), 'utf8');
    this.cert = readFileSync(join(dir, 'server.crt'), 'utf8');
  }

  async start(port = 0): Promise<void> {
    this.server = https.createServer({ key: this.key, cert: this.cert }, (req, res) => {
      let text = '';
      req.on('data', (d: Buffer) => (text += d.toString()));
      req.on('end', () => {
        this.deliveries.push({ ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}), body: JSON.parse(text) });
        res.statusCode = 204;
        res.end();
      });
    });
    await new Promise<void>((ok) => this.server!.listen(port, '127.0.0.1', ok));
    this.port = (this.server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    return new Promise((ok) => (s ? s.close(() => ok()) : ok()));
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}/credentials`;
  }
}

const CLUSTER_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'clusters.cluster.x-k8s.io' },
  spec: {
    group: 'cluster.x-k8s.io',
    scope: 'Namespaced',
    names: { kind: 'Cluster', plural: 'clusters', singular: 'cluster', listKind: 'ClusterList' },
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        },
      },
    ],
  },
};

const cluster = (name: string, spec: object = {}) => ({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name }, spec });

/** The basic CNF plus a Cluster CRD, Clusters, and capi-credentials on its hooks. */
function buildPackage(dir: string): string {
  const pkg = join(dir, 'capi-cnf');
  cpSync(join(BASIC, 'package'), pkg, { recursive: true });
  const files: Record<string, string> = {
    'Files/kubernetes/cluster-crd.yaml': yaml.dump(CLUSTER_CRD),
    'Files/kubernetes/cluster.yaml': yaml.dump(cluster('w1')),
    // Its infrastructure never appears: the Cluster stays Pending and its Secret never comes.
    'Files/kubernetes/cluster-pending.yaml': yaml.dump(
      cluster('w2', { infrastructureRef: { apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1', kind: 'NeverCluster', name: 'w2' } }),
    ),
    'Scripts/capi_credentials.py': '# vnfm runs its built-in capi-credentials driver for this artifact.\n',
  };
  for (const [path, text] of Object.entries(files)) {
    const full = join(pkg, path);
    execFileSync('mkdir', ['-p', resolve(full, '..')]);
    writeFileSync(full, text);
    const hash = createHash('sha256').update(text).digest('hex');
    appendFileSync(join(pkg, 'TOSCA-Metadata/TOSCA.meta'), `\nName: ${path}\nContent-Type: text/plain\nAlgorithm: SHA-256\nHash: ${hash}\n`);
  }
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
      '          instantiate_end: {implementation: capi-credentials}',
      '          heal_end: {implementation: capi-credentials}',
      '          terminate_start: {implementation: capi-credentials}',
      '          terminate_end: {implementation: capi-credentials}',
      '      artifacts:',
      '        capi-credentials:',
      '          description: Hands the workload cluster credentials over',
      '          type: tosca.artifacts.Implementation.Python',
      '          file: ../Scripts/capi_credentials.py',
      '',
    ].join('\n'),
  );
  expect(text).toContain('capi-credentials');
  writeFileSync(df, text);
  return pkg;
}

function request(defFiles: string[], extra: Record<string, unknown>): string {
  const base = JSON.parse(readFileSync(join(BASIC, 'requests/instantiate.json'), 'utf8')) as { additionalParams: Record<string, unknown> };
  base.additionalParams['lcm-kubernetes-def-files'] = [...defFiles, ...(base.additionalParams['lcm-kubernetes-def-files'] as string[])];
  Object.assign(base.additionalParams, extra);
  const file = join(work, `req-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(base));
  return file;
}

const run = (args: string[]) => vnfm(args, { home });
const ok = okWith((args) => run(args));
const json = <T = any>(s: string) => JSON.parse(s) as T;
const create = async (name: string) => json<{ id: string }>((await ok(['vnf-create', '--package', 'capi-cnf', '--name', name, '-o', 'json'])).stdout).id;

/** Every byte vnfm keeps in VNFM_HOME, to check no secret is stored in clear. */
function homeBytes(): string {
  return readdirSync(home, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(join(e.parentPath, e.name)).toString('latin1'))
    .join('\n');
}

/** Registers the suite's hooks and tests; `start` makes the target in beforeAll. */
export function describeCapiCredentials(start: () => Promise<CredentialsTarget>): void {
  beforeAll(async () => {
    target = await start();
    work = mkdtempSync(join(tmpdir(), 'vnfm-capi-cred-'));
    vimConfig(target.endpoint, join(work, 'vim-config.yaml'));
    home = newHome();
    await ok(['vim-register', '--config-file', join(work, 'vim-config.yaml'), 'mgmt']);
    await ok(['vnfpkg-onboard', buildPackage(work), '--name', 'capi-cnf']);
    receiver = new TestReceiver(mkdtempSync(join(tmpdir(), 'vnfm-capi-ca-')));
    await receiver.start();
  }, 120_000);

  afterAll(async () => {
    await receiver?.stop();
    await target?.stop();
  });

  describe('capi-credentials', () => {
    let vnf: string;
    let kubeconfig: string;

    it('instantiate: the credentials reach the receiver and the workload cluster becomes a VIM', async () => {
      vnf = await create('workload');
      const req = request(['Files/kubernetes/cluster-crd.yaml', 'Files/kubernetes/cluster.yaml'], {
        vnfm_credentials_receiver: { url: receiver.url, caCert: receiver.caCert, bearerToken: BEARER },
        vnfm_register_vim: { name: 'workload-1' },
      });
      const r = await ok(['vnf-instantiate', vnf, '--request-file', req, '--timeout', '60s']);
      expect(r.stderr).toContain('Secret default/w1-kubeconfig');
      expect(receiver.deliveries).toHaveLength(1);
      const got = receiver.deliveries[0]!;
      expect(got.authorization).toBe(`Bearer ${BEARER}`);
      expect(got.body).toMatchObject({ vnfInstanceId: vnf, clusterName: 'w1', namespace: 'default' });
      expect(got.body['server']).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(got.body['server']).not.toBe(target!.endpoint.server);
      expect(got.body['caCert']).toContain('BEGIN CERTIFICATE');
      // The token delivered is the workload cluster's own: the one its kubeconfig holds.
      expect(got.body['token']).toMatch(/^\S+$/);
      expect(got.body['kubeconfig']).toContain(got.body['token']);
      kubeconfig = got.body['kubeconfig']!;

      // vnf-kubeconfig prints what the Secret holds.
      expect((await ok(['vnf-kubeconfig', vnf])).stdout.trim()).toBe(kubeconfig.trim());

      const vim = json((await ok(['vim-show', 'workload-1', '-o', 'json'])).stdout);
      expect(vim).toMatchObject({ type: 'kubernetes', status: 'REACHABLE' });
      expect(JSON.stringify(vim)).toContain(got.body['server']!);

      // Checked again against the second API server: a vim-config from what the receiver got.
      const cfg = join(work, 'workload-vim.yaml');
      writeFileSync(
        cfg,
        yaml.dump({ auth_url: got.body['server'], type: 'kubernetes', bearer_token: got.body['token'], ssl_ca_cert: got.body['caCert'], project_name: 'default' }),
      );
      await ok(['vim-update', 'workload-1', '--config-file', cfg]);

      // Neither the bearer token nor the workload token is kept in clear.
      const bytes = homeBytes();
      expect(bytes).not.toContain(BEARER);
      expect(bytes).not.toContain(got.body['token']!);
    }, 90_000);

    it('terminate removes the VIM it registered', async () => {
      await ok(['vnf-terminate', vnf, '--yes', '--timeout', '60s']);
      const r = await run(['vim-show', 'workload-1']);
      expect(r.code).toBe(3);
    }, 90_000);

    it('a receiver that refuses leaves FAILED_TEMP; op-retry sends the credentials again', async () => {
      await receiver.stop();
      const before = receiver.deliveries.length;
      const id = await create('refused');
      const req = request(['Files/kubernetes/cluster-crd.yaml', 'Files/kubernetes/cluster.yaml'], {
        vnfm_credentials_receiver: { url: receiver.url, caCert: receiver.caCert, bearerToken: BEARER },
      });
      const r = await run(['vnf-instantiate', id, '--request-file', req, '--timeout', '60s']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/refused the connection \(ECONNREFUSED\) \(5 attempts\)/);
      expect(r.stderr).not.toContain(BEARER);
      const op = json<any[]>((await ok(['op-list', '--vnf', id, '-o', 'json'])).stdout)[0];
      expect(op.operationState).toBe('FAILED_TEMP');
      expect(JSON.stringify(op)).not.toContain(BEARER);

      await receiver.start(receiver.port);
      await ok(['op-retry', op.id, '--timeout', '60s']);
      expect(receiver.deliveries.length).toBe(before + 1);
      expect(receiver.deliveries.at(-1)!.authorization).toBe(`Bearer ${BEARER}`);
      await ok(['vnf-terminate', id, '--yes', '--timeout', '60s']);
    }, 120_000);

    it('a kubeconfig Secret that never appears ends FAILED_TEMP at --timeout (exit 124)', async () => {
      const id = await create('pending');
      const req = request(['Files/kubernetes/cluster-crd.yaml', 'Files/kubernetes/cluster-pending.yaml'], {
        vnfm_readiness: { 'cluster.x-k8s.io/Cluster': { present: true } },
      });
      const r = await run(['vnf-instantiate', id, '--request-file', req, '--timeout', '10s']);
      expect(r.code).toBe(124);
      expect(r.stderr).toContain('waiting for Secret default/w2-kubeconfig');
      const op = json<any[]>((await ok(['op-list', '--vnf', id, '-o', 'json'])).stdout)[0];
      expect(op.operationState).toBe('FAILED_TEMP');
      await ok(['op-rollback', op.id, '--timeout', '60s']);
    }, 90_000);

    it('refuses a package script hook without the operator consent, before anything changes', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'vnfm-capi-script-'));
      const pkg = buildPackage(dir);
      // The same package with the artifact renamed: now a package script.
      const df = join(
        pkg,
        'Definitions',
        readdirSync(join(pkg, 'Definitions')).find((f) => f.includes('_df_'))!,
      );
      writeFileSync(df, readFileSync(df, 'utf8').replace('../Scripts/capi_credentials.py', '../Scripts/post_install.py'));
      writeFileSync(join(pkg, 'Scripts/post_install.py'), '# a script\n');
      const scriptHome = newHome();
      const s = (args: string[]) => vnfm(args, { home: scriptHome });
      await s(['vim-register', '--config-file', join(work, 'vim-config.yaml'), 'mgmt']);
      expect((await s(['vnfpkg-onboard', pkg, '--name', 'script-cnf'])).code).toBe(0);
      const id = json((await s(['vnf-create', '--package', 'script-cnf', '-o', 'json'])).stdout).id;
      const r = await s(['vnf-instantiate', id, '--request-file', request([], {})]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('package scripts were not allowed: hook instantiate_end runs Scripts/post_install.py (artifact capi-credentials)');
      expect(json((await s(['op-list', '-o', 'json'])).stdout)).toEqual([]);
    }, 60_000);
  });
}
