/**
 * Heat's orchestration API, on a Keystone session: the token is cached and
 * issued again before it expires or after a 401 (the request is then sent
 * once more), and the endpoint comes from the token's catalog. Heat has no
 * watch, so waiting follows the stack's events, polling from the last event
 * seen with a short pause that grows while nothing happens.
 */
import { TimeoutError, InterruptedError, VimCheckError, VnfmError } from '../../errors.js';
import { findEndpoint, issueToken, type KeystoneCredentials, type KeystoneToken } from './keystone.js';
import { parseJson, sendHttp, ServiceUnreachableError, type HttpAnswer, type HttpMethod } from './openstack-http.js';
import { sleep } from '../../clock.js';

/** A stack by name and id; Heat addresses stacks as `<name>/<id>`. */
export interface StackRef {
  name: string;
  id: string;
}

export interface HeatStack extends StackRef {
  /** e.g. `CREATE_COMPLETE`, `UPDATE_IN_PROGRESS`. */
  status: string;
  statusReason: string;
  parameters: Record<string, unknown>;
  outputs: Array<{ key: string; value: unknown; description?: string }>;
  creationTime?: string;
  updatedTime?: string;
}

export interface HeatResource {
  name: string;
  type: string;
  status: string;
  statusReason: string;
  physicalId: string;
  /** The stack the resource is in. */
  stack: StackRef;
  /** For a resource of a nested stack: the resource of the parent stack that holds it. */
  parentResource?: string;
  /** For a stack resource (a group, a provider template): the stack it made. */
  nestedStack?: StackRef;
  creationTime?: string;
  updatedTime?: string;
  /** Only from `showResource`. */
  attributes?: Record<string, unknown>;
}

export interface HeatEvent {
  id: string;
  resourceName: string;
  physicalResourceId: string;
  status: string;
  statusReason: string;
  eventTime?: string;
}

/** What a stack is made of, as `openstack stack create -t T -e E1 -e E2 --parameter` sends it. */
export interface StackContent {
  /** The top template (YAML text or an object). */
  template: string | Record<string, unknown>;
  /** Nested templates, provider templates and environment files, by the name templates use. */
  files: Record<string, string>;
  /** Names in `files`, merged in order (Heat's `environment_files`). */
  environmentFiles?: string[];
  /** Merged over the environment files. */
  environment?: Record<string, unknown>;
  parameters: Record<string, unknown>;
  timeoutMins?: number;
}

export interface HeatSessionOptions {
  interface?: 'public' | 'internal' | 'admin';
  /** The VIM's region_name; the first endpoint when absent. */
  region?: string;
  /** Milliseconds since the epoch; injectable for tests. */
  now?(): number;
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
}

export interface WaitOptions {
  /** The action whose end is awaited. */
  action: 'CREATE' | 'UPDATE' | 'DELETE';
  /** Events up to this one are history (from `lastEventId` before the action started). */
  since?: string;
  onEvent?(event: HeatEvent): void;
}

/** Heat answered with an error: its HTTP status, its error type and message. */
export class HeatError extends VnfmError {
  constructor(
    message: string,
    readonly status: number,
    readonly heatType: string | undefined,
    readonly heatMessage: string,
    details: { hint?: string; cause?: unknown } = {},
  ) {
    super(message, details);
  }
}

/** A token this close to its expiry is not used even when Keystone cannot give a new one. */
const TOKEN_FLOOR_MS = 5_000;

const HEAT_HINT = 'check that Heat runs and this host may connect to it (its URL is the orchestration endpoint of the Keystone catalog)';

/**
 * Heat stopped answering during an action and, once it answered again, the
 * stack stayed `<action>_IN_PROGRESS` with no event: the engine that ran the
 * action is gone. A convergence Heat (the default since Queens) never marks
 * such a stack FAILED by itself (only stacks of the legacy engine are reset on
 * engine start); an update of the stack, even while IN_PROGRESS, takes the
 * work over and steals the dead engine's resource locks.
 */
export class StackStalledError extends VnfmError {
  constructor(
    readonly heatStack: HeatStack,
    readonly action: 'CREATE' | 'UPDATE' | 'DELETE',
    quietMs: number,
  ) {
    super(
      `Heat stopped answering during the ${action} of stack ${heatStack.name}, and since it answers again the stack has stayed ${heatStack.status} with no event for ${Math.round(quietMs / 1000)} s: the Heat engine that ran it was restarted and dropped the work`,
      { hint: `retry the operation (op-retry): vnfm then updates stack ${heatStack.name}, which makes Heat take the work over` },
    );
  }
}

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
  const margin = opts.tokenMarginMs ?? 60_000;
  const poll = opts.pollMs ?? { min: 200, max: 2_000 };
  const grace = opts.unreachableGraceMs ?? 60_000;
  const resumeQuiet = opts.resumeQuietMs ?? 10_000;
  let token: KeystoneToken | undefined;
  let tokenMargin = margin;
  let base: string | undefined;

  const heatLabel = (url: string) => ({ name: 'Heat', reachHint: `${HEAT_HINT}: ${new URL(url).origin}` });

  async function session(signal: AbortSignal | undefined, fresh: boolean): Promise<{ token: KeystoneToken; base: string }> {
    if (fresh || !token || token.expiresAt.getTime() - tokenMargin <= now()) {
      const asked = now();
      let issued: KeystoneToken;
      try {
        issued = await issueToken(creds, signal ? { signal } : {});
      } catch (err) {
        // Keystone not answering while the current token still has life left: go on with it.
        if (!fresh && token && base && err instanceof ServiceUnreachableError && token.expiresAt.getTime() - TOKEN_FLOOR_MS > now()) return { token, base };
        throw err;
      }
      token = issued;
      // A cloud with short-lived tokens: renew at half their life, not on every request.
      tokenMargin = Math.min(margin, Math.max(0, (token.expiresAt.getTime() - asked) / 2));
      const url = findEndpoint(token, 'orchestration', { interface: opts.interface ?? 'public', ...(opts.region ? { region: opts.region } : {}) });
      if (!url) {
        const where = opts.region ? ` in region "${opts.region}"` : '';
        throw new VimCheckError(`the Keystone catalog has no ${opts.interface ?? 'public'} orchestration (Heat) endpoint${where}`, {
          hint: 'vnfm deploys VNFs on OpenStack through Heat: register Heat in this cloud, or check region_name in the VIM',
        });
      }
      base = url.replace(/\/+$/, '');
    }
    return { token, base: base! };
  }

  async function call(method: HttpMethod, path: string, body: unknown, signal: AbortSignal | undefined): Promise<HttpAnswer> {
    let s = await session(signal, false);
    const send = () =>
      sendHttp(creds, heatLabel(s.base), {
        method,
        url: s.base + path,
        body,
        headers: { 'x-auth-token': s.token.token },
        ...(signal ? { signal } : {}),
        ...(opts.requestTimeoutMs ? { timeoutMs: opts.requestTimeoutMs } : {}),
      });
    let res = await send();
    if (res.status === 401) {
      // Revoked or expired early (Keystone restarted with new keys): one new token, one more try.
      s = await session(signal, true);
      res = await send();
    }
    return res;
  }

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
        return api.getStack({ name, id }, signal);
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
      const res = await call(
        'PATCH',
        `${stackPath(stack)}/resources/${encodeURIComponent(resourceName)}`,
        { mark_unhealthy: true, resource_status_reason: reason },
        signal,
      );
      await expect(`mark resource ${resourceName} of stack ${stack.name} unhealthy`, res, [200, 202, 204]);
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

    async waitForStack(ref, w, signal) {
      let marker = w.since;
      let pause = poll.min;
      let polls = 0;
      let unreachableSince: number | undefined;
      // When Heat answered again after an outage; cleared by the next event (its engine is at work).
      let backSince: number | undefined;
      for (;;) {
        throwIfAborted(signal);
        let sawEvent = false;
        try {
          const events = await api.listEvents(ref, marker ? { marker } : {}, signal);
          let ended = false;
          for (const e of events) {
            marker = e.id;
            sawEvent = true;
            w.onEvent?.(e);
            if (e.resourceName === ref.name && e.physicalResourceId === ref.id && e.status.startsWith(`${w.action}_`) && !e.status.endsWith('_IN_PROGRESS')) ended = true;
          }
          // The first answer after an outage brings the backlog (what the old engine did before it went): only later events are progress.
          if (unreachableSince !== undefined) backSince = now();
          else if (sawEvent) backSince = undefined;
          unreachableSince = undefined;
          const stalled = backSince !== undefined && now() - backSince >= resumeQuiet;
          // Events can be missed (Heat restarted, a marker it no longer knows): the stack's own status decides, checked now and then.
          if (ended || stalled || polls % 5 === 4) {
            const stack = await api.getStack(ref, signal);
            if (!stack) {
              if (w.action === 'DELETE') return undefined;
              throw new HeatError(`stack ${ref.name} (${ref.id}) disappeared while vnfm waited for its ${w.action}`, 404, undefined, 'stack not found');
            }
            if (stack.status === `${w.action}_COMPLETE` || stack.status === `${w.action}_FAILED`) {
              // Ended between the events read and the stack read: show the events that came with the end.
              if (!ended) for (const e of await api.listEvents(ref, marker ? { marker } : {}, signal).catch(() => [])) w.onEvent?.(e);
              return stack;
            }
            if (w.action === 'DELETE' && stack.status === 'DELETE_COMPLETE') return undefined;
            if (stalled && stack.status === `${w.action}_IN_PROGRESS`) throw new StackStalledError(stack, w.action, now() - backSince!);
          }
        } catch (err) {
          if (signal.aborted) throw signal.reason;
          const transient = err instanceof ServiceUnreachableError || (err instanceof HeatError && err.status >= 502);
          if (!transient) throw err;
          unreachableSince ??= now();
          if (now() - unreachableSince > grace) throw err;
        }
        polls++;
        pause = sawEvent ? poll.min : Math.min(poll.max, Math.round(pause * 1.5));
        await sleep(pause, signal);
      }
    },
  };
  return api;
}

function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const r = signal.reason as unknown;
  throw r instanceof TimeoutError || r instanceof InterruptedError ? r : new InterruptedError('interrupted');
}

function contentBody(c: Partial<StackContent>): Record<string, unknown> {
  return {
    ...(c.template !== undefined ? { template: c.template } : {}),
    ...(c.files ? { files: c.files } : {}),
    ...(c.environmentFiles ? { environment_files: c.environmentFiles } : {}),
    ...(c.environment ? { environment: c.environment } : {}),
    ...(c.parameters ? { parameters: c.parameters } : {}),
    ...(c.timeoutMins ? { timeout_mins: c.timeoutMins } : {}),
  };
}

/** Heat's error body: `{"error": {"message", "type"}, "explanation", "title"}`. */
function heatError(what: string, res: HttpAnswer): HeatError {
  const body = parseJson(res.body) as { error?: { message?: unknown; type?: unknown }; explanation?: unknown; title?: unknown } | undefined;
  const message =
    typeof body?.error?.message === 'string' && body.error.message
      ? body.error.message
      : typeof body?.explanation === 'string'
        ? body.explanation
        : res.body.slice(0, 300).trim() || `HTTP ${res.status}`;
  const type = typeof body?.error?.type === 'string' ? body.error.type : undefined;
  const hint =
    res.status === 400
      ? 'fix the template or the environment Heat names; vnfm sends BaseHOT/<flavour>/ with its nested/ files and the Heat environments given'
      : res.status === 403
        ? 'the VIM user needs a role that may use Heat on this project (e.g. member, or heat_stack_owner)'
        : res.status === 409
          ? 'another action runs on the stack; wait for it, then retry'
          : res.status >= 500
            ? 'Heat failed; its log says why. Retry once it is healthy'
            : undefined;
  return new HeatError(`Heat refused to ${what} (HTTP ${res.status}${type ? ` ${type}` : ''}): ${message}`, res.status, type, message, hint ? { hint } : {});
}

interface RawStackBody {
  stack?: {
    id?: string;
    stack_name?: string;
    stack_status?: string;
    stack_status_reason?: string;
    parameters?: Record<string, unknown>;
    outputs?: Array<{ output_key?: string; output_value?: unknown; description?: string }>;
    creation_time?: string;
    updated_time?: string;
  };
}

function stackOf(body: RawStackBody | undefined): HeatStack {
  const s = body?.stack ?? {};
  return {
    name: s.stack_name ?? '',
    id: s.id ?? '',
    status: s.stack_status ?? 'UNKNOWN',
    statusReason: s.stack_status_reason ?? '',
    parameters: s.parameters ?? {},
    outputs: (s.outputs ?? []).map((o) => ({ key: o.output_key ?? '', value: o.output_value, ...(o.description ? { description: o.description } : {}) })),
    ...(s.creation_time ? { creationTime: s.creation_time } : {}),
    ...(s.updated_time ? { updatedTime: s.updated_time } : {}),
  };
}

interface RawResource {
  resource_name?: string;
  resource_type?: string;
  resource_status?: string;
  resource_status_reason?: string;
  physical_resource_id?: string;
  parent_resource?: string;
  creation_time?: string;
  updated_time?: string;
  attributes?: Record<string, unknown>;
  links?: Array<{ href?: string; rel?: string }>;
}

/** `.../stacks/<name>/<id>` (optionally followed by more) → the stack. */
export function stackRefFromHref(href: string | undefined): StackRef | undefined {
  if (!href) return undefined;
  const parts = new URL(href, 'http://x').pathname.split('/');
  const i = parts.lastIndexOf('stacks');
  if (i < 0 || !parts[i + 1] || !parts[i + 2]) return undefined;
  return { name: decodeURIComponent(parts[i + 1]!), id: decodeURIComponent(parts[i + 2]!) };
}

function resourceOf(r: RawResource, fallback: StackRef): HeatResource {
  const link = (rel: string) => r.links?.find((l) => l.rel === rel)?.href;
  const nested = stackRefFromHref(link('nested'));
  return {
    name: r.resource_name ?? '',
    type: r.resource_type ?? '',
    status: r.resource_status ?? '',
    statusReason: r.resource_status_reason ?? '',
    physicalId: r.physical_resource_id ?? '',
    stack: stackRefFromHref(link('stack')) ?? fallback,
    ...(r.parent_resource ? { parentResource: r.parent_resource } : {}),
    ...(nested ? { nestedStack: nested } : {}),
    ...(r.creation_time ? { creationTime: r.creation_time } : {}),
    ...(r.updated_time ? { updatedTime: r.updated_time } : {}),
    ...(r.attributes ? { attributes: r.attributes } : {}),
  };
}

interface RawEvent {
  id?: string;
  resource_name?: string;
  physical_resource_id?: string;
  resource_status?: string;
  resource_status_reason?: string;
  resource_action?: string;
  event_time?: string;
}

function eventOf(e: RawEvent): HeatEvent {
  // Older Heat splits the status into action and status.
  const status = e.resource_action && e.resource_status && !e.resource_status.includes('_') ? `${e.resource_action}_${e.resource_status}` : (e.resource_status ?? '');
  return {
    id: e.id ?? '',
    resourceName: e.resource_name ?? '',
    physicalResourceId: e.physical_resource_id ?? '',
    status,
    statusReason: e.resource_status_reason ?? '',
    ...(e.event_time ? { eventTime: e.event_time } : {}),
  };
}
