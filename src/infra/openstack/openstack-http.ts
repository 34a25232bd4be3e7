/**
 * The one place that sends HTTP to OpenStack services (Keystone, Heat,
 * Glance): one request per fresh connection, TLS with the VIM's CA in
 * memory, a size cap, a timeout, cancellation, a streamed body for an image
 * upload, and network and TLS failures turned into messages that say which
 * setting to check.
 */
import { X509Certificate } from 'node:crypto';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';
import { VimCheckError } from '../../errors.js';

/** How to verify the servers of one VIM. */
export interface TlsSettings {
  /** PEM bundle to verify the server with, instead of the system's CAs. */
  caCert?: string;
  /** `false` only when the operator asked for an insecure connection explicitly. */
  verifyTls: boolean;
}

/** Which service a request goes to, for messages. */
export interface ServiceLabel {
  /** `Keystone`, `Heat`. */
  name: string;
  /** What to check when the service cannot be reached. */
  reachHint: string;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpCall {
  method: HttpMethod;
  url: string;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Aborts the request; the signal's reason is thrown as is. */
  signal?: AbortSignal;
  /** Per request; default 30 s. For an upload, the longest time without progress. */
  timeoutMs?: number;
  /** A body streamed as is (an image's bytes) instead of `body` as JSON. */
  upload?: HttpUpload;
}

/** A request body too large to hold in memory. */
export interface HttpUpload {
  data: Readable;
  contentType: string;
  /** Sent as content-length when known; else the body is chunked. */
  length?: number;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** A catalog or a stack's resource list is at most a few MiB. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export const KEYSTONE_LABEL: ServiceLabel = {
  name: 'Keystone',
  reachHint: 'check auth_url (host and port), and that Keystone runs and this host may connect to it',
};

const TLS_HINT = 'give the CA certificate that signed the server certificate as ssl_ca_cert (PEM), ' + 'or set cert_verify: False to skip verification (insecure)';

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Checked here rather than left to TLS: Node ignores a CA that is not PEM,
 * and the handshake would then fail with a misleading "self-signed" error.
 */
function checkedCa(caCert: string): string {
  const blocks = caCert.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  const valid = blocks.every((block) => {
    try {
      new X509Certificate(block);
      return true;
    } catch {
      return false;
    }
  });
  if (blocks.length === 0 || !valid) {
    throw new VimCheckError('the CA certificate (ssl_ca_cert) is not a valid PEM certificate', {
      hint: 'give the PEM text, -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----',
    });
  }
  return blocks.join('\n');
}

/** Node's codes for a certificate that could not be verified, as opposed to a network failure. */
const CERT_ERROR_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Thrown when a service could not be reached at all: worth retrying while waiting. */
export class ServiceUnreachableError extends VimCheckError {}

/**
 * One request on a fresh connection (Keystone behind uwsgi's plain HTTP
 * socket closes every connection after one answer). Never follows redirects.
 */
export function sendHttp(tls: TlsSettings, service: ServiceLabel, call: HttpCall): Promise<HttpAnswer> {
  const target = new URL(call.url);
  const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
  const isHttps = target.protocol === 'https:';
  const options: RequestOptions & { ca?: string; rejectUnauthorized?: boolean } = {
    method: call.method,
    agent: false,
    headers: {
      accept: 'application/json',
      ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
      ...(call.upload ? { 'content-type': call.upload.contentType, ...(call.upload.length !== undefined ? { 'content-length': String(call.upload.length) } : {}) } : {}),
      ...call.headers,
    },
  };
  if (isHttps) {
    options.rejectUnauthorized = tls.verifyTls;
    if (tls.caCert && tls.verifyTls) options.ca = checkedCa(tls.caCert);
  }
  const timeoutMs = call.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const origin = target.origin;
  const signal = call.signal;
  const upload = call.upload;

  return new Promise<HttpAnswer>((resolve, reject) => {
    if (signal?.aborted) {
      upload?.data.destroy();
      reject(signal.reason);
      return;
    }
    let settled = false;
    const finish = (err: unknown, answer?: HttpAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      // What was not sent of an upload is not read any further.
      if (upload && !upload.data.readableEnded) upload.data.destroy();
      if (err !== undefined) reject(err);
      else resolve(answer as HttpAnswer);
    };
    const req = (isHttps ? httpsRequest : httpRequest)(target, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          req.destroy();
          finish(new VimCheckError(`${origin} sent more than ${MAX_RESPONSE_BYTES} bytes: not a ${service.name} answer`, { hint: service.reachHint }));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => finish(networkError(origin, err, 'http', service)));
    });
    const timedOut = () => {
      req.destroy();
      finish(
        new ServiceUnreachableError(`${origin} could not be reached: ${upload ? 'no progress' : 'no answer'} within ${Math.round(timeoutMs / 1000)} s`, {
          hint: service.reachHint,
        }),
      );
    };
    // An upload of gigabytes takes as long as it takes: only a stall ends it.
    const timer = upload ? undefined : setTimeout(timedOut, timeoutMs);
    if (upload) req.setTimeout(timeoutMs, timedOut);
    const onAbort = () => {
      req.destroy();
      finish(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    // A failure between TCP connect and the end of the TLS handshake is a TLS
    // problem even when it shows as a reset (a plain-HTTP server hangs up).
    let phase: Phase = 'connect';
    req.on('socket', (socket) => {
      socket.once('connect', () => (phase = isHttps ? 'handshake' : 'http'));
      socket.once('secureConnect', () => (phase = 'http'));
    });
    req.on('error', (err) => finish(networkError(origin, err, phase, service)));
    if (!upload) {
      req.end(payload);
      return;
    }
    upload.data.once('error', (err) => {
      req.destroy();
      finish(err);
    });
    upload.data.pipe(req);
  });
}

type Phase = 'connect' | 'handshake' | 'http';

function networkError(origin: string, err: Error & { code?: string }, phase: Phase, service: ServiceLabel): VimCheckError {
  const code = err.code ?? '';
  if (CERT_ERROR_CODES.has(code)) {
    return new VimCheckError(`the certificate of ${origin} could not be verified (${code}: ${err.message})`, {
      hint: code === 'ERR_TLS_CERT_ALTNAME_INVALID' ? `use the host name the certificate was issued for, or ${TLS_HINT}` : TLS_HINT,
      cause: err,
    });
  }
  if (phase === 'handshake' || code.startsWith('ERR_SSL_') || /SSL routines|wrong version number/i.test(err.message)) {
    return new VimCheckError(`the TLS handshake with ${origin} failed (${code || err.message})`, {
      hint: `check the scheme of the URL: http:// for a plain-HTTP ${service.name}, https:// for TLS`,
      cause: err,
    });
  }
  return new ServiceUnreachableError(`${origin} could not be reached (${code || err.message})`, { hint: service.reachHint, cause: err });
}
