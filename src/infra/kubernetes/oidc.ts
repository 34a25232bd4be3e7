/**
 * OIDC resource-owner password grant, as Tacker's Kubernetes VIM uses it:
 * the ID token it returns is the bearer token for the API server.
 */
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { VimCheckError } from '../../errors.js';

export interface OidcPasswordGrant {
  tokenUrl: string;
  username: string;
  password: string;
  clientId: string;
  clientSecret?: string;
  caCert?: string;
  verifyTls: boolean;
}

export async function fetchOidcIdToken(grant: OidcPasswordGrant, opts: { timeoutMs?: number } = {}): Promise<string> {
  const body = new URLSearchParams({
    grant_type: 'password',
    scope: 'openid',
    username: grant.username,
    password: grant.password,
    client_id: grant.clientId,
    ...(grant.clientSecret ? { client_secret: grant.clientSecret } : {}),
  }).toString();
  const url = new URL(grant.tokenUrl);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'application/json' },
        ...(url.protocol === 'https:' ? { ca: grant.caCert, rejectUnauthorized: grant.verifyTls } : {}),
        timeout: opts.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  }).catch((err: NodeJS.ErrnoException) => {
    throw new VimCheckError(`cannot reach the OIDC token endpoint ${grant.tokenUrl} (${err.code ?? err.message})`, {
      hint: 'check oidc_token_url, and ssl_ca_cert if the endpoint uses a private CA',
    });
  });
  if (status === 400 || status === 401) {
    throw new VimCheckError(`the OIDC provider at ${grant.tokenUrl} rejected user "${grant.username}" or client "${grant.clientId}" (${status})`, {
      hint: 'check username, password, client_id and client_secret',
    });
  }
  let parsed: { id_token?: unknown };
  try {
    parsed = JSON.parse(text) as { id_token?: unknown };
  } catch {
    parsed = {};
  }
  if (status !== 200 || typeof parsed.id_token !== 'string') {
    throw new VimCheckError(`the OIDC provider at ${grant.tokenUrl} returned no id_token (HTTP ${status})`, {
      hint: 'the client must allow the password grant and the openid scope',
    });
  }
  return parsed.id_token;
}
