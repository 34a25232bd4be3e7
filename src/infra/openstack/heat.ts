/**
 * Heat's orchestration API, on a Keystone session (service-connection.ts:
 * the token cached and renewed, the endpoint from the catalog). Heat has no
 * watch, so waiting follows the stack's events, polling from the last event
 * seen with a short pause that grows while nothing happens.
 */
import type { KeystoneCredentials } from './keystone.js';
import { parseJson, type HttpAnswer, type HttpMethod } from './openstack-http.js';
import { serviceConnection, type KeystoneTokens, type ServiceDescription } from './service-connection.js';
import { waitForStack, type WaitOptions } from './heat-wait.js';
import {
  contentBody,
  eventOf,
  HeatError,
  heatError,
  resourceOf,
  stackOf,
  type HeatEvent,
  type HeatResource,
  type HeatStack,
  type RawEvent,
  type RawResource,
  type RawStackBody,
  type StackContent,
  type StackRef,
} from './heat-wire.js';

export { StackStalledError, type WaitOptions } from './heat-wait.js';
export { HeatError, stackRefFromHref, type HeatEvent, type HeatResource, type HeatStack, type StackContent, type StackRef } from './heat-wire.js';
import { sleep as realSleep, type Sleep } from '../../clock.js';

export interface HeatSessionOptions {
  interface?: 'public' | 'internal' | 'admin';
  /** The VIM's region_name; the first endpoint when absent. */
  region?: string;
  /** Milliseconds since the epoch; injectable for tests. */
  now?(): number;
  /** The pause between polls (and the OpenStack driver's other waits); clock.ts's by default, injected so tests wait without real timers. */
  sleep?: Sleep;
  /** Pauses between polls while waiting: the first, and the longest it grows to. */
  pollMs?: { min: number; max: number };
  /** How long a wait tolerates Heat or Keystone not answering (a restart) before giving up. */
  unreachableGraceMs?: number;
  /**
   * After Heat answers again following an outage, how long the stack may stay
   * `<action>_IN_PROGRESS` with no new event before the wait counts its work
   * as dropped (StackStalledError): a restarted convergence engine does not
   * resume what the old one was doing.
   */
  resumeQuietMs?: number;
  /** Per request. */
  requestTimeoutMs?: number;
  /** Re-issue a token this long before it expires. */
  tokenMarginMs?: number;
  /** The VIM's token, shared with its Glance session (driver.ts); Heat's own when absent. */
  tokens?: KeystoneTokens;
}

const HEAT: ServiceDescription = {
  type: 'orchestration',
  name: 'Heat',
  reachHint: 'check that Heat runs and this host may connect to it (its URL is the orchestration endpoint of the Keystone catalog)',
  missingHint: 'vnfm deploys VNFs on OpenStack through Heat: register Heat in this cloud, or check region_name in the VIM',
};

/** A Heat client bound to one VIM's credentials. */
export interface HeatSession {
  /** The orchestration endpoint of the catalog (after the first token). */
  endpoint(signal?: AbortSignal): Promise<string>;
  createStack(name: string, content: StackContent, signal?: AbortSignal): Promise<StackRef>;
  /** The stack by name (following Heat's redirect to `<name>/<id>`); undefined when there is none. */
  findStack(name: string, signal?: AbortSignal): Promise<HeatStack | undefined>;
  getStack(ref: StackRef, signal?: AbortSignal): Promise<HeatStack | undefined>;
  /** PUT: the whole stack replaced by `content`. */
  updateStack(ref: StackRef, content: StackContent, signal?: AbortSignal): Promise<void>;
  /** PATCH: what is given is merged over the stack's current template, files, environment and parameters. */
  patchStack(ref: StackRef, content: Partial<StackContent>, signal?: AbortSignal): Promise<void>;
  /** A stack already gone counts as deleted. */
  deleteStack(ref: StackRef, signal?: AbortSignal): Promise<void>;
  markUnhealthy(stack: StackRef, resourceName: string, reason: string, signal?: AbortSignal): Promise<void>;
  /**
   * POST `.../resources/<name>/signal` with no details, as `openstack stack
   * resource signal` sends it: Heat answers at once and runs the resource's
   * signal handler (a ScalingPolicy's adjustment of its group) afterwards.
   */
  signalResource(stack: StackRef, resourceName: string, signal?: AbortSignal): Promise<void>;
  /** A resource's metadata (a scaling group's `scaling_in_progress` and `cooldown_end`). */
  resourceMetadata(stack: StackRef, resourceName: string, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** The stack's current template, as Heat holds it (parsed). */
  getTemplate(ref: StackRef, signal?: AbortSignal): Promise<Record<string, unknown>>;
  listResources(ref: StackRef, nestedDepth: number, signal?: AbortSignal): Promise<HeatResource[]>;
  showResource(stack: StackRef, resourceName: string, signal?: AbortSignal): Promise<HeatResource>;
  /** Top-level events after `marker`, oldest first. */
  listEvents(ref: StackRef, opts: { marker?: string; limit?: number }, signal?: AbortSignal): Promise<HeatEvent[]>;
  /** The id of the stack's newest event, to wait for what happens after it. */
  lastEventId(ref: StackRef, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * Follows the stack's events until `action` ends; returns the stack as it
   * ended (`<action>_COMPLETE` or `_FAILED`), or undefined when it is gone
   * after a delete.
   */
  waitForStack(ref: StackRef, opts: WaitOptions, signal: AbortSignal): Promise<HeatStack | undefined>;
}

export function createHeatSession(creds: KeystoneCredentials, opts: HeatSessionOptions = {}): HeatSession {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? realSleep;
  // A stack's events every second while they come, backing off to 4 s when none do: quick enough to follow
  // the action (openstackclient's --wait polls every 5 s, Tacker every 5–10 s), gentle on a Heat API others share.
  const poll = opts.pollMs ?? { min: 1_000, max: 4_000 };
  const grace = opts.unreachableGraceMs ?? 60_000;
  const resumeQuiet = opts.resumeQuietMs ?? 10_000;
  const conn = serviceConnection(creds, HEAT, opts, now);
  const session = (signal: AbortSignal | undefined, fresh: boolean) => conn.session(signal, fresh);
  const call = (method: HttpMethod, path: string, body: unknown, signal: AbortSignal | undefined) => conn.call(method, path, body, signal);

  const stackPath = (ref: StackRef) => `/stacks/${encodeURIComponent(ref.name)}/${encodeURIComponent(ref.id)}`;

  async function expect(what: string, res: HttpAnswer, ok: number[]): Promise<unknown> {
    if (ok.includes(res.status)) return parseJson(res.body);
    throw heatError(what, res);
  }

  const api: HeatSession = {
    async endpoint(signal) {
      return (await session(signal, false)).base;
    },

    async createStack(name, content, signal) {
      const res = await call('POST', '/stacks', { stack_name: name, disable_rollback: true, ...contentBody(content) }, signal);
      const body = (await expect(`create stack ${name}`, res, [201, 202])) as { stack?: { id?: string } } | undefined;
      if (!body?.stack?.id) throw new HeatError(`Heat's answer to creating stack ${name} has no stack id`, res.status, undefined, res.body.slice(0, 200));
      return { name, id: body.stack.id };
    },

    async findStack(name, signal) {
      const res = await call('GET', `/stacks/${encodeURIComponent(name)}`, undefined, signal);
      if (res.status === 404) return undefined;
      if (res.status === 302 || res.status === 301 || res.status === 303) {
        // Heat redirects a name to `<name>/<id>`; the id is what matters, the Location's host may be a proxy's.
        const location = String(res.headers.location ?? '');
        const parts = new URL(location, 'http://x').pathname.split('/').filter(Boolean);
        const id = decodeURIComponent(parts.at(-1) ?? '');
        if (!id) throw new HeatError(`Heat redirected stack ${name} to "${location}", which names no stack id`, res.status, undefined, location);
        // Asked by id, Heat answers with the stack's name: `.../stacks/<name>/<id>`.
        const named = parts.at(-3) === 'stacks' ? decodeURIComponent(parts.at(-2) ?? name) : name;
        return api.getStack({ name: named, id }, signal);
      }
      return stackOf((await expect(`show stack ${name}`, res, [200])) as RawStackBody);
    },

    async getStack(ref, signal) {
      const res = await call('GET', stackPath(ref), undefined, signal);
      if (res.status === 404) return undefined;
      return stackOf((await expect(`show stack ${ref.name}`, res, [200])) as RawStackBody);
    },

    async updateStack(ref, content, signal) {
      const res = await call('PUT', stackPath(ref), contentBody(content), signal);
      await expect(`update stack ${ref.name}`, res, [202, 200]);
    },

    async patchStack(ref, content, signal) {
      const res = await call('PATCH', stackPath(ref), contentBody(content), signal);
      await expect(`update stack ${ref.name}`, res, [202, 200]);
    },

    async deleteStack(ref, signal) {
      const res = await call('DELETE', stackPath(ref), undefined, signal);
      if (res.status === 404) return;
      await expect(`delete stack ${ref.name}`, res, [204, 200, 202]);
    },

    async markUnhealthy(stack, resourceName, reason, signal) {
      const res = await call('PATCH', `${stackPath(stack)}/resources/${encodeURIComponent(resourceName)}`, { mark_unhealthy: true, resource_status_reason: reason }, signal);
      await expect(`mark resource ${resourceName} of stack ${stack.name} unhealthy`, res, [200, 202, 204]);
    },

    async signalResource(stack, resourceName, signal) {
      const res = await call('POST', `${stackPath(stack)}/resources/${encodeURIComponent(resourceName)}/signal`, undefined, signal);
      await expect(`signal resource ${resourceName} of stack ${stack.name}`, res, [200, 202, 204]);
    },

    async resourceMetadata(stack, resourceName, signal) {
      const res = await call('GET', `${stackPath(stack)}/resources/${encodeURIComponent(resourceName)}/metadata`, undefined, signal);
      const body = (await expect(`read the metadata of resource ${resourceName} of stack ${stack.name}`, res, [200])) as { metadata?: unknown } | undefined;
      const metadata = body?.metadata;
      return typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {};
    },

    async getTemplate(ref, signal) {
      const res = await call('GET', `${stackPath(ref)}/template`, undefined, signal);
      const body = await expect(`read the template of stack ${ref.name}`, res, [200]);
      if (typeof body !== 'object' || body === null || Array.isArray(body))
        throw new HeatError(`Heat's answer for the template of stack ${ref.name} is not a template`, res.status, undefined, res.body.slice(0, 200));
      return body as Record<string, unknown>;
    },

    async listResources(ref, nestedDepth, signal) {
      const res = await call('GET', `${stackPath(ref)}/resources?nested_depth=${nestedDepth}`, undefined, signal);
      const body = (await expect(`list resources of stack ${ref.name}`, res, [200])) as { resources?: RawResource[] } | undefined;
      return (body?.resources ?? []).map((r) => resourceOf(r, ref));
    },

    async showResource(stack, resourceName, signal) {
      const res = await call('GET', `${stackPath(stack)}/resources/${encodeURIComponent(resourceName)}`, undefined, signal);
      const body = (await expect(`show resource ${resourceName} of stack ${stack.name}`, res, [200])) as { resource?: RawResource } | undefined;
      return resourceOf(body?.resource ?? {}, stack);
    },

    async listEvents(ref, o, signal) {
      const q = new URLSearchParams({ sort_dir: 'asc', limit: String(o.limit ?? 200) });
      if (o.marker) q.set('marker', o.marker);
      const res = await call('GET', `${stackPath(ref)}/events?${q}`, undefined, signal);
      const body = (await expect(`list events of stack ${ref.name}`, res, [200])) as { events?: RawEvent[] } | undefined;
      return (body?.events ?? []).map(eventOf);
    },

    async lastEventId(ref, signal) {
      const res = await call('GET', `${stackPath(ref)}/events?sort_dir=desc&limit=1`, undefined, signal);
      const body = (await expect(`list events of stack ${ref.name}`, res, [200])) as { events?: RawEvent[] } | undefined;
      return body?.events?.[0]?.id;
    },

    waitForStack(ref, w, signal) {
      return waitForStack(api, ref, w, signal, { now, sleep, poll, grace, resumeQuiet });
    },
  };
  return api;
}
