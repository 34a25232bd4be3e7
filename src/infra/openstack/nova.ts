/**
 * Nova's compute API, on a Keystone session (service-connection.ts), for
 * what Heat does not show: a server's console log (the server action
 * `os-getConsoleOutput`, as `openstack console log show` asks for it).
 */
import { NotFoundError, VnfmError } from '../../errors.js';
import type { KeystoneCredentials } from './keystone.js';
import { parseJson, type HttpAnswer } from './openstack-http.js';
import { serviceConnection, type ServiceConnectionOptions, type ServiceDescription } from './service-connection.js';

const NOVA: ServiceDescription = {
  type: 'compute',
  name: 'Nova',
  reachHint: 'check that Nova runs and this host may connect to it (its URL is the compute endpoint of the Keystone catalog)',
  missingHint: "a server's console log is read from Nova: register Nova's compute endpoint in this cloud, or check region_name in the VIM",
};

/** Why Nova gave no console log: the server is gone, has no console, is not running, or its driver cannot read one. */
export class NovaConsoleError extends VnfmError {
  constructor(
    message: string,
    readonly status: number,
    details: { hint?: string } = {},
  ) {
    super(message, details);
  }
}

export interface NovaSession {
  /**
   * The console log of server `id`: its last `length` lines (all when
   * absent). NotFoundError when Nova has no such server; NovaConsoleError
   * when Nova has no log to give (no console, a server not running, a
   * hypervisor driver without it).
   */
  consoleOutput(id: string, length: number | undefined, signal?: AbortSignal): Promise<string>;
}

/** Nova's fault body: `{"itemNotFound": {"message": "…", "code": 404}}` and the like. */
function novaSaid(res: HttpAnswer): string {
  const body = parseJson(res.body);
  if (body && typeof body === 'object') {
    for (const v of Object.values(body as Record<string, unknown>)) {
      const m = v && typeof v === 'object' ? (v as { message?: unknown }).message : undefined;
      if (typeof m === 'string' && m.trim()) return m.trim();
    }
  }
  return (
    res.body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 300) || `HTTP ${res.status}`
  );
}

export function createNovaSession(creds: KeystoneCredentials, opts: ServiceConnectionOptions & { now?(): number } = {}): NovaSession {
  const conn = serviceConnection(creds, NOVA, opts, opts.now ?? Date.now);
  return {
    async consoleOutput(id, length, signal) {
      const res = await conn.call('POST', `/servers/${encodeURIComponent(id)}/action`, { 'os-getConsoleOutput': { length: length ?? null } }, signal);
      if (res.status === 200) {
        const output = (parseJson(res.body) as { output?: unknown } | undefined)?.output;
        return typeof output === 'string' ? output : '';
      }
      const said = novaSaid(res);
      if (res.status === 404 && /could not be found/i.test(said)) {
        throw new NotFoundError(`Nova has no server ${id}: ${said}`, {
          hint: 'the instance records servers Heat has replaced or removed since: vnfm vnf-sync VNF records the ones it has now',
        });
      }
      if (res.status === 404) {
        throw new NovaConsoleError(`Nova has no console log of server ${id}: ${said}`, res.status, { hint: "the server's hypervisor keeps no console log for it" });
      }
      if (res.status === 409) {
        throw new NovaConsoleError(`Nova cannot read the console log of server ${id} now: ${said}`, res.status, {
          hint: 'a server has a console log while it runs (ACTIVE): start it, or wait for its build, resize or migration to end',
        });
      }
      if (res.status === 501) {
        throw new NovaConsoleError(`Nova does not read console logs on this cloud: ${said}`, res.status, {
          hint: "the compute hosts' hypervisor driver has no console log (the VIM's operator may enable a serial console log)",
        });
      }
      if (res.status === 403) {
        throw new NovaConsoleError(`Nova refused the VIM user the console log of server ${id}: ${said}`, res.status, {
          hint: "the cloud's policy (os_compute_api:os-console-output) does not give this role the console log: ask the cloud's operator",
        });
      }
      throw new NovaConsoleError(`Nova answered HTTP ${res.status} to the console log of server ${id}: ${said}`, res.status, {
        ...(res.status >= 500 ? { hint: 'Nova failed; its log says why. Try again once it is healthy' } : {}),
      });
    },
  };
}
