/**
 * vnf-logs: the logs of an instance's pods through its VIM, as `kubectl
 * logs` reads them, or for a Heat VNF each server's console log from Nova
 * (os-getConsoleOutput, as `openstack console log show`), for operators who
 * do not hold the VIM's credentials (they are sealed in the store). The pods
 * and servers are the VNFCs the instance records (all, or one VDU's, or one
 * VNFC; Machines have none); after a first instantiate that stopped short,
 * the pods of what its journal records as created (all, or one). Writes
 * nothing.
 */
import { ConflictError, NotFoundError, UsageError, VnfmError } from '../errors.js';
import type { PodLogInput, PodLogReader } from '../infra/kubernetes/pod-log.js';
import type { VimConnection, VnfInstance } from '../model/lcm.js';
import type { LiveNode } from '../model/live.js';
import type { Vnfc } from '../model/resources.js';
import { vnfcsOf } from '../model/vnfcs.js';
import { assertInstantiated, stoppedInstantiate, type StoppedInstantiate } from './describe.js';
import { describeJournalled } from './planners/kubernetes-live.js';
import type { LcmDeps } from './engine.js';
import { plannerOf } from './planners/index.js';
import { instanceVim, kubernetesVims, resolveOpenStackVim } from './vim-connection.js';

export interface VnfLogsOptions {
  /** One VNFC, by its id (`VDU1-vdu1-5d8f…`). */
  vnfc?: string;
  /** The VNFCs of one VDU. */
  vdu?: string;
  container?: string;
  follow?: boolean;
  sinceSeconds?: number;
  tailLines?: number;
  /** Told how many pods (or servers) are read, before the first line. */
  onPods?: (count: number) => void;
}

/** The pods (or servers) whose logs are read: the instance's VNFCs that have one, narrowed to one VDU or one VNFC. */
function podsOf(vnfcs: Vnfc[], opts: VnfLogsOptions, name: string, pod = 'pod'): Vnfc[] {
  // A Cluster API VDU's VNFCs are Machines (no log); the others are pods (or, on OpenStack, servers).
  const pods = vnfcs.filter((v) => v.metadata?.['kind'] !== 'Machine');
  if (opts.vnfc !== undefined) {
    const one = pods.find((v) => v.id === opts.vnfc || v.resourceId === opts.vnfc);
    if (!one) {
      throw new NotFoundError(`vnf instance ${name} has no ${pod} VNFC ${opts.vnfc}`, {
        hint: `its VNFCs: ${pods.map((v) => v.id).join(', ') || 'none'} (vnfm vnf-show ${name})`,
      });
    }
    return [one];
  }
  if (opts.vdu !== undefined) {
    const ofVdu = pods.filter((v) => v.vduId === opts.vdu);
    if (ofVdu.length === 0) {
      throw new NotFoundError(`vnf instance ${name} has no ${pod} of VDU ${opts.vdu}`, {
        hint: `its VDUs with ${pod}s: ${[...new Set(pods.map((v) => v.vduId))].join(', ') || 'none'}`,
      });
    }
    return ofVdu;
  }
  if (pods.length === 0) throw new NotFoundError(`vnf instance ${name} records no ${pod} VNFCs`, { hint: `vnfm vnf-sync ${name} records the ${pod}s it has now` });
  return pods;
}

/**
 * Reads the logs of the instance's pods, each line handed to `onLine` with
 * its source (`pod/NAME`) and a pod's line also as the bytes the container
 * wrote (which need not be UTF-8); with `follow`, every pod's at once until
 * `signal` ends them. For an OpenStack instance, each server's console log
 * (`server/VNFC`), one server after the other.
 */
export async function readVnfLogs(
  deps: LcmDeps,
  ref: string,
  opts: VnfLogsOptions,
  onLine: (source: string, line: string, bytes?: Buffer) => void,
  signal: AbortSignal,
): Promise<void> {
  const instance = await deps.store.instances.get(ref);
  const name = instance.vnfInstanceName ?? instance.id;
  const left = await stoppedInstantiate(deps, instance, 'vnf-logs');
  if (left) return readPods(deps, left.vim, await podsLeft(deps, instance, left, opts, signal), opts, onLine, signal);
  assertInstantiated(instance, 'vnf-logs');
  const planner = await plannerOf(deps, instance);
  if (planner.name === 'openstack') return readConsoleLogs(deps, instance, opts, onLine, signal);
  if (planner.name !== 'kubernetes' && planner.name !== 'helm') {
    throw new UsageError(`vnf-logs reads the pods of Kubernetes instances and the servers of OpenStack ones; vnf instance ${name} runs on neither`);
  }
  const info = instance.instantiatedVnfInfo!;
  const pods = podsOf(vnfcsOf(info), opts, name).map((p) => ({
    name: p.resourceId,
    namespace: (typeof p.metadata?.['namespace'] === 'string' ? p.metadata['namespace'] : undefined) ?? p.owner?.namespace ?? info.metadata.namespace,
  }));
  return readPods(deps, await instanceVim(deps, instance, 'vnf-logs', kubernetesVims), pods, opts, onLine, signal);
}

/**
 * The pods of what a first instantiate that stopped short created (the
 * instance records no VNFCs yet): those its journal's objects own now, or
 * the one `--vnfc` names.
 */
async function podsLeft(deps: LcmDeps, instance: VnfInstance, left: StoppedInstantiate, opts: VnfLogsOptions, signal: AbortSignal): Promise<{ name: string; namespace: string }[]> {
  const name = instance.vnfInstanceName ?? instance.id;
  const stopped = `its instantiate is ${left.op.operationState} (occurrence ${left.op.id.slice(0, 8)})`;
  if (opts.vdu !== undefined) {
    throw new UsageError(`vnf instance ${name} records no VDUs yet: ${stopped}`, { hint: `give one of its pods with --vnfc POD (vnfm vnf-describe ${name} lists them)` });
  }
  const state = await describeJournalled(deps, instance, left, signal);
  const flat = (nodes: LiveNode[]): LiveNode[] => nodes.flatMap((n) => [n, ...flat(n.children)]);
  const pods = flat(state.objects)
    .filter((n) => n.kind === 'Pod' && n.exists)
    .map((n) => ({ name: n.name, namespace: n.namespace ?? left.namespace }));
  const chosen = opts.vnfc === undefined ? pods : pods.filter((p) => p.name === opts.vnfc);
  if (chosen.length === 0) {
    throw new NotFoundError(opts.vnfc === undefined ? `vnf instance ${name} has no pods: ${stopped}` : `vnf instance ${name} has no pod ${opts.vnfc}: ${stopped}`, {
      hint: `its pods: ${pods.map((p) => p.name).join(', ') || 'none'} (vnfm vnf-describe ${name})`,
    });
  }
  return chosen;
}

/** Reads the pods' logs through the VIM, every pod's at once. */
async function readPods(
  deps: LcmDeps,
  vim: VimConnection,
  pods: { name: string; namespace: string }[],
  opts: VnfLogsOptions,
  onLine: (source: string, line: string, bytes?: Buffer) => void,
  signal: AbortSignal,
): Promise<void> {
  const driver = (await deps.kubernetesDriver(vim)) as unknown as Partial<PodLogReader>;
  if (!driver.podLog) throw new ConflictError('the Kubernetes driver in use cannot read logs', { hint: 'use the driver vnfm ships' });
  const read = driver.podLog.bind(driver);
  opts.onPods?.(pods.length);
  await Promise.all(
    pods.map((p) => {
      const input: PodLogInput = {
        namespace: p.namespace,
        pod: p.name,
        ...(opts.container ? { container: opts.container } : {}),
        ...(opts.follow ? { follow: true } : {}),
        ...(opts.sinceSeconds !== undefined ? { sinceSeconds: opts.sinceSeconds } : {}),
        ...(opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {}),
      };
      return read(input, (line, bytes) => onLine(`pod/${p.name}`, line, bytes), signal);
    }),
  );
}

/** A Heat VNF: each server's console log from Nova, its last `tailLines` lines (Nova's `length`). */
async function readConsoleLogs(deps: LcmDeps, instance: VnfInstance, opts: VnfLogsOptions, onLine: (source: string, line: string) => void, signal: AbortSignal): Promise<void> {
  const name = instance.vnfInstanceName ?? instance.id;
  const unsupported = [opts.follow ? '-f' : '', opts.sinceSeconds !== undefined ? '--since' : '', opts.container !== undefined ? '-c' : ''].filter(Boolean);
  if (unsupported.length) {
    throw new UsageError(`vnf instance ${name} runs on OpenStack: its logs are its servers' console logs, which Nova gives whole, without ${unsupported.join(', ')}`, {
      hint: `vnfm vnf-logs ${name} [--vnfc ID | --vdu VDU] [--tail N]`,
    });
  }
  const servers = podsOf(
    vnfcsOf(instance.instantiatedVnfInfo!).filter((v) => v.vimLevelResourceType === undefined || v.vimLevelResourceType === 'OS::Nova::Server'),
    opts,
    name,
    'server',
  );
  const vim = await resolveOpenStackVim(deps, 'vnf-logs', undefined, instance);
  if (!deps.openstackDriver) throw new VnfmError(`VIM "${vim.name}" is an OpenStack VIM, and this vnfm was set up without the OpenStack infra-driver`);
  const driver = await deps.openstackDriver(vim);
  if (!driver.consoleLog) throw new ConflictError("the OpenStack driver in use cannot read servers' console logs", { hint: 'use the driver vnfm ships' });
  opts.onPods?.(servers.length);
  for (const server of servers) {
    const text = await driver.consoleLog(server.resourceId, opts.tailLines, signal);
    const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
    if (lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) onLine(`server/${server.id}`, line);
  }
}
