/**
 * The one module that imports @kubernetes/client-node. It builds the client
 * configuration in memory from a VIM's settings and secrets: the CA and
 * client keys never touch the disk.
 */
import * as k8s from '@kubernetes/client-node';
import { VimCheckError } from '../../errors.js';

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

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

export function makeKubeConfig(access: KubeAccess): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'vim',
        server: access.server,
        skipTLSVerify: !access.verifyTls,
        ...(access.caCert ? { caData: b64(access.caCert) } : {}),
      },
    ],
    users: [
      {
        name: 'vim',
        ...(access.bearerToken ? { token: access.bearerToken } : {}),
        ...(access.username ? { username: access.username, password: access.password } : {}),
        ...(access.clientCert ? { certData: b64(access.clientCert), keyData: b64(access.clientKey ?? '') } : {}),
      },
    ],
    contexts: [{ name: 'vim', cluster: 'vim', user: 'vim' }],
    currentContext: 'vim',
  });
  return kc;
}

/**
 * Checks that the API server answers with these credentials: its version,
 * then the namespace list (which needs an authenticated, authorised user).
 */
export async function checkKubernetesAccess(access: KubeAccess, opts: { timeoutMs?: number } = {}): Promise<KubeCheckResult> {
  const kc = makeKubeConfig(access);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const version = await withTimeout(kc.makeApiClient(k8s.VersionApi).getCode(), timeoutMs, access.server).catch((err) => {
    throw explain(err, access, 'read the server version');
  });
  const list = await withTimeout(kc.makeApiClient(k8s.CoreV1Api).listNamespace(), timeoutMs, access.server).catch((err) => {
    throw explain(err, access, 'list namespaces');
  });
  return {
    gitVersion: version.gitVersion,
    namespaces: list.items.map((ns) => ns.metadata?.name ?? '').filter(Boolean),
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, server: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer from ${server} within ${ms / 1000}s`), { code: 'ETIMEDOUT' })), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE', 'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO',
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
  if (err instanceof k8s.ApiException) {
    const credential = access.bearerToken ? 'bearer token' : access.clientCert ? 'client certificate' : 'username and password';
    if (err.code === 401) {
      return new VimCheckError(`the API server at ${server} rejected the ${credential} (401 Unauthorized)`, {
        hint: access.bearerToken ? 'check bearer_token: ServiceAccount tokens expire; make a new one with: kubectl create token SA -n NS' : 'check the credentials in the config file',
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
    return new VimCheckError(`the TLS certificate of ${server} could not be verified (${code})`, {
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
