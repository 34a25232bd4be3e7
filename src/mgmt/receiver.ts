/**
 * The credentials receiver: the operator's HTTPS endpoint that the workload
 * cluster's credentials are POSTed to (seed 000, step 8). HTTPS only, the
 * server verified against the given CA (or the system's), an optional bearer
 * token, retries with back-off for what a restarting receiver answers. The
 * body is a secret: no message here ever contains it, nor the bearer token,
 * nor the URL's query or user info.
 */
import * as https from 'node:https';
import { InterruptedError, ValidationError, VnfmError } from '../errors.js';
import { sleep as sleepFor } from '../clock.js';

/** `additionalParams.vnfm_credentials_receiver`. */
export interface CredentialsReceiver {
  /** https:// URL the JSON is POSTed to. */
  url: string;
  /** PEM CA bundle that signed the receiver's certificate; the system CAs when absent. */
  caCert?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  bearerToken?: string;
}

/** The JSON body POSTed for each workload cluster. */
export interface CredentialsPayload {
  vnfInstanceId: string;
  clusterName: string;
  namespace: string;
  /** The whole kubeconfig, as the Secret holds it. */
  kubeconfig: string;
  server: string;
  caCert?: string;
  token?: string;
  clientCertificate?: string;
  clientKey?: string;
}

export interface SendOptions {
  signal: AbortSignal;
  /** Attempts after the first (default 4). */
  retries?: number;
  /** First back-off, doubled each attempt up to maxBackoffMs (defaults 1000 / 8000). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** One attempt is cut after this long without an answer (default 30 s). */
  attemptTimeoutMs?: number;
  /** Injected by tests so back-off never sleeps for real. */
  sleep?(ms: number, signal: AbortSignal): Promise<void>;
  /** Told before each retry, for progress. */
  onRetry?(message: string): void;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/** Checks the request's `vnfm_credentials_receiver`; `source`/`field` name it in errors. */
export function parseReceiver(source: string, field: string, value: unknown): CredentialsReceiver {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(source, field, 'must be an object {"url": "https://...", "caCert": "PEM", "bearerToken": "..."}');
  }
  const v = value as Record<string, unknown>;
  let url: URL | undefined;
  try {
    url = typeof v['url'] === 'string' ? new URL(v['url']) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'https:') {
    throw new ValidationError(source, `${field}.url`, 'must be an https:// URL', {
      hint: 'the kubeconfig is a secret: vnfm sends it over HTTPS only, e.g. "url": "https://receiver.example:8443/credentials"',
    });
  }
  for (const key of ['caCert', 'bearerToken'] as const) {
    if (v[key] !== undefined && (typeof v[key] !== 'string' || v[key] === '')) {
      throw new ValidationError(source, `${field}.${key}`, 'must be a non-empty string');
    }
  }
  if (typeof v['caCert'] === 'string' && !PEM_CERT.test(v['caCert'])) {
    throw new ValidationError(source, `${field}.caCert`, 'is not a PEM certificate', {
      hint: 'put the CA certificate in PEM form ("-----BEGIN CERTIFICATE-----\\n..."), newlines written as \\n in JSON',
    });
  }
  return {
    url: url.toString(),
    ...(typeof v['caCert'] === 'string' ? { caCert: v['caCert'] } : {}),
    ...(typeof v['bearerToken'] === 'string' ? { bearerToken: v['bearerToken'] } : {}),
  };
}

/** The URL as it may appear in messages: no user info, no query. */
export function displayUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

const RETRY_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ECONNABORTED', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

type Attempt = { ok: true } | { ok: false; retry: boolean; problem: string; hint: string };

function attempt(receiver: CredentialsReceiver, body: Buffer, timeoutMs: number, signal: AbortSignal): Promise<Attempt> {
  const url = new URL(receiver.url);
  return new Promise((resolve) => {
    const req = https.request(
      {
        method: 'POST',
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || 443,
        path: url.pathname + url.search,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(body.length),
          ...(receiver.bearerToken ? { Authorization: `Bearer ${receiver.bearerToken}` } : {}),
        },
        ...(receiver.caCert ? { ca: receiver.caCert } : {}),
        // A fresh connection each attempt: a receiver that restarted must not be reached on a dead socket.
        agent: false,
        signal,
      },
      (res) => {
        // The answer is drained unread: a receiver may echo what it was sent.
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve({ ok: true });
          const retry = status === 408 || status === 429 || status >= 500;
          resolve({
            ok: false,
            retry,
            problem: `answered ${status}${res.statusMessage ? ` ${res.statusMessage}` : ''}`,
            hint:
              status === 401 || status === 403
                ? 'check vnfm_credentials_receiver.bearerToken'
                : retry
                  ? 'check the receiver, then retry the operation (vnfm op-retry OP)'
                  : 'check vnfm_credentials_receiver.url and what the receiver expects',
          });
        });
        res.on('error', () => resolve({ ok: false, retry: true, problem: 'cut the connection while answering', hint: 'check the receiver' }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'error';
      if (TLS_CODES.has(code)) {
        return resolve({
          ok: false,
          retry: false,
          problem: `presented a TLS certificate that could not be verified (${code})`,
          hint: receiver.caCert
            ? "vnfm_credentials_receiver.caCert is not the CA that signed the receiver's certificate (or the certificate does not name this host)"
            : "give the CA that signed the receiver's certificate as vnfm_credentials_receiver.caCert",
        });
      }
      resolve({
        ok: false,
        retry: RETRY_CODES.has(code),
        problem:
          code === 'ECONNREFUSED'
            ? 'refused the connection (ECONNREFUSED)'
            : code === 'ETIMEDOUT'
              ? `did not answer within ${timeoutMs / 1000}s (ETIMEDOUT)`
              : `could not be reached (${code})`,
        hint: `check that the receiver runs and listens at ${url.host}, then retry the operation (vnfm op-retry OP)`,
      });
    });
    req.end(body);
  }).then((r) => (signal.aborted ? Promise.reject(signal.reason) : r)) as Promise<Attempt>;
}

/**
 * POSTs `payload` as JSON; resolves on a 2xx answer. Refusals, resets,
 * timeouts, 408/429/5xx are retried with back-off; a TLS failure or another
 * 4xx fails at once. Aborting `opts.signal` rejects with its reason.
 */
export async function sendCredentials(receiver: CredentialsReceiver, payload: CredentialsPayload, opts: SendOptions): Promise<void> {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const retries = opts.retries ?? 4;
  const sleep = opts.sleep ?? sleepFor;
  const where = displayUrl(receiver.url);
  for (let n = 0; ; n++) {
    if (opts.signal.aborted) throw abortReason(opts.signal);
    const r = await attempt(receiver, body, opts.attemptTimeoutMs ?? 30_000, opts.signal).catch((err: unknown) => {
      throw opts.signal.aborted ? abortReason(opts.signal) : err;
    });
    if (r.ok) return;
    if (!r.retry || n >= retries) {
      const tries = n > 0 ? ` (${n + 1} attempts)` : '';
      throw new VnfmError(`the credentials receiver at ${where} ${r.problem}${tries}; the credentials of cluster ${payload.namespace}/${payload.clusterName} were not delivered`, {
        hint: r.hint,
      });
    }
    const wait = Math.min((opts.backoffMs ?? 1000) * 2 ** n, opts.maxBackoffMs ?? 8000);
    opts.onRetry?.(`credentials receiver at ${where} ${r.problem}; trying again in ${wait / 1000}s`);
    await sleep(wait, opts.signal).catch(() => {
      throw abortReason(opts.signal);
    });
  }
}

function abortReason(signal: AbortSignal): Error {
  const r = signal.reason as unknown;
  return r instanceof Error ? r : new InterruptedError('interrupted');
}
