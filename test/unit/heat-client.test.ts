/**
 * Wire details of the Heat client against a small in-test server that plays
 * Keystone and Heat: URL building, re-auth on 401 and on expiry, the stack
 * name redirect, errors, and waiting on events. Behaviour against a real
 * Heat is in test/e2e/openstack-lifecycle.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHeatSession, HeatError, StackStalledError } from '../../src/infra/openstack/heat.js';

interface Seen {
  method: string;
  url: string;
  token?: string;
  body?: unknown;
}

let server: Server;
let base: string;
let seen: Seen[];
let tokens: number;
let expiresInMs: number;
let rejectNext401: number;
let events: Array<Record<string, unknown>>;
let stackStatus: string;
let heatDown: number;

function send(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? '' : JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  const url = req.url ?? '';
  seen.push({ method: req.method ?? '', url, ...(req.headers['x-auth-token'] ? { token: String(req.headers['x-auth-token']) } : {}), ...(text ? { body: JSON.parse(text) } : {}) });
  if (url === '/identity/v3/auth/tokens') {
    tokens++;
    const token = {
      expires_at: new Date(Date.now() + expiresInMs).toISOString(),
      project: { id: 'p1' },
      catalog: [
        {
          type: 'orchestration',
          endpoints: [
            { interface: 'public', region_id: 'R2', url: `${base}/other/v1/p1` },
            { interface: 'public', region_id: 'R1', url: `${base}/heat/v1/p1/` },
            { interface: 'internal', region_id: 'R1', url: `${base}/internal/v1/p1` },
          ],
        },
      ],
    };
    return send(res, 201, { token }, { 'x-subject-token': `tok-${tokens}` });
  }
  if (rejectNext401 > 0) {
    rejectNext401--;
    return send(res, 401, { error: { message: 'The request you have made requires authentication.', code: 401 } });
  }
  if (heatDown > 0) {
    heatDown--;
    req.socket.destroy();
    return;
  }
  const path = url.replace(/^\/heat\/v1\/p1/, '');
  if (req.method === 'GET' && path === '/stacks/vnf-1') return send(res, 302, { stack: {} }, { location: `http://proxy.example:8004/v1/p1/stacks/vnf-1/id-1` });
  if (req.method === 'GET' && path === '/stacks/vnf-1/id-1')
    return send(res, 200, { stack: { id: 'id-1', stack_name: 'vnf-1', stack_status: stackStatus, stack_status_reason: 'because', parameters: { nfv: '{}' }, outputs: [] } });
  if (req.method === 'GET' && path === '/stacks/none') return send(res, 404, { error: { message: 'The Stack (none) could not be found.', type: 'EntityNotFound' } });
  if (req.method === 'POST' && path === '/stacks')
    return send(res, 400, {
      explanation: 'x',
      code: 400,
      error: { message: 'Property error: resources.VDU1<VDU1.yaml>.properties.flavor: required', type: 'StackValidationFailed' },
      title: 'Bad Request',
    });
  if (req.method === 'PATCH' && path === '/stacks/vnf-1/id-1') return send(res, 202);
  if (req.method === 'PATCH' && path.startsWith('/stacks/nested%20one/nid/resources/')) return send(res, 200, {});
  if (req.method === 'GET' && path.startsWith('/stacks/vnf-1/id-1/resources?')) {
    return send(res, 200, {
      resources: [
        {
          resource_name: 'VDU1',
          resource_type: 'OS::Nova::Server',
          resource_status: 'CREATE_COMPLETE',
          physical_resource_id: 's1',
          parent_resource: 'm1',
          links: [
            { rel: 'self', href: `${base}/heat/v1/p1/stacks/nested%20one/nid/resources/VDU1` },
            { rel: 'stack', href: `${base}/heat/v1/p1/stacks/nested%20one/nid` },
          ],
        },
        {
          resource_name: 'grp',
          resource_type: 'OS::Heat::AutoScalingGroup',
          resource_status: 'CREATE_COMPLETE',
          physical_resource_id: 'g1',
          links: [
            { rel: 'stack', href: `${base}/heat/v1/p1/stacks/vnf-1/id-1` },
            { rel: 'nested', href: `${base}/heat/v1/p1/stacks/vnf-1-grp-x/g1` },
          ],
        },
      ],
    });
  }
  if (req.method === 'GET' && path.startsWith('/stacks/vnf-1/id-1/events?')) {
    const q = new URL(url, base).searchParams;
    if (q.get('sort_dir') === 'desc') return send(res, 200, { events: events.slice(-1) });
    const marker = q.get('marker');
    const from = marker ? events.findIndex((e) => e['id'] === marker) + 1 : 0;
    return send(res, 200, { events: events.slice(from) });
  }
  return send(res, 500, { error: { message: `unexpected ${req.method} ${path}` } });
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  seen = [];
  tokens = 0;
  expiresInMs = 3600_000;
  rejectNext401 = 0;
  events = [];
  stackStatus = 'CREATE_COMPLETE';
  heatDown = 0;
});

/**
 * A clock that moves only when the code under test sleeps (no real timers):
 * each pause advances it, then runs what `at` scheduled up to the new time.
 */
function virtualClock() {
  let t = 0;
  const due: Array<{ at: number; run: () => void }> = [];
  const pauses: number[] = [];
  return {
    now: () => t,
    async sleep(ms: number): Promise<void> {
      pauses.push(ms);
      t += ms;
      for (const d of due.filter((x) => x.at <= t)) {
        due.splice(due.indexOf(d), 1);
        d.run();
      }
    },
    at(ms: number, run: () => void): void {
      due.push({ at: ms, run });
    },
    pauses,
  };
}

const creds = () => ({
  authUrl: `${base}/identity`,
  auth: { method: 'password' as const, username: 'u', password: 'p', projectName: 'vnf' },
  verifyTls: true,
});

describe('Heat session', () => {
  it('picks the endpoint by interface and region, and sends the token', async () => {
    const heat = createHeatSession(creds(), { region: 'R1' });
    expect(await heat.endpoint()).toBe(`${base}/heat/v1/p1`);
    const internal = createHeatSession(creds(), { region: 'R1', interface: 'internal' });
    expect(await internal.endpoint()).toBe(`${base}/internal/v1/p1`);
    await expect(createHeatSession(creds(), { region: 'R9' }).endpoint()).rejects.toThrow(/no public orchestration \(Heat\) endpoint in region "R9"/);
  });

  it('follows the name redirect to <name>/<id> on the endpoint, not on the Location host; a missing stack is undefined', async () => {
    const heat = createHeatSession(creds(), { region: 'R1' });
    const stack = await heat.findStack('vnf-1');
    expect(stack).toMatchObject({ name: 'vnf-1', id: 'id-1', status: 'CREATE_COMPLETE', statusReason: 'because' });
    expect(seen.filter((s) => s.token).map((s) => s.url)).toEqual(['/heat/v1/p1/stacks/vnf-1', '/heat/v1/p1/stacks/vnf-1/id-1']);
    expect(await heat.findStack('none')).toBeUndefined();
    expect(tokens).toBe(1);
  });

  it('a 401 gets a new token and the request is sent once more', async () => {
    const heat = createHeatSession(creds(), { region: 'R1' });
    await heat.findStack('vnf-1');
    rejectNext401 = 1;
    await heat.findStack('vnf-1');
    expect(tokens).toBe(2);
    const calls = seen.filter((s) => s.token);
    expect(calls.map((s) => s.token)).toEqual(['tok-1', 'tok-1', 'tok-1', 'tok-2', 'tok-2']);
    rejectNext401 = 2;
    await expect(heat.findStack('vnf-1')).rejects.toThrow(/HTTP 401/);
  });

  it('a token is replaced before it expires: within the margin, or past half its life when it lives shorter than twice the margin', async () => {
    let t = Date.now();
    expiresInMs = 3600_000;
    const lasting = createHeatSession(creds(), { region: 'R1', tokenMarginMs: 60_000, now: () => t });
    await lasting.findStack('vnf-1');
    expect(tokens).toBe(1);
    t += 3600_000 - 30_000;
    // Two requests (the redirect and the stack): the first takes a new token, the second keeps it.
    await lasting.findStack('vnf-1');
    expect(tokens).toBe(2);

    t = Date.now();
    expiresInMs = 30_000;
    const short = createHeatSession(creds(), { region: 'R1', tokenMarginMs: 60_000, now: () => t });
    await short.findStack('vnf-1');
    expect(tokens).toBe(3);
    t += 16_000;
    await short.findStack('vnf-1');
    expect(tokens).toBe(4);
  });

  it("Heat's error message and type; mark-unhealthy and resource links", async () => {
    const heat = createHeatSession(creds(), { region: 'R1' });
    const err = (await heat.createStack('vnf-1', { template: 'x', files: {}, parameters: {} }).catch((e: unknown) => e)) as HeatError;
    expect(err).toBeInstanceOf(HeatError);
    expect(err.status).toBe(400);
    expect(err.heatType).toBe('StackValidationFailed');
    expect(err.message).toBe('Heat refused to create stack vnf-1 (HTTP 400 StackValidationFailed): Property error: resources.VDU1<VDU1.yaml>.properties.flavor: required');
    expect(seen.at(-1)?.body).toEqual({ stack_name: 'vnf-1', disable_rollback: true, template: 'x', files: {}, parameters: {} });

    const resources = await heat.listResources({ name: 'vnf-1', id: 'id-1' }, 3);
    expect(seen.at(-1)?.url).toBe('/heat/v1/p1/stacks/vnf-1/id-1/resources?nested_depth=3');
    expect(resources[0]).toMatchObject({ name: 'VDU1', physicalId: 's1', parentResource: 'm1', stack: { name: 'nested one', id: 'nid' } });
    expect(resources[1]?.nestedStack).toEqual({ name: 'vnf-1-grp-x', id: 'g1' });
    await heat.markUnhealthy(resources[0]!.stack, 'VDU1', 'heal');
    expect(seen.at(-1)).toMatchObject({
      method: 'PATCH',
      url: '/heat/v1/p1/stacks/nested%20one/nid/resources/VDU1',
      body: { mark_unhealthy: true, resource_status_reason: 'heal' },
    });
  });

  it('waiting follows events after the marker, survives Heat not answering for a while, and ends on the stack event', async () => {
    const clock = virtualClock();
    const heat = createHeatSession(creds(), { region: 'R1', pollMs: { min: 1, max: 5 }, now: clock.now, sleep: clock.sleep });
    const ref = { name: 'vnf-1', id: 'id-1' };
    events = [{ id: 'e0', resource_name: 'vnf-1', physical_resource_id: 'id-1', resource_status: 'CREATE_COMPLETE' }];
    const since = await heat.lastEventId(ref);
    expect(since).toBe('e0');
    await heat.patchStack(ref, { parameters: { nfv: { VDU: {} } } });
    expect(seen.at(-1)).toMatchObject({ method: 'PATCH', body: { parameters: { nfv: { VDU: {} } } } });
    stackStatus = 'UPDATE_IN_PROGRESS';
    heatDown = 2;
    const got: string[] = [];
    const waiting = heat.waitForStack(ref, { action: 'UPDATE', since, onEvent: (e) => got.push(`${e.resourceName} ${e.status}`) }, new AbortController().signal);
    clock.at(20, () => events.push({ id: 'e1', resource_name: 'grp', physical_resource_id: 'g1', resource_status: 'UPDATE_IN_PROGRESS' }));
    clock.at(40, () => {
      events.push({ id: 'e2', resource_name: 'vnf-1', physical_resource_id: 'id-1', resource_status: 'UPDATE_COMPLETE' });
      stackStatus = 'UPDATE_COMPLETE';
    });
    const stack = await waiting;
    expect(stack?.status).toBe('UPDATE_COMPLETE');
    expect(got).toEqual(['grp UPDATE_IN_PROGRESS', 'vnf-1 UPDATE_COMPLETE']);
    const markers = seen.filter((s) => s.url.includes('/events?') && s.url.includes('sort_dir=asc')).map((s) => new URL(s.url, base).searchParams.get('marker'));
    expect(markers[0]).toBe('e0');
    // The poll that saw e2 (after e1) ended the wait: nothing is polled after the stack's own event.
    expect(markers.at(-1)).toBe('e1');
  });

  it('waiting gives up when Heat stays unreachable past the grace period', async () => {
    const clock = virtualClock();
    const heat = createHeatSession(creds(), { region: 'R1', pollMs: { min: 1, max: 1 }, unreachableGraceMs: 10, now: clock.now, sleep: clock.sleep });
    heatDown = 1000;
    await expect(heat.waitForStack({ name: 'vnf-1', id: 'id-1' }, { action: 'CREATE' }, new AbortController().signal)).rejects.toThrow(/could not be reached/);
    // Given up once past the grace period: polled every 1 ms for 10 ms, then once more.
    expect(clock.pauses).toEqual(Array(11).fill(1));
  });

  it('waiting reports a stalled stack when Heat answers again after an outage but the stack shows no progress', async () => {
    const clock = virtualClock();
    const heat = createHeatSession(creds(), { region: 'R1', pollMs: { min: 1, max: 2 }, resumeQuietMs: 30, now: clock.now, sleep: clock.sleep });
    stackStatus = 'CREATE_IN_PROGRESS';
    // What the old engine did before it went is read after Heat answers again: not progress.
    events = [{ id: 'e1', resource_name: 'VDU2_CP1', physical_resource_id: 'p1', resource_status: 'CREATE_COMPLETE' }];
    heatDown = 2;
    const err = await heat.waitForStack({ name: 'vnf-1', id: 'id-1' }, { action: 'CREATE' }, new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StackStalledError);
    expect((err as StackStalledError).message).toMatch(/stayed CREATE_IN_PROGRESS with no event/);
    expect((err as StackStalledError).hint).toMatch(/op-retry/);
    expect(clock.now()).toBeGreaterThanOrEqual(30);
  });

  it('no outage, no stall: a quiet IN_PROGRESS stack is simply waited for', async () => {
    const clock = virtualClock();
    const heat = createHeatSession(creds(), { region: 'R1', pollMs: { min: 1, max: 2 }, resumeQuietMs: 1, now: clock.now, sleep: clock.sleep });
    stackStatus = 'CREATE_IN_PROGRESS';
    events = [];
    clock.at(60, () => {
      events.push({ id: 'e9', resource_name: 'vnf-1', physical_resource_id: 'id-1', resource_status: 'CREATE_COMPLETE' });
      stackStatus = 'CREATE_COMPLETE';
    });
    const stack = await heat.waitForStack({ name: 'vnf-1', id: 'id-1' }, { action: 'CREATE' }, new AbortController().signal);
    expect(stack?.status).toBe('CREATE_COMPLETE');
  });
});
