/**
 * The Kubernetes API sandbox against the real kubectl 1.32 and against raw
 * HTTPS requests: TLS that verifies, bearer tokens, discovery, namespaces,
 * and the Status objects a real kube-apiserver answers errors with.
 */
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSandboxCerts, renderKubeconfig, startSandbox, writeSandboxConfigs, type Sandbox } from '@vnfm/kube-sandbox';

const KUBECTL = '/usr/bin/kubectl';
const INITIAL = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

let sandbox: Sandbox;
let dir: string;
let kubeconfig: string;
let vimConfig: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vnfm-sandbox-'));
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  kubeconfig = join(dir, 'kube', 'config');
  vimConfig = join(dir, 'vim-config.yaml');
  writeSandboxConfigs(sandbox, { kubeconfigPath: kubeconfig, vimConfigPath: vimConfig });
});

afterAll(async () => {
  await sandbox?.close();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs kubectl with only the given kubeconfig and a throwaway HOME (its discovery cache lands there). */
function kubectl(args: string[], config = kubeconfig): Promise<Run> {
  const home = mkdtempSync(join(tmpdir(), 'vnfm-kubectl-home-'));
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, args, { env: { PATH: process.env['PATH'], HOME: home, KUBECONFIG: config }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function kubeconfigWith(name: string, changes: { token?: string; caPem?: string }): string {
  const path = join(dir, name);
  writeSandboxConfigs({ url: sandbox.url, token: changes.token ?? sandbox.token, caPem: changes.caPem ?? sandbox.caPem }, { kubeconfigPath: path });
  return path;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
  peerCert?: X509Certificate;
}

/** One HTTPS request to the sandbox, verifying its certificate with the sandbox CA. */
function api(method: string, path: string, opts: { token?: string | null; body?: unknown; accept?: string } = {}): Promise<Reply> {
  const token = opts.token === undefined ? sandbox.token : opts.token;
  const url = new URL(path, sandbox.url);
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        ca: sandbox.caPem,
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(opts.accept ? { Accept: opts.accept } : {}),
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
        },
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerX509Certificate?.();
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, peerCert: peer });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const failure = (code: number, reason: string, message: string, details?: object) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  ...(details ? { details } : {}),
  code,
});

describe('kubectl against the sandbox', () => {
  it('reports the server version', async () => {
    const run = await kubectl(['version', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const server = JSON.parse(run.stdout).serverVersion;
    expect(server).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.0-vnfm-sandbox', platform: expect.stringMatching(/^linux\//) });
  });

  it('lists the four namespaces a fresh cluster has', async () => {
    const run = await kubectl(['get', 'namespaces', '-o', 'json']);
    expect(run.code, run.stderr).toBe(0);
    const list = JSON.parse(run.stdout);
    expect(list.items.map((ns: any) => ns.metadata.name)).toEqual(expect.arrayContaining(INITIAL));
    for (const ns of list.items.filter((n: any) => INITIAL.includes(n.metadata.name))) {
      expect(ns.status.phase).toBe('Active');
      expect(ns.metadata.labels['kubernetes.io/metadata.name']).toBe(ns.metadata.name);
    }
  });

  it('creates a namespace, shows it, and refuses a duplicate with AlreadyExists', async () => {
    const create = await kubectl(['create', 'namespace', 'kubectl-made']);
    expect(create.code, create.stderr).toBe(0);
    expect(create.stdout.trim()).toBe('namespace/kubectl-made created');

    const get = await kubectl(['get', 'ns', 'kubectl-made']);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/^NAME\s+STATUS\s+AGE\nkubectl-made\s+Active\s+\d+s\n$/);

    const json = JSON.parse((await kubectl(['get', 'ns', 'kubectl-made', '-o', 'json'])).stdout);
    expect(json).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    expect(json.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(json.metadata).not.toHaveProperty('generateName');

    const again = await kubectl(['create', 'namespace', 'kubectl-made']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('Error from server (AlreadyExists): namespaces "kubectl-made" already exists');
  });

  it('rejects a namespace name that is not a DNS-1123 label', async () => {
    const run = await kubectl(['create', 'namespace', 'Bad_Name']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('The Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"');
  });

  it('lists API resources through aggregated discovery', async () => {
    const run = await kubectl(['api-resources']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
    expect(run.stdout).toMatch(/^leases\s+coordination\.k8s\.io\/v1\s+true\s+Lease$/m);
  });

  it('deletes a namespace and what is in it', async () => {
    expect((await kubectl(['create', 'namespace', 'short-lived'])).code).toBe(0);
    expect((await kubectl(['create', 'configmap', 'settings', '-n', 'short-lived', '--from-literal=a=b'])).code).toBe(0);
    const del = await kubectl(['delete', 'namespace', 'short-lived']);
    expect(del.code, del.stderr).toBe(0);
    expect(del.stdout.trim()).toBe('namespace "short-lived" deleted');
    const get = await kubectl(['get', 'namespace', 'short-lived']);
    expect(get.stderr).toContain('Error from server (NotFound): namespaces "short-lived" not found');
  });

  it('fails with Unauthorized for a wrong token', async () => {
    const config = kubeconfigWith('bad-token', { token: 'not-the-token' });
    const raw = await kubectl(['get', '--raw', '/api/v1/namespaces'], config);
    expect(raw.code).not.toBe(0);
    expect(raw.stderr).toContain('error: You must be logged in to the server (Unauthorized)');
    // Discovery reads the raw 401 without decoding its Status, so kubectl words it differently, as with a real server.
    const get = await kubectl(['get', 'namespaces'], config);
    expect(get.code).not.toBe(0);
    expect(get.stderr).toContain('error: You must be logged in to the server (the server has asked for the client to provide credentials)');
  });

  it('verifies TLS: a kubeconfig trusting another CA cannot connect', async () => {
    const run = await kubectl(['get', 'namespaces'], kubeconfigWith('wrong-ca', { caPem: generateSandboxCerts().caPem }));
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/x509: certificate signed by unknown authority/);
  });
});

describe('TLS and client configs', () => {
  it('serves a certificate for 127.0.0.1 and localhost issued by the CA it hands out', async () => {
    const reply = await api('GET', '/healthz');
    const ca = new X509Certificate(sandbox.caPem);
    expect(ca.ca).toBe(true);
    expect(reply.peerCert!.checkIssued(ca)).toBe(true);
    expect(reply.peerCert!.verify(ca.publicKey)).toBe(true);
    expect(reply.peerCert!.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(reply.peerCert!.checkHost('localhost')).toBe('localhost');
  });

  it('writes a Tacker vim-config and a kubeconfig, readable by their owner only', () => {
    expect(statSync(vimConfig).mode & 0o777).toBe(0o600);
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600);
    const text = readFileSync(vimConfig, 'utf8');
    expect(text).toMatch(/^ssl_ca_cert: \|\n {2}-----BEGIN CERTIFICATE-----$/m);
    expect(yaml.load(text)).toEqual({
      auth_url: sandbox.url,
      bearer_token: sandbox.token,
      ssl_ca_cert: sandbox.caPem,
      project_name: 'default',
      type: 'kubernetes',
    });
    const config = yaml.load(readFileSync(kubeconfig, 'utf8')) as any;
    expect(config['current-context']).toBe('vnfm-sandbox');
    expect(config.clusters[0].cluster).toEqual({ server: sandbox.url, 'certificate-authority-data': Buffer.from(sandbox.caPem).toString('base64') });
    expect(config.users[0].user).toEqual({ token: sandbox.token });
    expect(config.contexts[0].context).toEqual({ cluster: 'vnfm-sandbox', user: 'vnfm-sandbox', namespace: 'default' });
    expect(yaml.load(renderKubeconfig(sandbox, 'edge'))).toMatchObject({ contexts: [{ context: { namespace: 'edge' } }] });
  });
});

describe('raw API answers', () => {
  it('answers 401 Unauthorized with a Status for a missing or wrong token, on every path', async () => {
    for (const [path, token] of [
      ['/api/v1/namespaces', null],
      ['/version', 'wrong'],
      ['/apis', 'wrong'],
    ] as const) {
      const reply = await api('GET', path, { token });
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual(failure(401, 'Unauthorized', 'Unauthorized'));
    }
  });

  it('serves version and health', async () => {
    const version = await api('GET', '/version');
    expect(version.json).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.0-vnfm-sandbox', gitTreeState: 'clean' });
    expect(Object.keys(version.json)).toEqual(['major', 'minor', 'gitVersion', 'gitCommit', 'gitTreeState', 'buildDate', 'goVersion', 'compiler', 'platform']);
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const reply = await api('GET', path);
      expect([reply.status, reply.text]).toEqual([200, 'ok']);
    }
  });

  it('answers 404 NotFound for a missing namespace and for an unknown resource', async () => {
    const missing = await api('GET', '/api/v1/namespaces/nowhere');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual(failure(404, 'NotFound', 'namespaces "nowhere" not found', { name: 'nowhere', kind: 'namespaces' }));

    const unknown = await api('GET', '/api/v1/widgets');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual(failure(404, 'NotFound', 'the server could not find the requested resource', {}));

    const group = await api('GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/holder');
    expect(group.json).toEqual(failure(404, 'NotFound', 'leases.coordination.k8s.io "holder" not found', { name: 'holder', group: 'coordination.k8s.io', kind: 'leases' }));
  });

  it('creates a namespace with 201 and answers 409 AlreadyExists for a second one', async () => {
    const created = await api('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'raw-made' } } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'raw-made' }, status: { phase: 'Active' } });
    expect(created.json.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const dup = await api('POST', '/api/v1/namespaces', { body: { metadata: { name: 'raw-made' } } });
    expect(dup.status).toBe(409);
    expect(dup.json).toEqual(failure(409, 'AlreadyExists', 'namespaces "raw-made" already exists', { name: 'raw-made', kind: 'namespaces' }));
  });

  it('answers 422 Invalid with field causes for a bad name', async () => {
    const reply = await api('POST', '/api/v1/namespaces', { body: { metadata: { name: 'Not_OK' } } });
    expect(reply.status).toBe(422);
    const detail =
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    expect(reply.json).toEqual(
      failure(422, 'Invalid', `Namespace "Not_OK" is invalid: metadata.name: Invalid value: "Not_OK": ${detail}`, {
        name: 'Not_OK',
        kind: 'Namespace',
        causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: "Not_OK": ${detail}`, field: 'metadata.name' }],
      }),
    );
    const missing = await api('POST', '/api/v1/namespaces', { body: { metadata: {} } });
    expect(missing.json.message).toBe('Namespace "" is invalid: metadata.name: Required value: name or generateName is required');
  });

  it('answers 405 MethodNotAllowed for a verb the resource does not serve', async () => {
    // Namespaces, as in a real cluster, have no deletecollection.
    const reply = await api('DELETE', '/api/v1/namespaces');
    expect(reply.status).toBe(405);
    expect(reply.json).toEqual(failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {}));
  });

  it('lists namespaces as a NamespaceList with a resourceVersion, and as a Table', async () => {
    const list = await api('GET', '/api/v1/namespaces');
    expect(list.json).toMatchObject({ kind: 'NamespaceList', apiVersion: 'v1', metadata: { resourceVersion: expect.stringMatching(/^\d+$/) } });
    expect(list.json.items[0]).not.toHaveProperty('kind');

    const table = await api('GET', '/api/v1/namespaces', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' });
    expect(table.json.kind).toBe('Table');
    expect(table.json.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Status', 'Age']);
    expect(table.json.rows.find((r: any) => r.cells[0] === 'default').cells[1]).toBe('Active');
  });

  it('gives every write a higher resourceVersion, a uid and a creationTimestamp', async () => {
    const a = await api('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'rv-a' }, data: { k: 'v' } } });
    const b = await api('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { generateName: 'rv-b-' } } });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(Number(b.json.metadata.resourceVersion)).toBeGreaterThan(Number(a.json.metadata.resourceVersion));
    expect(b.json.metadata.name).toMatch(/^rv-b-[a-z0-9]{5}$/);
    expect(a.json.metadata.uid).not.toBe(b.json.metadata.uid);

    const stale = await api('PUT', '/api/v1/namespaces/default/configmaps/rv-a', { body: { ...a.json, metadata: { ...a.json.metadata, resourceVersion: '1' } } });
    expect(stale.status).toBe(409);
    expect(stale.json.reason).toBe('Conflict');
    const gone = await api('DELETE', '/api/v1/namespaces/default/configmaps/rv-a');
    expect(gone.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'rv-a', kind: 'configmaps', uid: a.json.metadata.uid } });
  });

  it('keeps a namespace Terminating while a finalizer holds it, and refuses new content in it', async () => {
    await api('POST', '/api/v1/namespaces', { body: { metadata: { name: 'held' }, spec: { finalizers: ['kubernetes', 'example.com/hold'] } } });
    const del = await api('DELETE', '/api/v1/namespaces/held');
    expect(del.status).toBe(200);
    expect(del.json.status.phase).toBe('Terminating');
    expect(del.json.metadata.deletionTimestamp).toMatch(/Z$/);

    const refused = await api('POST', '/api/v1/namespaces/held/configmaps', { body: { metadata: { name: 'late' } } });
    expect(refused.status).toBe(403);
    expect(refused.json).toEqual(
      failure(403, 'Forbidden', 'configmaps "late" is forbidden: unable to create new content in namespace held because it is being terminated', {
        name: 'late',
        kind: 'configmaps',
        causes: [{ reason: 'NamespaceTerminating', message: 'namespace held is being terminated', field: 'metadata.namespace' }],
      }),
    );
    const still = await api('GET', '/api/v1/namespaces/held');
    expect(still.json.status.phase).toBe('Terminating');
    expect(still.json.spec.finalizers).toEqual(['example.com/hold']);
  });

  it('serves legacy discovery documents', async () => {
    const versions = await api('GET', '/api');
    expect(versions.json).toEqual({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: new URL(sandbox.url).host }] });

    const core = await api('GET', '/api/v1');
    expect(core.json.kind).toBe('APIResourceList');
    expect(core.json.groupVersion).toBe('v1');
    expect(core.json).not.toHaveProperty('apiVersion');
    expect(core.json.resources.find((r: any) => r.name === 'namespaces')).toMatchObject({
      name: 'namespaces',
      singularName: 'namespace',
      namespaced: false,
      kind: 'Namespace',
      shortNames: ['ns'],
      verbs: expect.arrayContaining(['create', 'delete', 'get', 'list']),
    });

    const groups = await api('GET', '/apis');
    expect(groups.json).toMatchObject({ kind: 'APIGroupList', apiVersion: 'v1' });
    expect(groups.json.groups).toContainEqual({
      name: 'coordination.k8s.io',
      versions: [{ groupVersion: 'coordination.k8s.io/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'coordination.k8s.io/v1', version: 'v1' },
    });

    const leases = await api('GET', '/apis/coordination.k8s.io/v1');
    expect(leases.json).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'coordination.k8s.io/v1' });
    expect(leases.json.resources.map((r: any) => r.name)).toEqual(['leases']);

    const none = await api('GET', '/apis/nothing.example.com/v1');
    expect(none.status).toBe(404);
  });

  it('serves aggregated discovery when asked for it', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const core = await api('GET', '/api', { accept });
    expect(core.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(core.json).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    const v1 = core.json.items[0].versions[0];
    expect(v1).toMatchObject({ version: 'v1', freshness: 'Current' });
    expect(v1.resources.find((r: any) => r.resource === 'namespaces')).toMatchObject({
      responseKind: { group: '', version: 'v1', kind: 'Namespace' },
      scope: 'Cluster',
      singularResource: 'namespace',
      subresources: [{ subresource: 'status', verbs: ['get', 'patch', 'update'] }],
    });

    const named = await api('GET', '/apis', { accept });
    expect(named.json.items.map((g: any) => g.metadata.name)).toContain('coordination.k8s.io');
    const apps = named.json.items.find((g: any) => g.metadata.name === 'apps');
    const deployments = apps.versions[0].resources.find((r: any) => r.resource === 'deployments');
    expect(deployments.subresources).toContainEqual({
      subresource: 'scale',
      responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      verbs: ['get', 'patch', 'update'],
    });
  });
});
