/**
 * The Kubernetes driver with Cluster API kinds, on a management cluster
 * whose Cluster API controllers take their time (a new object has no status
 * for a while, as on a real one): the sandbox, or a real kube-apiserver
 * with the stand-in controllers. Deploy waits for a
 * MachineDeployment's controller to report and for its Machines, so the
 * VNFCs are all there when it returns; the instance label goes into a
 * template only where the kind's schema declares template metadata (a real
 * server answers a server-side apply of an undeclared field with a 500).
 * Everything is removed at the end, CRDs included.
 */
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverContext, DriverEvent, JournalStep, ResourceRef } from '../../src/infra/driver.js';
import { createKubernetesDriver, INSTANCE_LABEL, type KubeAccess, type KubeObject, type KubernetesDriver } from '../../src/infra/kubernetes/index.js';
import { createKubeTransport, type KubeHttpRequest } from '../../src/infra/kubernetes/kube-api.js';
import type { KubeEndpoint } from '../support/kube-http.js';

const SAMPLES = join(import.meta.dirname, '../../csar-samples');
const load = (file: string): KubeObject[] => (yaml.loadAll(readFileSync(file, 'utf8')) as KubeObject[]).filter(Boolean);
const CRDS = ['crds-cluster-api.yaml', 'crds-kubeadm.yaml', 'crds-openstack.yaml'].flatMap((f) => load(join(SAMPLES, 'capi-mgmt/package/Files/kubernetes', f)));
const WORKERS = load(join(SAMPLES, 'capi-capo-workload/package/Files/kubernetes/workers.yaml'));
const MD: ResourceRef = { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'MachineDeployment', name: 'capo-cluster-1-md-0', namespace: 'default' };

/** A management cluster the suite runs on. */
export interface DriverCapiTarget {
  endpoint: KubeEndpoint;
  stop(): Promise<void>;
}

let target: DriverCapiTarget | undefined;
let driver: KubernetesDriver;
/** Every write the driver sent: method, path and body. */
const writes: Array<{ method: string; path: string; body: any }> = [];
const CRD_REFS: ResourceRef[] = CRDS.map((c) => ({ apiVersion: c.apiVersion, kind: c.kind, name: c.metadata.name }));

function context(): DriverContext & { events: DriverEvent[] } {
  const steps: JournalStep[] = [];
  const events: DriverEvent[] = [];
  const signal = AbortSignal.timeout(60_000);
  // One watch per CRD listens on it at once, as on the signal the CLI gives the driver.
  setMaxListeners(0, signal);
  return { events, journal: { record: (s) => void steps.push(s), steps: () => steps }, report: (e) => void events.push(e), signal };
}

/** Registers the suite's hooks and tests; `start` makes the target in beforeAll. */
export function describeDriverCapi(start: () => Promise<DriverCapiTarget>): void {
  beforeAll(async () => {
    target = await start();
    const access: KubeAccess = { server: target.endpoint.server, verifyTls: true, caCert: target.endpoint.caPem, bearerToken: target.endpoint.token };
    const wire = createKubeTransport(access);
    driver = createKubernetesDriver(access, {
      transport: {
        request(req: KubeHttpRequest) {
          if (req.method !== 'GET') writes.push({ method: req.method, path: req.path, body: structuredClone(req.body) });
          return wire.request(req);
        },
        stream: (req, onLine) => wire.stream(req, onLine),
        close: () => wire.close(),
      },
    });
    await driver.deploy(context(), { instanceId: 'capi-crds', namespace: 'default', objects: CRDS, replicas: {} });
  }, 120_000);

  afterAll(async () => {
    driver?.close();
    await target?.stop();
  });

  const bodyFor = (kind: string, method: string) => writes.find((w) => w.method === method && w.body?.kind === kind)?.body;

  describe('Cluster API kinds through the Kubernetes driver', () => {
    it('deploy returns only when the MachineDeployment reported and all its Machines are ready: the VNFCs are complete', async () => {
      const ctx = context();
      await driver.deploy(ctx, {
        instanceId: 'workers',
        namespace: 'default',
        objects: WORKERS,
        replicas: { 'MachineDeployment/capo-cluster-1-md-0': 2 },
        vdus: [{ vduId: 'worker', resource: MD }],
      });
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
      await driver.changePackage(context(), {
        instanceId: 'workers',
        namespace: 'default',
        objects: v2,
        replicas: { 'MachineDeployment/capo-cluster-1-md-0': 2 },
        current: WORKERS.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: 'default' })),
        vdus: [{ vduId: 'worker', resource: MD }],
      });
      const applied = writes.filter((w) => w.method === 'PATCH' && w.body?.kind === 'OpenStackMachineTemplate');
      expect(applied.length).toBeGreaterThan(0);
      for (const w of applied) expect(w.body.spec.template.metadata).toBeUndefined();
      expect(bodyFor('MachineDeployment', 'PATCH').spec.template.metadata.labels[INSTANCE_LABEL]).toBe('workers');
      const vnfcs = await driver.listVnfcs(context(), [{ vduId: 'worker', resource: MD }]);
      expect(vnfcs.map((v) => v.metadata?.version)).toEqual(['v1.32.2', 'v1.32.2']);
    });

    it('terminate deletes the Cluster first and waits until it is gone: what it owns goes with it, the rest after', async () => {
      const ns = 'capi-whole';
      const files = ['cloud-config.yaml', 'cluster.yaml', 'control-plane.yaml', 'workers.yaml'];
      const objects: KubeObject[] = [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
        ...files.flatMap((f) => load(join(SAMPLES, 'capi-capo-workload/package/Files/kubernetes', f))),
      ];
      await driver.deploy(context(), {
        instanceId: 'whole',
        namespace: ns,
        objects,
        replicas: { 'MachineDeployment/capo-cluster-1-md-0': 1 },
        vdus: [{ vduId: 'worker', resource: { ...MD, namespace: ns } }],
      });
      const from = writes.length;
      const refs = objects.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.kind === 'Namespace' ? {} : { namespace: ns }) }));
      await driver.remove(context(), { instanceId: 'whole', resources: refs });
      const deletes = writes
        .slice(from)
        .filter((w) => w.method === 'DELETE')
        .map((w) => w.path.split('?')[0]!.split('/').slice(-2).join('/'));
      expect(deletes[0]).toBe('clusters/capo-cluster-1');
      // What the Cluster owns went with it, as Cluster API takes it down: none of it is deleted on its own.
      for (const owned of ['kubeadmcontrolplanes/', 'openstackclusters/', 'machinedeployments/']) expect(deletes.filter((d) => d.startsWith(owned))).toEqual([]);
      expect(deletes.slice(1).sort()).toEqual(
        [
          'kubeadmconfigtemplates/capo-cluster-1-md-0',
          'openstackmachinetemplates/capo-cluster-1-control-plane',
          'openstackmachinetemplates/capo-cluster-1-md-0',
          'secrets/capo-cluster-1-cloud-config',
          `namespaces/${ns}`,
        ].sort(),
      );
    }, 120_000);

    it('removes the workers, then the CRDs', async () => {
      const v2 = load(join(SAMPLES, 'capi-capo-workload/package-v2/Files/new_kubernetes/workers.yaml'));
      await driver.remove(context(), {
        instanceId: 'workers',
        resources: v2.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: 'default' })),
      });
      expect(await driver.listVnfcs(context(), [{ vduId: 'worker', resource: MD }])).toEqual([]);
      await driver.remove(context(), { instanceId: 'capi-crds', resources: CRD_REFS });
    }, 60_000);
  });
}
