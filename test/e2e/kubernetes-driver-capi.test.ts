/**
 * The Kubernetes driver with Cluster API kinds, against the sandbox whose
 * Cluster API controllers take their time (a new object has no status for
 * readyDelayMs, as on a real management cluster): deploy waits for a
 * MachineDeployment's controller to report and for its Machines, so the
 * VNFCs are all there when it returns; the instance label goes into a
 * template only where the kind's schema declares template metadata.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverContext, DriverEvent, JournalStep, ResourceRef } from '../../src/infra/driver.js';
import { createKubernetesDriver, INSTANCE_LABEL, type KubeAccess, type KubeObject, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { createKubeTransport, type KubeHttpRequest } from '../../src/infra/kubernetes/kube-api.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

const SAMPLES = join(import.meta.dirname, '../../csar-samples');
const load = (file: string): KubeObject[] => (yaml.loadAll(readFileSync(file, 'utf8')) as KubeObject[]).filter(Boolean);
const CRDS = ['crds-cluster-api.yaml', 'crds-kubeadm.yaml', 'crds-openstack.yaml'].flatMap((f) => load(join(SAMPLES, 'capi-mgmt/package/Files/kubernetes', f)));
const WORKERS = load(join(SAMPLES, 'capi-capo-workload/package/Files/kubernetes/workers.yaml'));
const MD: ResourceRef = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', name: 'capo-cluster-1-md-0', namespace: 'default' };

let sandbox: Sandbox;
let driver: KubernetesDriver;
/** Every write the driver sent: method, path and body. */
const writes: Array<{ method: string; path: string; body: any }> = [];

function context(): DriverContext & { events: DriverEvent[] } {
  const steps: JournalStep[] = [];
  const events: DriverEvent[] = [];
  return { events, journal: { record: (s) => void steps.push(s), steps: () => steps }, report: (e) => void events.push(e), signal: AbortSignal.timeout(30_000) };
}

beforeAll(async () => {
  // Long enough that a driver not waiting for the controllers returns before any Machine exists.
  sandbox = await startSandbox({ host: '127.0.0.1', port: 0, controllers: { readyDelayMs: 150, terminationDelayMs: 20 } });
  const access: KubeAccess = { server: sandbox.url, verifyTls: true, caCert: sandbox.caPem, bearerToken: sandbox.token };
  const real = createKubeTransport(access);
  driver = createKubernetesDriver(access, {
    transport: {
      request(req: KubeHttpRequest) {
        if (req.method !== 'GET') writes.push({ method: req.method, path: req.path, body: structuredClone(req.body) });
        return real.request(req);
      },
      stream: (req, onLine) => real.stream(req, onLine),
      close: () => real.close(),
    },
  });
  await driver.deploy(context(), { instanceId: 'capi-crds', namespace: 'default', objects: CRDS, replicas: {} });
}, 60_000);

afterAll(async () => {
  driver?.close();
  await sandbox?.close();
});

const bodyFor = (kind: string, method: string) => writes.find((w) => w.method === method && w.body?.kind === kind)?.body;

describe('Cluster API kinds through the Kubernetes driver', () => {
  it('deploy returns only when the MachineDeployment reported and all its Machines are ready: the VNFCs are complete', async () => {
    const ctx = context();
    await driver.deploy(ctx, { instanceId: 'workers', namespace: 'default', objects: WORKERS, replicas: { 'MachineDeployment/capo-cluster-1-md-0': 2 }, vdus: [{ vduId: 'worker', resource: MD }] });
    const vnfcs = await driver.listVnfcs(context(), [{ vduId: 'worker', resource: MD }]);
    expect(vnfcs).toHaveLength(2);
    expect(vnfcs.map((v) => v.metadata?.phase)).toEqual(['Running', 'Running']);
    const said = ctx.events.filter((e) => e.resource?.kind === 'MachineDeployment').map((e) => e.message);
    expect(said[1]).toBe('waiting for its controller to report a status');
    expect(said).toContain('2/2 machines ready');
  });

  it("labels the MachineDeployment's machine template (its schema declares the field) and not the OpenStackMachineTemplate's (it has none)", () => {
    expect(bodyFor('MachineDeployment', 'POST').spec.template.metadata.labels[INSTANCE_LABEL]).toBe('workers');
    expect(bodyFor('KubeadmConfigTemplate', 'POST').spec.template.metadata.labels[INSTANCE_LABEL]).toBe('workers');
    const omt = bodyFor('OpenStackMachineTemplate', 'POST');
    expect(omt.metadata.labels[INSTANCE_LABEL]).toBe('workers');
    expect(omt.spec.template).toEqual({ spec: expect.any(Object) });
  });

  it('a change of package applies the OpenStackMachineTemplate without a field its schema lacks', async () => {
    const v2 = load(join(SAMPLES, 'capi-capo-workload/package-v2/Files/new_kubernetes/workers.yaml'));
    await driver.changePackage(context(), { instanceId: 'workers', namespace: 'default', objects: v2, replicas: { 'MachineDeployment/capo-cluster-1-md-0': 2 }, current: WORKERS.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: 'default' })), vdus: [{ vduId: 'worker', resource: MD }] });
    const applied = writes.filter((w) => w.method === 'PATCH' && w.body?.kind === 'OpenStackMachineTemplate');
    expect(applied.length).toBeGreaterThan(0);
    for (const w of applied) expect(w.body.spec.template.metadata).toBeUndefined();
    expect(bodyFor('MachineDeployment', 'PATCH').spec.template.metadata.labels[INSTANCE_LABEL]).toBe('workers');
    const vnfcs = await driver.listVnfcs(context(), [{ vduId: 'worker', resource: MD }]);
    expect(vnfcs.map((v) => v.metadata?.version)).toEqual(['v1.32.2', 'v1.32.2']);
  });
});
