/**
 * Requests to one OpenStack service (Heat, Glance) on a Keystone token: the
 * token (one per VIM, KeystoneTokens) is cached and issued again before it
 * expires or after a 401 (the request is then sent once more), and the
 * service's endpoint comes from the token's catalog. Every request goes
 * through openstack-http.ts.
 */
import { VimCheckError } from '../../errors.js';
import { findEndpoint, issueToken, type KeystoneCredentials, type KeystoneToken } from './keystone.js';
import { sendHttp, ServiceUnreachableError, type HttpAnswer, type HttpMethod, type HttpUpload } from './openstack-http.js';

/** Which service of the catalog, and what to tell the operator about it. */
export interface ServiceDescription {
  /** The catalog's service type: `orchestration`, `image`. */
  type: string;
  /** For messages: `Heat`, `Glance`. */
  name: string;
  /** What to check when the service cannot be reached (its origin is appended). */
  reachHint: string;
  /** What to do when the catalog has no endpoint of the type. */
  missingHint: string;
}

export interface ServiceConnectionOptions {
  interface?: 'public' | 'internal' | 'admin';
  /** The VIM's region_name; the first endpoint when absent. */
  region?: string;
  /** Per request (an upload: the longest time without progress). */
  requestTimeoutMs?: number;
  /** Re-issue a token this long before it expires. */
  tokenMarginMs?: number;
  /** The VIM's token, shared with its other services' connections; one of the connection's own when absent. */
  tokens?: KeystoneTokens;
}

/** A token this close to its expiry is not used even when Keystone cannot give a new one. */
const TOKEN_FLOOR_MS = 5_000;

/**
 * One VIM's Keystone token, shared by its services' connections: issued
 * again before it expires (at half its life for short-lived tokens) or when
 * a service refused it; while Keystone does not answer, the current one is
 * used as long as it has life left.
 */
export class KeystoneTokens {
  private token: KeystoneToken | undefined;
  private readonly margin: number;
  private tokenMargin: number;

  constructor(
    private readonly creds: KeystoneCredentials,
    opts: Pick<ServiceConnectionOptions, 'tokenMarginMs'>,
    private readonly now: () => number,
  ) {
    this.margin = opts.tokenMarginMs ?? 60_000;
    this.tokenMargin = this.margin;
  }

  async get(signal: AbortSignal | undefined, fresh: boolean): Promise<KeystoneToken> {
    if (!fresh && this.token && this.token.expiresAt.getTime() - this.tokenMargin > this.now()) return this.token;
    const asked = this.now();
    let issued: KeystoneToken;
    try {
      issued = await issueToken(this.creds, signal ? { signal } : {});
    } catch (err) {
      // Keystone not answering while the current token still has life left: go on with it.
      if (!fresh && this.token && err instanceof ServiceUnreachableError && this.token.expiresAt.getTime() - TOKEN_FLOOR_MS > this.now()) return this.token;
      throw err;
    }
    this.token = issued;
    // A cloud with short-lived tokens: renew at half their life, not on every request.
    this.tokenMargin = Math.min(this.margin, Math.max(0, (issued.expiresAt.getTime() - asked) / 2));
    return issued;
  }
}

export class ServiceConnection {
  /** The endpoint the catalog of `token` gives (without a trailing '/'; null when it has none). */
  private endpoint: { token: KeystoneToken; base: string | null } | undefined;

  constructor(
    private readonly creds: KeystoneCredentials,
    private readonly service: ServiceDescription,
    private readonly opts: ServiceConnectionOptions,
    private readonly tokens: KeystoneTokens,
  ) {}

  /** A token and the service's endpoint; VimCheckError when the catalog has no endpoint of the service. */
  async session(signal: AbortSignal | undefined, fresh: boolean): Promise<{ token: KeystoneToken; base: string }> {
    const { token, base } = await this.current(signal, fresh);
    if (base === null) {
      const where = this.opts.region ? ` in region "${this.opts.region}"` : '';
      throw new VimCheckError(`the Keystone catalog has no ${this.opts.interface ?? 'public'} ${this.service.type} (${this.service.name}) endpoint${where}`, {
        hint: this.service.missingHint,
      });
    }
    return { token, base };
  }

  /** Whether the catalog has an endpoint of the service (a token is issued to know). */
  async available(signal?: AbortSignal): Promise<boolean> {
    return (await this.current(signal, false)).base !== null;
  }

  private async current(signal: AbortSignal | undefined, fresh: boolean): Promise<{ token: KeystoneToken; base: string | null }> {
    const token = await this.tokens.get(signal, fresh);
    if (this.endpoint?.token !== token) {
      const url = findEndpoint(token, this.service.type, { interface: this.opts.interface ?? 'public', ...(this.opts.region ? { region: this.opts.region } : {}) });
      this.endpoint = { token, base: url === undefined ? null : url.replace(/\/+$/, '') };
    }
    return this.endpoint;
  }

  /**
   * One request to `<endpoint><path>`: `body` as JSON, or the stream
   * `upload` opens (again for the one resend a 401 brings), with its own
   * timeout when given.
   */
  async call(
    method: HttpMethod,
    path: string,
    body: unknown,
    signal: AbortSignal | undefined,
    stream?: { upload: () => Promise<HttpUpload>; timeoutMs?: number },
  ): Promise<HttpAnswer> {
    let s = await this.session(signal, false);
    const timeoutMs = stream?.timeoutMs ?? this.opts.requestTimeoutMs;
    const send = async () =>
      sendHttp(this.creds, this.label(s.base), {
        method,
        url: s.base + path,
        ...(stream ? { upload: await stream.upload() } : { body }),
        headers: { 'x-auth-token': s.token.token },
        ...(signal ? { signal } : {}),
        ...(timeoutMs ? { timeoutMs } : {}),
      });
    let res = await send();
    if (res.status === 401) {
      // Revoked or expired early (Keystone restarted with new keys): one new token, one more try.
      s = await this.session(signal, true);
      res = await send();
    }
    return res;
  }

  private label(url: string) {
    return { name: this.service.name, reachHint: `${this.service.reachHint}: ${new URL(url).origin}` };
  }
}

/** A connection to `service` on the VIM's shared token (`opts.tokens`), or on a token of its own. */
export function serviceConnection(creds: KeystoneCredentials, service: ServiceDescription, opts: ServiceConnectionOptions, now: () => number): ServiceConnection {
  return new ServiceConnection(creds, service, opts, opts.tokens ?? new KeystoneTokens(creds, opts, now));
}
