/**
 * A VIM's access to its API server (KubeAccess) and the check that it works.
 * The check and the driver go over kube-wire.ts: plain HTTPS, with the TLS
 * options and Authorization header a kubeconfig gives.
 */
import { createKubeTransport, type KubeTransport } from './kube-wire.js';
import { TlsVerifyError, VimCheckError } from '../../errors.js';

/** Everything needed to talk to one API server. */
export interface KubeAccess {
  server: string;
  verifyTls: boolean;
  /** PEM; absent means the system's trusted CAs. */
  caCert?: string;
  bearerToken?: string;
  username?: string;
  password?: string;
  clientCert?: string;
  clientKey?: string;
}

export interface KubeCheckResult {
  gitVersion: string;
  namespaces: string[];
}

/**
 * Checks that the API server answers with these credentials: its version,
 * then the namespace list (which needs an authenticated, authorised user).
 * Over the driver's own wire (kube-wire.ts), so that checking a VIM before
 * an operation does not load @kubernetes/client-node.
 */
export async function checkKubernetesAccess(access: KubeAccess, opts: { timeoutMs?: number; transport?: KubeTransport } = {}): Promise<KubeCheckResult> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  // A transport given is the caller's to close (a driver goes on over the connection the check opened).
  const transport = opts.transport ?? createKubeTransport(access);
  const ask = async <T>(path: string, what: string): Promise<T> => {
    const answer = await withTimeout(transport.request({ method: 'GET', path, idleTimeoutMs: timeoutMs }), timeoutMs, access.server).catch((err: unknown) => {
      throw explain(err, access, what);
    });
    if (answer.status < 200 || answer.status >= 300) throw explain(new HttpStatusError(answer.status), access, what);
    return answer.body as T;
  };
  try {
    const version = await ask<{ gitVersion?: string }>('/version', 'read the server version');
    const list = await ask<{ items?: Array<{ metadata?: { name?: string } }> }>('/api/v1/namespaces', 'list namespaces');
    return {
      gitVersion: version?.gitVersion ?? '',
      namespaces: (list?.items ?? []).map((ns) => ns.metadata?.name ?? '').filter(Boolean),
    };
  } finally {
    if (!opts.transport) transport.close();
  }
}

/** An answer outside 2xx from the API server. */
class HttpStatusError extends Error {
  constructor(readonly code: number) {
    super(`HTTP ${code}`);
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, server: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer from ${server} within ${ms / 1000}s`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

/** The innermost `code` in an error's cause chain (fetch wraps socket errors). */
function errorCode(err: unknown): string | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.code === 'string') return e.code;
  }
  return undefined;
}

function explain(err: unknown, access: KubeAccess, what: string): VimCheckError {
  const server = access.server;
  if (err instanceof HttpStatusError) {
    const credential = access.bearerToken ? 'bearer token' : access.clientCert ? 'client certificate' : 'username and password';
    if (err.code === 401) {
      return new VimCheckError(`the API server at ${server} rejected the ${credential} (401 Unauthorized)`, {
        hint: access.bearerToken
          ? 'check bearer_token: ServiceAccount tokens expire; make a new one with: kubectl create token SA -n NS'
          : 'check the credentials in the config file',
      });
    }
    if (err.code === 403) {
      return new VimCheckError(`the API server at ${server} accepted the ${credential} but does not allow it to ${what} (403 Forbidden)`, {
        hint: 'bind the user or ServiceAccount to a role that can list namespaces and manage workloads',
      });
    }
    return new VimCheckError(`the API server at ${server} answered ${err.code} when asked to ${what}`, { cause: err });
  }
  const code = errorCode(err);
  if (code && TLS_CODES.has(code)) {
    return new TlsVerifyError(`the TLS certificate of ${server} could not be verified (${code})`, {
      hint: access.caCert
        ? 'ssl_ca_cert is not the CA that signed the API server certificate: use the cluster CA (certificate-authority-data in its kubeconfig)'
        : 'give the cluster CA as ssl_ca_cert, or ssl_ca_cert: None to skip verification',
    });
  }
  if (code === 'ETIMEDOUT') return new VimCheckError(`no answer from ${server}`, { hint: 'check auth_url and that the cluster is reachable from here' });
  return new VimCheckError(`cannot reach ${server}${code ? ` (${code})` : ''}: ${(err as Error).message ?? String(err)}`, {
    hint: 'check auth_url and that the API server is running; skip this check with --no-check',
  });
}

export { createKubeTransport, type KubeHttpRequest, type KubeHttpResponse, type KubeTransport } from './kube-wire.js';
