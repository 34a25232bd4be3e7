/**
 * The Kubernetes driver's preflight (check) against the sandbox: the
 * package problems it refuses as bad input (exit 2) — a kind nobody
 * defines, a version the package's CRD does not serve, a VDU without
 * /scale — and a cluster that does not answer as a VIM problem (exit 6),
 * all without writing anything.
 */
import { request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, UsageError, ValidationError, VimCheckError } from '../../src/errors.js';
import { createKubernetesDriver, type CheckInput, type KubeAccess, type KubeObject, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { startSandbox, type Sandbox } from '@vnfm/kube-sandbox';

let sandbox: Sandbox;
let access: KubeAccess;
let driver: KubernetesDriver;

beforeAll(async () => {
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
  access = { server: sandbox.url, verifyTls: true, caCert: sandbox.caPem, bearerToken: sandbox.token };
  driver = createKubernetesDriver(access, { retry: { backoffMs: 1, maxBackoffMs: 2 } });
});

afterAll(async () => {
  driver?.close();
  await sandbox?.close();
});

const widgetCrd = (scale: boolean): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      { name: 'v1beta1', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        ...(scale ? { subresources: { scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } } } : {}),
      },
    ],
  },
});

const widget = (apiVersion: string): KubeObject => ({ apiVersion, kind: 'Widget', metadata: { name: 'w1' }, spec: { replicas: 1 } });

function input(objects: KubeObject[], extra: Partial<CheckInput> = {}): CheckInput {
  return {
    instanceId: 'inst-pre',
    namespace: 'default',
    objects,
    replicas: {},
    sources: { 'apiextensions.k8s.io/CustomResourceDefinition/widgets.example.com': 'Files/crd.yaml', 'example.com/Widget/w1': 'Files/widget.yaml' },
    ...extra,
  };
}

/** The CRDs the sandbox holds, asked as a plain client. */
function crdNames(): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const r = httpsRequest(
      new URL('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', sandbox.url),
      { ca: sandbox.caPem, headers: { authorization: `Bearer ${sandbox.token}`, accept: 'application/json' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve((JSON.parse(body) as { items: Array<{ metadata: { name: string } }> }).items.map((c) => c.metadata.name)));
      },
    );
    r.on('error', reject);
    r.end();
  });
}

describe('Kubernetes driver preflight', () => {
  it('accepts a package whose CRD defines its custom resources, in a served version, scalable VDU', async () => {
    await driver.check(
      input([widgetCrd(true), widget('example.com/v1')], {
        vdus: [{ vduId: 'VDU1', resource: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w1', namespace: 'default' } }],
      }),
    );
  });

  it('refuses, as bad input naming object and file, a kind nobody defines', async () => {
    const err = await driver.check(input([widget('example.com/v1')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(ExitCode.usage);
    expect((err as Error).message).toMatch(/no CustomResourceDefinition provides Widget \(example.com\/v1\), needed by w1 in Files\/widget.yaml/);
  });

  it('refuses an object in a version its package CRD does not serve, naming the file', async () => {
    const err = await driver.check(input([widgetCrd(true), widget('example.com/v1beta1')])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(
      /^Files\/widget.yaml: Widget w1 uses example.com\/v1beta1, which the package's CustomResourceDefinition widgets.example.com does not serve \(it serves v1\)/,
    );
  });

  it('refuses a VDU whose kind has no /scale', async () => {
    const vdus = [{ vduId: 'VDU1', resource: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w1', namespace: 'default' } }];
    const err = await driver.check(input([widgetCrd(false), widget('example.com/v1')], { vdus })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/Files\/widget.yaml: VDU VDU1 maps to Widget w1, whose kind has no \/scale subresource/);
  });

  it('calls a cluster that does not answer a VIM problem (exit 6)', async () => {
    // A port that was free a moment ago: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const gone = createKubernetesDriver({ ...access, server: `https://127.0.0.1:${port}` }, { retry: { retries: 1, backoffMs: 1, maxBackoffMs: 1 } });
    try {
      const err = await gone.check(input([widget('example.com/v1')])).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VimCheckError);
      expect((err as VimCheckError).exitCode).toBe(ExitCode.vimCheck);
      expect((err as Error).message).toMatch(new RegExp(`cannot check the package against the cluster at https://127.0.0.1:${port}: .*ECONNREFUSED`));
    } finally {
      gone.close();
    }
  });

  it('wrote nothing', async () => {
    expect(await crdNames()).not.toContain('widgets.example.com');
  });
});
