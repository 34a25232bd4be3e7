/**
 * Validation a real API server does and clients read: label and annotation
 * keys and values, immutable fields (a Pod's containers, a Service's
 * cluster IP), the service range, malformed label selectors (400) and the
 * namespaces that may not be deleted — with the status, reason, message
 * and `details.causes` the API server words them with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Cluster } from './cluster.js';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = await connect('conf-fid-valid');
  ns = c.namespace;
});
afterAll(async () => {
  await c?.close();
});

const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const PREFIX_MSG =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

function configMap(name: string, metadata: Record<string, unknown>): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata }, data: { a: '1' } };
}

describe('labels and annotations', () => {
  it('refuses a label value outside the label alphabet, naming the value', async () => {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap('badvalue', { labels: { app: 'bad value!' } }) });
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({
      reason: 'Invalid',
      message: `ConfigMap "badvalue" is invalid: metadata.labels: Invalid value: "bad value!": ${LABEL_VALUE_MSG}`,
      details: {
        name: 'badvalue',
        kind: 'ConfigMap',
        causes: [{ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "bad value!": ${LABEL_VALUE_MSG}` }],
      },
    });
  });

  it('refuses a label value longer than 63 characters', async () => {
    const long = 'a'.repeat(64);
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap('longvalue', { labels: { app: long } }) });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(`ConfigMap "longvalue" is invalid: metadata.labels: Invalid value: "${long}": must be no more than 63 characters`);
  });

  it('refuses label keys with a bad prefix or more than one slash', async () => {
    const bad = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap('badkey', { labels: { 'Bad_/x': 'v' } }) });
    expect(bad.status).toBe(422);
    expect(bad.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "Bad_/x": ${PREFIX_MSG}` }]);
    const slashes = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap('slashes', { labels: { 'a/b/c': 'v' } }) });
    expect(slashes.status).toBe(422);
    expect(slashes.json.details.causes[0].message).toMatch(
      /^Invalid value: "a\/b\/c": a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/,
    );
  });

  it('refuses an annotation key with a space; accepts any annotation value and an empty label value', async () => {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, { body: configMap('badannotation', { annotations: { 'bad key': 'v' } }) });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(`ConfigMap "badannotation" is invalid: metadata.annotations: Invalid value: "bad key": ${NAME_PART_MSG}`);
    const ok = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: configMap('fine', { labels: { 'example.com/empty': '', 'app.kubernetes.io/name': 'My_value.1' }, annotations: { 'example.com/Note': 'any text, even spaces: ok!' } }),
    });
    expect(ok.status).toBe(201);
  });

  it('checks labels on updates too', async () => {
    const r = await c.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/fine`, {
      body: { metadata: { labels: { app: '-dash' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(`ConfigMap "fine" is invalid: metadata.labels: Invalid value: "-dash": ${LABEL_VALUE_MSG}`);
  });
});

describe('request bodies', () => {
  it("refuses a Secret's data that is not base64 while decoding it (400), naming the byte", async () => {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'notbase64' }, data: { key: 'abc def' } },
    });
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ reason: 'BadRequest', message: 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3' });
  });
});

describe('immutable fields', () => {
  it("lets a Pod's images change but not its containers or other spec fields", async () => {
    const base = `/api/v1/namespaces/${ns}/pods`;
    const created = await c.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'immutable' }, spec: { containers: [{ name: 'main', image: 'nginx:1.26' }] } },
    });
    expect(created.status).toBe(201);
    const image = await c.request('PATCH', `${base}/immutable`, {
      body: { spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(image.status).toBe(200);
    expect(image.json.spec.containers[0].image).toBe('nginx:1.27');

    const added = await c.request('PATCH', `${base}/immutable`, {
      body: { spec: { containers: [{ name: 'sidecar', image: 'busybox:1.36' }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(added.status).toBe(422);
    expect(added.json).toMatchObject({
      reason: 'Invalid',
      message: 'Pod "immutable" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers',
      details: {
        name: 'immutable',
        kind: 'Pod',
        causes: [{ reason: 'FieldValueForbidden', field: 'spec.containers', message: 'Forbidden: pod updates may not add or remove containers' }],
      },
    });

    const policy = await c.request('PATCH', `${base}/immutable`, { body: { spec: { restartPolicy: 'Never' } }, contentType: 'application/merge-patch+json' });
    expect(policy.status).toBe(422);
    expect(policy.json.details.causes[0]).toMatchObject({ reason: 'FieldValueForbidden', field: 'spec' });
    expect(policy.json.message).toMatch(
      /^Pod "immutable" is invalid: spec: Forbidden: pod updates may not change fields other than `spec\.containers\[\*\]\.image`, `spec\.initContainers\[\*\]\.image`, `spec\.activeDeadlineSeconds`, `spec\.tolerations` \(only additions to existing tolerations\) or `spec\.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n/,
    );
    // Labels are metadata: they may change.
    const labelled = await c.request('PATCH', `${base}/immutable`, { body: { metadata: { labels: { tier: 'web' } } }, contentType: 'application/merge-patch+json' });
    expect(labelled.status).toBe(200);
    await c.request('DELETE', `${base}/immutable?gracePeriodSeconds=0`);
  });

  it("keeps a Service's cluster IP, refusing a change with the whole list named", async () => {
    const base = `/api/v1/namespaces/${ns}/services`;
    const created = await c.request('POST', base, { body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'keepip' }, spec: { ports: [{ port: 80 }] } } });
    expect(created.status).toBe(201);
    const ip: string = created.json.spec.clusterIP;
    const moved = ip.endsWith('.77') ? ip.replace(/\.77$/, '.78') : ip.replace(/\.\d+$/, '.77');
    const r = await c.request('PATCH', `${base}/keepip`, { body: { spec: { clusterIP: moved, clusterIPs: [moved] } }, contentType: 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(`Service "keepip" is invalid: spec.clusterIPs[0]: Invalid value: []string{"${moved}"}: may not change once set`);
    expect(r.json.details.causes).toEqual([{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs[0]', message: `Invalid value: []string{"${moved}"}: may not change once set` }]);
  });
});

describe('more immutable fields', () => {
  it("lets a StatefulSet's replicas, template and minReadySeconds change, nothing else of its spec", async () => {
    const base = `/apis/apps/v1/namespaces/${ns}/statefulsets`;
    const created = await c.request('POST', base, {
      body: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'sts' },
        spec: {
          replicas: 0,
          serviceName: 'sts',
          selector: { matchLabels: { app: 'sts' } },
          template: { metadata: { labels: { app: 'sts' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
        },
      },
    });
    expect(created.status, created.text).toBe(201);
    const allowed = await c.request('PATCH', `${base}/sts`, {
      body: { spec: { replicas: 0, minReadySeconds: 3, template: { metadata: { labels: { app: 'sts', tier: 'db' } } } } },
      contentType: 'application/merge-patch+json',
    });
    expect(allowed.status, allowed.text).toBe(200);
    const message =
      "StatefulSet.apps \"sts\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
    for (const patch of [
      { spec: { serviceName: 'other' } },
      { spec: { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } } }] } },
    ]) {
      const r = await c.request('PATCH', `${base}/sts`, { body: patch, contentType: 'application/merge-patch+json' });
      expect(r.status).toBe(422);
      expect(r.json.message).toBe(message);
      expect(r.json.details.causes).toEqual([expect.objectContaining({ reason: 'FieldValueForbidden', field: 'spec' })]);
    }
  });

  it("keeps a Job's pod template", async () => {
    const base = `/apis/batch/v1/namespaces/${ns}/jobs`;
    const created = await c.request('POST', base, {
      body: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'job' },
        spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }] } } },
      },
    });
    expect(created.status, created.text).toBe(201);
    const r = await c.request('PATCH', `${base}/job`, {
      body: { spec: { template: { spec: { containers: [{ name: 'main', image: 'busybox:1.37' }] } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toMatch(/^Job\.batch "job" is invalid: spec\.template: Invalid value: .*: field is immutable$/s);
    expect(r.json.details.causes).toEqual([expect.objectContaining({ reason: 'FieldValueInvalid', field: 'spec.template' })]);
  });

  it('keeps the data of an immutable ConfigMap or Secret, and the mark itself, and a Secret its type', async () => {
    const cm = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'frozen' }, immutable: true, data: { a: '1' } },
    });
    expect(cm.status).toBe(201);
    const data = await c.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/frozen`, { body: { data: { a: '2' } }, contentType: 'application/merge-patch+json' });
    expect(data.status).toBe(422);
    expect(data.json.message).toBe('ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    const thaw = await c.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/frozen`, { body: { immutable: false }, contentType: 'application/merge-patch+json' });
    expect(thaw.status).toBe(422);
    expect(thaw.json.message).toBe('ConfigMap "frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set');
    const labelled = await c.request('PATCH', `/api/v1/namespaces/${ns}/configmaps/frozen`, {
      body: { metadata: { labels: { a: 'b' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(labelled.status).toBe(200);

    const secret = await c.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'frozen' }, immutable: true, data: { a: 'MQ==' } },
    });
    expect(secret.status).toBe(201);
    const sdata = await c.request('PATCH', `/api/v1/namespaces/${ns}/secrets/frozen`, { body: { data: { a: 'Mg==' } }, contentType: 'application/merge-patch+json' });
    expect(sdata.status).toBe(422);
    expect(sdata.json.message).toBe('Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    const retyped = await c.request('PATCH', `/api/v1/namespaces/${ns}/secrets/frozen`, { body: { type: 'example.com/other' }, contentType: 'application/merge-patch+json' });
    expect(retyped.status).toBe(422);
    expect(retyped.json.details.causes).toEqual(
      expect.arrayContaining([{ reason: 'FieldValueInvalid', field: 'type', message: 'Invalid value: "example.com/other": field is immutable' }]),
    );
  });

  it("keeps a claim's access modes", async () => {
    const base = `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
    const created = await c.request('POST', base, {
      body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'claim' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    });
    expect(created.status, created.text).toBe(201);
    const r = await c.request('PATCH', `${base}/claim`, { body: { spec: { accessModes: ['ReadWriteMany'] } }, contentType: 'application/merge-patch+json' });
    expect(r.status).toBe(422);
    expect(r.json.message).toMatch(/^PersistentVolumeClaim "claim" is invalid: spec: Forbidden: spec is immutable after creation except resources\.requests for bound claims\n/);
  });
});

describe('the service range', () => {
  it('refuses a cluster IP outside 10.96.0.0/12', async () => {
    const r = await c.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'outside' }, spec: { clusterIP: '192.168.1.5', ports: [{ port: 80 }] } },
    });
    expect(r.status).toBe(422);
    expect(r.json.message).toBe(
      'Service "outside" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.1.5"}: failed to allocate IP 192.168.1.5: the provided IP (192.168.1.5) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
    );
    expect(r.json.details.causes[0]).toMatchObject({ reason: 'FieldValueInvalid', field: 'spec.clusterIPs' });
  });

  it('refuses a cluster IP that is not an address, and one already taken', async () => {
    const bad = await c.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'notip' }, spec: { clusterIP: 'notanip', ports: [{ port: 80 }] } },
    });
    expect(bad.status).toBe(422);
    expect(bad.json.message).toBe('Service "notip" is invalid: spec.clusterIPs[0]: Invalid value: "notanip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');
    const first = await c.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'chosen' }, spec: { clusterIP: '10.100.200.33', ports: [{ port: 80 }] } },
    });
    expect(first.status).toBe(201);
    expect(first.json.spec.clusterIPs).toEqual(['10.100.200.33']);
    const taken = await c.request('POST', `/api/v1/namespaces/${ns}/services`, {
      body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'chosen2' }, spec: { clusterIP: '10.100.200.33', ports: [{ port: 80 }] } },
    });
    expect(taken.status).toBe(422);
    expect(taken.json.message).toBe(
      'Service "chosen2" is invalid: spec.clusterIPs: Invalid value: []string{"10.100.200.33"}: failed to allocate IP 10.100.200.33: provided IP is already allocated',
    );
  });
});

describe('label selectors', () => {
  const cases: [string, string][] = [
    ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['a==b=c', "found '=', expected: ',' or 'end of string'"],
    ['!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a notin ', "unable to parse requirement: found '' expected: '('"],
    ['a=bad value', "found 'value', expected: ',' or 'end of string'"],
    ['a<=1', "unable to parse requirement: found '=', expected: identifier"],
    ['a,', "found '', expected: identifier after ','"],
    [',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['Bad_/x=v', `unable to parse requirement: <nil>: Invalid value: "Bad_/x": ${PREFIX_MSG}`],
    ['a=' + 'v'.repeat(64), `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`],
    ['a>x', `unable to parse requirement: values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer`],
  ];
  it.each(cases)('answers 400 to %j, worded as the API server words it', async (selector, message) => {
    const r = await c.request('GET', `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(selector)}`);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400, message });
  });

  it('selects with every operator, including gt and lt', async () => {
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    for (const [name, labels] of [
      ['sel-1', { tier: 'web', rank: '3' }],
      ['sel-2', { tier: 'db', rank: '10' }],
      ['sel-3', { other: 'x' }],
    ] as const) {
      expect((await c.request('POST', base, { body: configMap(name, { labels }) })).status).toBe(201);
    }
    const names = async (selector: string): Promise<string[]> => {
      const r = await c.request('GET', `${base}?labelSelector=${encodeURIComponent(selector)}`);
      expect(r.status).toBe(200);
      return r.json.items
        .map((i: any) => i.metadata.name)
        .filter((n: string) => n.startsWith('sel-'))
        .sort();
    };
    expect(await names('rank>5')).toEqual(['sel-2']);
    expect(await names('rank<5')).toEqual(['sel-1']);
    expect(await names('tier in (web,db),rank')).toEqual(['sel-1', 'sel-2']);
    expect(await names('tier notin (web)')).toEqual(['sel-2', 'sel-3']);
    expect(await names('!tier')).toEqual(['sel-3']);
    expect(await names('tier!=web')).toEqual(['sel-2', 'sel-3']);
    expect(await names('  tier == db ')).toEqual(['sel-2']);
  });
});

describe('namespaces that may not be deleted', () => {
  it.each(['kube-system', 'default', 'kube-public'])('refuses to delete %s (403)', async (name) => {
    const r = await c.request('DELETE', `/api/v1/namespaces/${name}?dryRun=All`);
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      details: { name, kind: 'namespaces' },
    });
  });
});
