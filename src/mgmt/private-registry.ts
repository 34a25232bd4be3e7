/**
 * The `private-registry-mgmt` built-in driver (seed 004): a Docker private
 * registry on the VNF's server. At `instantiate_end` and `heal_end` it logs
 * in over SSH on the server's connection point `ssh_cp_name`, installs
 * Docker from the distribution's packages when it is missing, loads the
 * registry image from the package (`image_path`, a `docker save` tar) or
 * pulls it, runs the `private_registry` container with its data on the
 * server's /var/lib/private-registry, and waits until it answers `/v2/`.
 * Heal does the same on the new server with the parameters instantiate
 * recorded. `terminate_end` forgets the pinned host keys of the servers.
 */
import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { sleep } from '../clock.js';
import { ValidationError, VnfmError } from '../errors.js';
import type { HealVnfRequest, LcmRequest, VnfInstance } from '../model/lcm.js';
import { vnfcsOf } from '../model/vnfcs.js';
import type { BuiltinDriver, ManagementServices } from './builtin.js';
import type { HookContext, HookOutcome, PrepareInput } from './index.js';
import { newNodes, requireNodes, type Node } from './nodes.js';
import { additionalParams, isObject } from './request.js';
import { openSealed, redactSecrets, sealedStrings } from './sealed.js';
import { forEachNode, NodesFailedError, shellQuote, type SshSession, type SshTarget } from './ssh/index.js';

import {
  DEFAULT_REGISTRY_PORT,
  DEFAULT_WAIT,
  FIELD,
  PROXY_FIELDS,
  PRIVATE_REGISTRY_PARAM,
  REGISTRY_CONTAINER,
  REGISTRY_DATA_DIR,
  REGISTRY_IMAGE,
  parsePrivateRegistryParams,
  sealParams,
  type OpenedParams,
  type PrivateRegistryParams,
  type RegistryProxy,
  type RegistryWait,
} from './private-registry-params.js';

export {
  DEFAULT_REGISTRY_PORT,
  PRIVATE_REGISTRY_PARAM,
  REGISTRY_CONTAINER,
  REGISTRY_DATA_DIR,
  REGISTRY_IMAGE,
  parsePrivateRegistryParams,
  type PrivateRegistryParams,
  type RegistryProxy,
  type RegistryWait,
};

const NAME = 'private-registry-mgmt';
/** What the driver keeps on the instance (`metadata.mgmt["private-registry-mgmt"]`): the parameters, secrets sealed. */
export type PrivateRegistryRecord = PrivateRegistryParams;

function recordOf(instance: VnfInstance | undefined): PrivateRegistryRecord | undefined {
  const rec = instance?.instantiatedVnfInfo?.metadata.mgmt?.[NAME];
  return isObject(rec) ? (rec as unknown as PrivateRegistryRecord) : undefined;
}

/** The proxy environment for apt-get and docker pull (both spellings, as tools differ). */
function proxyEnv(p: OpenedParams): Record<string, string> {
  const env: Record<string, string> = {};
  const proxy = p.proxy ?? {};
  for (const k of PROXY_FIELDS) {
    const v = proxy[k];
    if (typeof v === 'string' && v !== '') {
      env[k] = v;
      env[k.toUpperCase()] = v;
    }
  }
  return env;
}

/** Where a node is told about: the server's label in messages. */
const labelOf = (n: Node): string => `${n.vduId} (${n.address})`;

export interface PrivateRegistryOptions {
  /** The wait for /v2/ after the container starts; tests shorten it. */
  wait?: Partial<RegistryWait>;
}

async function openParams(ctx: HookContext, params: PrivateRegistryParams, open: ManagementServices['open']): Promise<{ opened: OpenedParams; secrets: string[] }> {
  let opened: OpenedParams;
  try {
    opened = await openSealed(params as OpenedParams, open);
  } catch (err) {
    throw new VnfmError(`vnf instance ${ctx.vnfInstanceId}: the sealed SSH credentials of ${PRIVATE_REGISTRY_PARAM} cannot be opened with the current keyring`, {
      hint: `the master key they were sealed with is gone: give ${PRIVATE_REGISTRY_PARAM} again in a heal request`,
      cause: err,
    });
  }
  const secrets = sealedStrings(params, opened);
  // A proxy password also appears on its own (URL-decoded) in tools' output.
  for (const v of [opened.proxy?.http_proxy, opened.proxy?.https_proxy]) {
    if (!v) continue;
    try {
      const pw = decodeURIComponent(new URL(v).password);
      if (pw) secrets.push(pw, new URL(v).password);
    } catch {
      // not a URL: already refused at prepare
    }
  }
  return { opened, secrets: [...new Set(secrets.filter(Boolean))] };
}

async function installRegistry(ctx: HookContext, s: SshSession, label: string, p: OpenedParams, image: string | undefined, wait: RegistryWait): Promise<void> {
  const env = proxyEnv(p);
  const port = p.port_no;
  const say = (m: string) => ctx.report(`${label}: ${m}`);

  if ((await s.exec('command -v docker', { allowFailure: true })).code !== 0) {
    say('Docker is not installed: installing docker.io from the distribution');
    const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
    await s.exec('apt-get update', { sudo: true, env: aptEnv, timeoutMs: 900_000 });
    await s.exec('apt-get install -y docker.io', { sudo: true, env: aptEnv, timeoutMs: 1_800_000 });
    await s.exec('command -v docker');
  }

  const existing = await containerState(s, port);
  if (existing === 'running') {
    say(`the registry container ${REGISTRY_CONTAINER} already runs on port ${port}: kept`);
  } else {
    if (image) {
      const remote = `/tmp/vnfm-private-registry-${randomUUID()}.tar`;
      say(`uploading ${p.image_path} to ${remote}`);
      await s.upload(image, remote, { mode: 0o600 });
      try {
        await s.exec(`docker load -i ${shellQuote(remote)}`, { sudo: true, timeoutMs: 1_800_000 });
      } finally {
        await s.exec(`rm -f ${shellQuote(remote)}`, { sudo: true, allowFailure: true });
      }
    } else {
      say(`pulling ${REGISTRY_IMAGE}`);
      await s.exec(`docker pull ${REGISTRY_IMAGE}`, { sudo: true, env, timeoutMs: 1_800_000 });
    }
    if (existing !== 'absent') {
      say(`removing the container ${REGISTRY_CONTAINER} left by an earlier attempt (${existing})`);
      await s.exec(`docker rm -f ${REGISTRY_CONTAINER}`, { sudo: true });
    }
    say(`starting the registry on port ${port}`);
    await s.exec(`docker run -d -p ${port}:5000 -v ${REGISTRY_DATA_DIR}:/var/lib/registry --restart=always --name ${REGISTRY_CONTAINER} ${REGISTRY_IMAGE}`, { sudo: true });
  }
  await waitForRegistry(ctx, s, label, port, wait);
  say(`the registry answers on port ${port}`);
}

/**
 * The `private_registry` container on the node: 'absent', 'running' (with
 * the port mapping asked for), or why it cannot be kept as it is.
 */
async function containerState(s: SshSession, port: number): Promise<'absent' | 'running' | string> {
  const r = await s.exec(`docker inspect --type container ${REGISTRY_CONTAINER}`, { sudo: true, allowFailure: true });
  if (r.code !== 0) return 'absent';
  let info: { State?: { Running?: boolean }; HostConfig?: { PortBindings?: Record<string, Array<{ HostPort?: string }> | null> } } | undefined;
  try {
    const parsed = JSON.parse(r.stdout) as unknown;
    info = Array.isArray(parsed) ? parsed[0] : undefined;
  } catch {
    return 'its state is unreadable';
  }
  if (!info) return 'absent';
  if (info.State?.Running !== true) return 'not running';
  const bound = (info.HostConfig?.PortBindings?.['5000/tcp'] ?? []).map((b) => b.HostPort);
  if (!bound.includes(String(port))) return `published on ${bound.length ? bound.join(', ') : 'no port'}, not ${port}`;
  return 'running';
}

async function waitForRegistry(ctx: HookContext, s: SshSession, label: string, port: number, wait: RegistryWait): Promise<void> {
  const cmd = `curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/v2/`;
  const deadline = Date.now() + wait.totalMs;
  let pause = wait.minMs;
  let last = '';
  for (;;) {
    const r = await s.exec(cmd, { allowFailure: true, timeoutMs: 30_000 });
    const status = r.stdout.trim();
    if (status === '200' || status === '401') return;
    last = `exit ${r.code}, HTTP status ${status || 'none'}${r.stderr.trim() ? `, ${r.stderr.trim()}` : ''}`;
    if (Date.now() + pause > deadline) break;
    await sleep(pause, ctx.signal).catch(() => {
      throw ctx.signal.reason ?? new VnfmError('interrupted');
    });
    pause = Math.min(pause * 2, wait.maxMs);
  }
  throw new VnfmError(`${label}: the registry does not answer on port ${port}: \`${cmd}\` gave ${last} for ${Math.round(wait.totalMs / 1000)} s`, {
    hint: `look at the container on the server (sudo docker logs ${REGISTRY_CONTAINER}) and at vnfm op-log; vnfm op-retry runs the hook again`,
  });
}

export function createPrivateRegistryDriver(services: ManagementServices, options: PrivateRegistryOptions = {}): BuiltinDriver {
  const wait: RegistryWait = { ...DEFAULT_WAIT, ...options.wait };

  async function prepare(input: PrepareInput): Promise<LcmRequest> {
    const ap = additionalParams(input.request);
    const raw = ap[PRIVATE_REGISTRY_PARAM];
    if (raw === undefined) {
      if (input.operation === 'INSTANTIATE') {
        throw new ValidationError(input.source, FIELD, 'is required: the VNFD runs the private-registry-mgmt driver at instantiate_end', {
          hint: '"additionalParams": {"private_registry_installation_param": {"ssh_cp_name": "CP1", "ssh_username": "ubuntu", "ssh_password": "..."}}',
        });
      }
      // Heal uses what instantiate recorded; other operations need nothing.
      return input.request;
    }
    const params = parsePrivateRegistryParams(input.source, raw, input.packageDir);
    // Recorded on the occurrence for retry and on the instance for heal: the database alone never reveals a secret.
    const sealed = await sealParams(params, services.seal);
    return { ...input.request, additionalParams: { ...ap, [PRIVATE_REGISTRY_PARAM]: sealed } } as LcmRequest;
  }

  /** The recorded parameters this hook uses: the request's (instantiate, or a heal that gives its own), else instantiate's. */
  function settingsOf(ctx: HookContext): PrivateRegistryParams {
    const own = additionalParams(ctx.request)[PRIVATE_REGISTRY_PARAM];
    if (isObject(own)) return own as unknown as PrivateRegistryParams;
    const recorded = recordOf(ctx.instance);
    if (recorded) return recorded;
    throw new VnfmError(`vnf instance ${ctx.vnfInstanceId}: no ${PRIVATE_REGISTRY_PARAM} was recorded at instantiate, and the ${ctx.operation.toLowerCase()} request gives none`, {
      hint: `give "additionalParams": {"${PRIVATE_REGISTRY_PARAM}": {...}} in the request (the same parameters as for instantiate)`,
    });
  }

  /** The servers the hook configures. */
  function targetsOf(ctx: HookContext, cp: string): Node[] {
    const field = `${FIELD}.ssh_cp_name`;
    const after = ctx.result ?? ctx.instance;
    if (ctx.hook !== 'heal_end') return requireNodes(after, cp, field);
    const fresh = newNodes(ctx.instance, after, cp);
    if (fresh.length > 0) return fresh;
    // The VIM kept the servers' ids: the healed VNFCs are the ones the request names (all when it names none).
    const named = (ctx.request as HealVnfRequest | undefined)?.vnfcInstanceId ?? [];
    const all = requireNodes(after, cp, field);
    return named.length ? all.filter((n) => named.includes(n.vnfcId)) : all;
  }

  async function configure(ctx: HookContext): Promise<HookOutcome> {
    const params = settingsOf(ctx);
    const nodes = targetsOf(ctx, params.ssh_cp_name);
    if (nodes.length === 0) {
      ctx.report(`${ctx.hook}: no server to configure on connection point ${params.ssh_cp_name}`);
      return { record: { [NAME]: params } };
    }
    const ssh = services.ssh;
    const hostKeys = services.hostKeys;
    if (!ssh || !hostKeys) throw new VnfmError('the private-registry-mgmt driver needs SSH, which this vnfm was started without');
    const { opened, secrets } = await openParams(ctx, params, services.open);
    const image = params.image_path ? resolve(ctx.packageDir, params.image_path) : undefined;
    if (image && params.image_path) {
      let ok = false;
      try {
        ok = statSync(image).isFile();
      } catch {
        ok = false;
      }
      if (!ok)
        throw new VnfmError(`${FIELD}.image_path: ${params.image_path} is not a file of the instance's VNF package`, {
          hint: 'give a heal request with an image_path of the package',
        });
    }
    const redact = (s: string) => redactSecrets(s, secrets);

    const one = async (node: Node): Promise<void> => {
      const target: SshTarget = {
        host: node.address,
        username: opened.ssh_username,
        ...(opened.ssh_password ? { password: opened.ssh_password } : {}),
        ...(opened.ssh_private_key ? { privateKey: opened.ssh_private_key } : {}),
        serverId: node.serverId,
        label: labelOf(node),
      };
      ctx.report(`${target.label}: connecting as ${opened.ssh_username}`);
      const session = await ssh(target, {
        hostKeys,
        acceptHostKeys: ctx.acceptHostKeys,
        ...(services.sshRetry ? { retry: services.sshRetry } : {}),
        signal: ctx.signal,
        log: (line) => ctx.log(redact(line)),
        report: (m) => ctx.report(redact(m)),
        secrets,
      });
      try {
        await installRegistry(ctx, session, target.label, opened, image, wait);
      } finally {
        session.close();
      }
    };
    try {
      await forEachNode(nodes, services.sshConcurrency ?? 10, labelOf, one);
    } catch (err) {
      // One server (the usual registry): its own error already names it.
      if (err instanceof NodesFailedError && err.total === 1 && err.failures.length === 1) throw err.failures[0]!.error;
      throw err;
    }
    return { record: { [NAME]: params } };
  }

  async function forgetHostKeys(ctx: HookContext): Promise<HookOutcome> {
    const servers = vnfcsOf(ctx.instance.instantiatedVnfInfo).map((v) => v.resourceId);
    if (services.hostKeys && servers.length > 0) {
      await services.hostKeys.forget(servers);
      ctx.report(`forgot the SSH host keys of ${servers.length} server(s)`);
    }
    return { record: { [NAME]: null } };
  }

  return {
    name: NAME,
    hooks: ['instantiate_end', 'heal_end', 'terminate_end'],
    prepare,
    async runHook(ctx) {
      if (ctx.hook === 'terminate_end') return await forgetHostKeys(ctx);
      return configure(ctx);
    },
  };
}
