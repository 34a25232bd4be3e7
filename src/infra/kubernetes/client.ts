/**
 * The driver's API client: requests through the transport, bounded retries
 * of what a real API server answers when it is busy or restarting (429 with
 * Retry-After, 502/503/504, a 500 InternalError, a reset connection), and
 * errors that carry
 * the server's own Status message. Everything else fails at once.
 */
import { InterruptedError, VnfmError } from '../../errors.js';
import type { KubeHttpRequest, KubeHttpResponse, KubeTransport } from './kube-wire.js';
import { sleep } from '../../clock.js';

/** The API server refused a request; `status`/`reason` are its Status fields. */
export class KubeApiError extends VnfmError {
  /** The server's answer could change by waiting (busy, restarting); false for an error of the request itself. */
  readonly transient: boolean;

  constructor(
    message: string,
    readonly status: number,
    readonly reason: string | undefined,
    details: { hint?: string; cause?: unknown; transient?: boolean } = {},
  ) {
    const { transient, ...rest } = details;
    super(message, rest);
    this.transient = transient ?? (status === 0 || TRANSIENT_STATUS.has(status));
  }
}

export interface RetryPolicy {
  /** Attempts after the first one (default 5). */
  retries: number;
  /** First backoff; doubles each attempt up to `maxBackoffMs` (defaults 250 / 5000). */
  backoffMs: number;
  maxBackoffMs: number;
  /** Waits `ms` or rejects when `signal` aborts; injected so tests never sleep. */
  sleep(ms: number, signal: AbortSignal | undefined): Promise<void>;
}

export const defaultRetryPolicy: RetryPolicy = {
  retries: 5,
  backoffMs: 250,
  maxBackoffMs: 5000,
  sleep: abortableSleep,
};

/** The one waiter (clock.ts), ending with the driver's abort error. */
export async function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, signal);
  } catch {
    throw abortError(signal!);
  }
}

/** What the driver throws when the operation is cancelled: the abort reason if it is an error (a TimeoutError from --timeout). */
export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new InterruptedError('the operation was interrupted');
}

const TRANSIENT_STATUS = new Set([429, 500, 502, 503, 504]);
const TRANSIENT_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

export function transientNetworkError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && TRANSIENT_CODES.has(code);
}

/**
 * Whether waiting may change the answer. 429, 502, 503 and 504 say so
 * themselves. A 500 is transient when it is the server's InternalError
 * (etcd, a webhook it could not call), asks to be retried (Retry-After), or
 * is no Status at all (a proxy's page); a 500 whose Status states an error
 * of the request itself — reason unset, as the API server answers a
 * server-side apply it cannot type ("failed to create typed patch object …
 * field not declared in schema") — comes back the same on every attempt.
 */
export function transientAnswer(res: KubeHttpResponse): boolean {
  if (!TRANSIENT_STATUS.has(res.status)) return false;
  if (res.status !== 500 || res.headers['retry-after'] !== undefined) return true;
  const body = res.body as { kind?: unknown } | undefined;
  if (!body || typeof body !== 'object' || body.kind !== 'Status') return true;
  const { reason } = statusOf(body);
  return reason === 'InternalError' || reason === 'ServerTimeout' || reason === 'Timeout';
}

export interface CallOptions {
  /** What the request does, for messages: "create Deployment vdu1 in namespace ns". */
  what: string;
  signal?: AbortSignal;
  /** Statuses handed back as a response instead of thrown (404 for reads, 409 for creates). */
  accept?: number[];
}

export class KubeClient {
  constructor(
    private readonly transport: KubeTransport,
    readonly server: string,
    readonly retry: RetryPolicy = defaultRetryPolicy,
  ) {}

  /** Sends a request, retrying transient failures; returns 2xx answers and the statuses in `accept`. */
  async call(req: KubeHttpRequest, opts: CallOptions): Promise<KubeHttpResponse> {
    const signal = opts.signal ?? req.signal;
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortError(signal);
      let res: KubeHttpResponse;
      try {
        res = await this.transport.request({ ...req, signal });
      } catch (err) {
        if (signal?.aborted) throw abortError(signal);
        if (transientNetworkError(err) && attempt < this.retry.retries) {
          await this.retry.sleep(this.backoff(attempt), signal);
          continue;
        }
        throw new KubeApiError(`cannot ${opts.what}: ${networkMessage(err, this.server)}`, 0, undefined, {
          hint: 'check that the API server is running and reachable, then retry the operation',
          cause: err,
        });
      }
      if (res.status < 300 || opts.accept?.includes(res.status)) return res;
      if (transientAnswer(res) && attempt < this.retry.retries) {
        await this.retry.sleep(this.retryAfter(res) ?? this.backoff(attempt), signal);
        continue;
      }
      throw statusError(res, opts.what, attempt);
    }
  }

  /** The parsed body of a successful call. */
  async json<T = Record<string, unknown>>(req: KubeHttpRequest, opts: CallOptions): Promise<T> {
    return (await this.call(req, opts)).body as T;
  }

  stream(req: KubeHttpRequest, onLine: (line: string, bytes?: Buffer) => void): Promise<KubeHttpResponse | undefined> {
    return this.transport.stream(req, onLine);
  }

  backoff(attempt: number): number {
    return Math.min(this.retry.backoffMs * 2 ** attempt, this.retry.maxBackoffMs);
  }

  private retryAfter(res: KubeHttpResponse): number | undefined {
    const header = res.headers['retry-after'];
    const value = Array.isArray(header) ? header[0] : header;
    if (!value) return undefined;
    const seconds = Number(value);
    // Bounded: a server asking for minutes is better answered by failing into FAILED_TEMP and a later retry.
    if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 30_000);
    return undefined;
  }

  close(): void {
    this.transport.close();
  }
}

/** A Status object's fields, when the body is one. */
export function statusOf(body: unknown): { message?: string; reason?: string; code?: number } {
  if (body && typeof body === 'object' && (body as { kind?: unknown }).kind === 'Status') {
    const s = body as { message?: unknown; reason?: unknown; code?: unknown };
    return {
      message: typeof s.message === 'string' ? s.message : undefined,
      reason: typeof s.reason === 'string' ? s.reason : undefined,
      code: typeof s.code === 'number' ? s.code : undefined,
    };
  }
  return {};
}

function statusError(res: KubeHttpResponse, what: string, attempt: number): KubeApiError {
  const status = statusOf(res.body);
  const detail = status.message ?? (typeof res.body === 'string' && res.body ? res.body.slice(0, 300) : `HTTP ${res.status}`);
  const tries = attempt > 0 ? ` (after ${attempt + 1} attempts)` : '';
  return new KubeApiError(`cannot ${what}: the API server answered ${res.status}${status.reason ? ` ${status.reason}` : ''}${tries}: ${detail}`, res.status, status.reason, {
    hint: hintFor(res),
    transient: transientAnswer(res),
  });
}

function hintFor(res: KubeHttpResponse): string | undefined {
  const status = res.status;
  if (status === 500 && !transientAnswer(res)) {
    return /field not declared in schema/.test(statusOf(res.body).message ?? '')
      ? "the object has a field its kind's schema does not declare (named above): remove it from the manifest, then retry or roll back the operation"
      : 'the API server refuses this request the same way each time: fix what its message names, then retry or roll back the operation';
  }
  if (status === 401) return 'the VIM credentials were rejected: update the VIM (vim-update) with a valid token, then retry the operation';
  if (status === 403) return 'the VIM user is not allowed to do this: grant it a role that manages these resources, then retry the operation';
  if (status === 422 || status === 400) return 'the manifest is not valid for this cluster: fix it in the package';
  if (TRANSIENT_STATUS.has(status)) return 'the API server is overloaded or failing: retry the operation later';
  return undefined;
}

function networkMessage(err: unknown, server: string): string {
  const code = (err as { code?: unknown }).code;
  return `no answer from ${server}${typeof code === 'string' ? ` (${code})` : ''}: ${(err as Error).message ?? String(err)}`;
}
