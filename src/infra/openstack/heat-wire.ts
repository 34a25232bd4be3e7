/**
 * Heat's orchestration API as vnfm sees it: stacks, resources and events
 * read from Heat's JSON, what a stack is made of as Heat takes it, and
 * Heat's error answers turned into messages with a hint.
 */
import { VnfmError } from '../../errors.js';
import { parseJson, type HttpAnswer } from './openstack-http.js';

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

export function contentBody(c: Partial<StackContent>): Record<string, unknown> {
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
export function heatError(what: string, res: HttpAnswer): HeatError {
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

export interface RawStackBody {
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

export function stackOf(body: RawStackBody | undefined): HeatStack {
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

export interface RawResource {
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

export function resourceOf(r: RawResource, fallback: StackRef): HeatResource {
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

export interface RawEvent {
  id?: string;
  resource_name?: string;
  physical_resource_id?: string;
  resource_status?: string;
  resource_status_reason?: string;
  resource_action?: string;
  event_time?: string;
}

export function eventOf(e: RawEvent): HeatEvent {
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
