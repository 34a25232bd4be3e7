/**
 * The stand-in kubelet as the real API server sees a kubelet: the core/v1
 * Events it posts for a Pod (the scheduler's Scheduled, then Pulling or
 * Pulled, Created, Started, with source.component kubelet, the Pod's uid
 * and the container's fieldPath); an image it cannot pull (ErrImagePull,
 * then ImagePullBackOff, and their events); a Pod held unready (Running,
 * not Ready, Warning Unhealthy); and containers' logs read through
 * `pods/NAME/log`, which the real kube-apiserver proxies over verified TLS
 * to the kubelet of the Pod's Node: container selection, tailLines,
 * timestamps, sinceSeconds, limitBytes, previous, follow.
 */
import { randomBytes } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kubeJson, kubeRequest, until as untilFound, type KubeEndpoint } from '../support/kube-http.js';
import type {} from '../support/real-apiserver-setup.js';
import { holdPods, printInPods } from '../support/stand-in-kubelet.js';

const real = inject('realCluster');
if (!real) throw new Error('test/real runs only in the real-apiserver project, whose global setup starts the control plane');
const endpoint: KubeEndpoint = real;
const ns = `kubelet-${randomBytes(3).toString('hex')}`;

const api = (method: string, path: string, body?: unknown, contentType?: string): Promise<any> => kubeJson(endpoint, method, path, body, contentType);
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => untilFound(what, probe, timeoutMs, 100);

/** The Pod's events as `kubectl describe` reads them (core/v1, by the Pod's uid), oldest first. */
async function eventsOf(pod: any): Promise<any[]> {
  const list = await api('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.uid=${pod.metadata.uid}`)}`);
  return list.items;
}

async function createPod(name: string, spec: any, labels: Record<string, string> = {}): Promise<any> {
  return api('POST', `/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec });
}

const podNamed = (name: string) => api('GET', `/api/v1/namespaces/${ns}/pods/${name}`);
const log = (pod: string, query = '') => kubeRequest(endpoint, 'GET', `/api/v1/namespaces/${ns}/pods/${pod}/log${query}`);

beforeAll(async () => {
  await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await until('default ServiceAccount', async () => ((await kubeRequest(endpoint, 'GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200 ? true : undefined));
});

afterAll(async () => {
  await kubeRequest(endpoint, 'DELETE', `/api/v1/namespaces/${ns}`);
});

describe('the stand-in kubelet through the real API server', () => {
  it('posts the events a kubelet posts for a Pod it starts, about the Pod by uid and each container by fieldPath', async () => {
    const created = await createPod('two', {
      containers: [
        { name: 'app', image: 'registry.example/app:1.0' },
        { name: 'side', image: 'registry.example/side:1.0', imagePullPolicy: 'Always' },
      ],
    });
    await until('Pod two Running', async () => ((await podNamed('two')).status?.phase === 'Running' ? true : undefined));
    const events = await until('Pod two Started events', async () => {
      const e = await eventsOf(created);
      return e.filter((x) => x.reason === 'Started').length === 2 ? e : undefined;
    });
    const node = (await podNamed('two')).spec.nodeName;
    const scheduled = events.find((e) => e.reason === 'Scheduled');
    expect(scheduled).toMatchObject({ type: 'Normal', reportingComponent: 'default-scheduler', message: `Successfully assigned ${ns}/two to ${node}` });
    const kubelet = events.filter((e) => e.reason !== 'Scheduled');
    for (const e of kubelet) {
      expect(e).toMatchObject({
        type: 'Normal',
        source: { component: 'kubelet', host: node },
        reportingComponent: 'kubelet',
        reportingInstance: node,
        count: 1,
        involvedObject: { apiVersion: 'v1', kind: 'Pod', name: 'two', namespace: ns, uid: created.metadata.uid },
      });
      expect(e.involvedObject.fieldPath).toMatch(/^spec\.containers\{(app|side)\}$/);
    }
    const of = (c: string) => kubelet.filter((e) => e.involvedObject.fieldPath === `spec.containers{${c}}`).map((e) => `${e.reason}: ${e.message}`);
    expect(of('app')).toEqual([
      'Pulling: Pulling image "registry.example/app:1.0"',
      expect.stringMatching(/^Pulled: Successfully pulled image "registry\.example\/app:1\.0" in \d+ms/),
      'Created: Created container app',
      'Started: Started container app',
    ]);
    expect(of('side').map((t) => t.split(':')[0])).toEqual(['Pulling', 'Pulled', 'Created', 'Started']);
  });

  it('cannot pull an image from a registry that does not resolve: ErrImagePull, then ImagePullBackOff, with the Warnings', async () => {
    const created = await createPod('nopull', { containers: [{ name: 'app', image: 'registry.invalid/team/app:2.1' }] });
    const pod = await until('container waiting in ImagePullBackOff', async () => {
      const p = await podNamed('nopull');
      return p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'ImagePullBackOff' ? p : undefined;
    });
    expect(pod.status.phase).toBe('Pending');
    expect(pod.status.containerStatuses[0]).toMatchObject({
      ready: false,
      started: false,
      state: { waiting: { message: 'Back-off pulling image "registry.invalid/team/app:2.1"' } },
    });
    expect(pod.status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }));
    const events = await until('BackOff events', async () => {
      const e = await eventsOf(created);
      return e.some((x) => x.message === 'Error: ImagePullBackOff') ? e : undefined;
    });
    expect(events.filter((e) => e.reason !== 'Scheduled').map((e) => [e.type, e.reason, e.message.replace(/:.*/s, '')])).toEqual([
      ['Normal', 'Pulling', 'Pulling image "registry.invalid/team/app'],
      ['Warning', 'Failed', 'Failed to pull image "registry.invalid/team/app'],
      ['Warning', 'Failed', 'Error'],
      ['Normal', 'BackOff', 'Back-off pulling image "registry.invalid/team/app'],
      ['Warning', 'Failed', 'Error'],
    ]);
    expect(events.find((e) => e.type === 'Warning').message).toMatch(/lookup registry\.invalid: no such host$/);
    const refused = await log('nopull');
    expect(refused.status).toBe(400);
    expect(refused.json.message).toBe('container "app" in pod "nopull" is waiting to start: trying and failing to pull image');
  });

  it('holds a Pod unready: Running, not Ready, a Warning Unhealthy for its readiness probe; Ready once lifted', async () => {
    const lift = await holdPods(endpoint, { kind: 'Pod', name: 'probed', namespace: ns, as: 'unready' });
    try {
      const created = await createPod('probed', {
        containers: [
          { name: 'web', image: 'registry.example/web:1', ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { path: '/healthz', port: 'http' } } },
        ],
      });
      const events = await until('Unhealthy event', async () => {
        const e = await eventsOf(created);
        return e.some((x) => x.reason === 'Unhealthy') ? e : undefined;
      });
      const pod = await podNamed('probed');
      expect(pod.status.phase).toBe('Running');
      expect(pod.status.containerStatuses[0]).toMatchObject({ ready: false, started: true });
      expect(events.find((e) => e.reason === 'Unhealthy')).toMatchObject({
        type: 'Warning',
        involvedObject: { fieldPath: 'spec.containers{web}', uid: created.metadata.uid },
        message: `Readiness probe failed: Get "http://${pod.status.podIP}:8080/healthz": dial tcp ${pod.status.podIP}:8080: connect: connection refused`,
      });
    } finally {
      await lift();
    }
    await until('Ready once lifted', async () => ((await podNamed('probed')).status.conditions.find((c: any) => c.type === 'Ready')?.status === 'True' ? true : undefined));
  });

  it("serves containers' logs through the API server as a kubelet answers its proxy", async () => {
    const undo = await printInPods(endpoint, { kind: 'Pod', name: 'logged', namespace: ns, container: 'app', output: 'first line\nsecond \x1b[31mred\x1b[0m line\n' });
    try {
      await createPod('logged', {
        containers: [
          { name: 'app', image: 'registry.example/app:1.0' },
          { name: 'side', image: 'registry.example/side:1.0' },
        ],
      });
      await until('Pod logged Running', async () => ((await podNamed('logged')).status?.phase === 'Running' ? true : undefined));
      // The API server refuses before asking the kubelet: a pod of several containers needs one named.
      const which = await log('logged');
      expect(which.status).toBe(400);
      expect(which.json.message).toBe('a container name must be specified for pod logged, choose one of: [app side]');
      const unknown = await log('logged', '?container=nope');
      expect(unknown.status).toBe(400);
      expect(unknown.json.message).toBe('container nope is not valid for pod logged');

      const all = await log('logged', '?container=app');
      expect(all.status).toBe(200);
      const node = (await podNamed('logged')).spec.nodeName;
      expect(all.text).toBe(
        `app: started on ${node} (the stand-in kubelet runs no container: these lines stand in for its output)\napp: ready\nfirst line\nsecond \x1b[31mred\x1b[0m line\n`,
      );
      expect((await log('logged', '?container=side')).text).not.toContain('first line');
      expect((await log('logged', '?container=app&tailLines=1')).text).toBe('second \x1b[31mred\x1b[0m line\n');
      expect((await log('logged', '?container=app&tailLines=0')).text).toBe('');
      expect((await log('logged', '?container=app&limitBytes=5')).text).toBe('app: ');
      const stamped = (await log('logged', '?container=app&timestamps=true')).text.split('\n').filter(Boolean);
      for (const l of stamped) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z \S/);
      expect((await log('logged', '?container=app&sinceSeconds=3600')).text.split('\n').filter(Boolean)).toHaveLength(4);
      const previous = await log('logged', '?container=app&previous=true');
      expect(previous.status).toBe(400);
      expect(previous.json.message).toBe('previous terminated container "app" in pod "logged" not found');
    } finally {
      await undo();
    }
  });

  it('follows a log, a line at a time, until the client goes', async () => {
    await createPod('followed', { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] });
    await until('Pod followed Running', async () => ((await podNamed('followed')).status?.phase === 'Running' ? true : undefined));
    const url = new URL(endpoint.server);
    const text = await new Promise<string>((resolve, reject) => {
      let got = '';
      const req = httpsRequest(
        {
          hostname: url.hostname,
          port: url.port,
          path: `/api/v1/namespaces/${ns}/pods/followed/log?follow=true`,
          ca: endpoint.caPem,
          headers: { Authorization: `Bearer ${endpoint.token}` },
        },
        (res) => {
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            got += d;
            if (/app: alive \(2\)\n/.test(got)) {
              req.destroy();
              resolve(got);
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', (err) => (got.includes('alive (2)') ? undefined : reject(err)));
      req.end();
    });
    expect(text.split('\n').slice(1, 4)).toEqual(['app: ready', 'app: alive (1)', 'app: alive (2)']);
  });
});
