/**
 * vnf-logs: the logs of an instance's pods through its VIM, as `kubectl
 * logs` reads them, for operators who do not hold the VIM's credentials
 * (they are sealed in the store). The pods are the VNFCs the instance
 * records (all, or one VDU's, or one VNFC; Machines have none). Writes nothing.
 */
import { ConflictError, NotFoundError, UsageError } from '../errors.js';
import type { PodLogInput, PodLogReader } from '../infra/kubernetes/pod-log.js';
import type { Vnfc } from '../model/resources.js';
import { vnfcsOf } from '../model/vnfcs.js';
import { assertInstantiated } from './describe.js';
import type { LcmDeps } from './engine.js';
import { plannerOf } from './planners/index.js';
import { instanceVim, kubernetesVims } from './vim-connection.js';

export interface VnfLogsOptions {
  /** One VNFC, by its id (`VDU1-vdu1-5d8f…`). */
  vnfc?: string;
  /** The VNFCs of one VDU. */
  vdu?: string;
  container?: string;
  follow?: boolean;
  sinceSeconds?: number;
  tailLines?: number;
  /** Told how many pods are read, before the first line. */
  onPods?: (count: number) => void;
}

/** The pods whose logs are read: the instance's Pod VNFCs, narrowed to one VDU or one VNFC. */
function podsOf(vnfcs: Vnfc[], opts: VnfLogsOptions, name: string): Vnfc[] {
  // A Cluster API VDU's VNFCs are Machines (no log); the others are pods.
  const pods = vnfcs.filter((v) => v.metadata?.['kind'] !== 'Machine');
  if (opts.vnfc !== undefined) {
    const one = pods.find((v) => v.id === opts.vnfc || v.resourceId === opts.vnfc);
    if (!one) {
      throw new NotFoundError(`vnf instance ${name} has no pod VNFC ${opts.vnfc}`, {
        hint: `its VNFCs: ${pods.map((v) => v.id).join(', ') || 'none'} (vnfm vnf-show ${name})`,
      });
    }
    return [one];
  }
  if (opts.vdu !== undefined) {
    const ofVdu = pods.filter((v) => v.vduId === opts.vdu);
    if (ofVdu.length === 0) {
      throw new NotFoundError(`vnf instance ${name} has no pod of VDU ${opts.vdu}`, { hint: `its VDUs with pods: ${[...new Set(pods.map((v) => v.vduId))].join(', ') || 'none'}` });
    }
    return ofVdu;
  }
  if (pods.length === 0) throw new NotFoundError(`vnf instance ${name} records no pod VNFCs`, { hint: `vnfm vnf-sync ${name} records the pods it has now` });
  return pods;
}

/**
 * Reads the logs of the instance's pods, each line handed to `onLine` with
 * its pod; with `follow`, every pod's at once until `signal` ends them.
 */
export async function readVnfLogs(deps: LcmDeps, ref: string, opts: VnfLogsOptions, onLine: (pod: string, line: string) => void, signal: AbortSignal): Promise<void> {
  const instance = await deps.store.instances.get(ref);
  const name = instance.vnfInstanceName ?? instance.id;
  assertInstantiated(instance, 'vnf-logs');
  const planner = await plannerOf(deps, instance);
  if (planner.name !== 'kubernetes' && planner.name !== 'helm') {
    throw new UsageError(`vnf-logs reads the pods of Kubernetes instances; vnf instance ${name} runs on an OpenStack VIM`, {
      hint: 'the console log of its servers is at the VIM: openstack console log show SERVER (the server ids: vnfm vnf-show)',
    });
  }
  const info = instance.instantiatedVnfInfo!;
  const pods = podsOf(vnfcsOf(info), opts, name);
  const vim = await instanceVim(deps, instance, 'vnf-logs', kubernetesVims);
  const driver = (await deps.kubernetesDriver(vim)) as unknown as Partial<PodLogReader>;
  if (!driver.podLog) throw new ConflictError('the Kubernetes driver in use cannot read logs', { hint: 'use the driver vnfm ships' });
  const read = driver.podLog.bind(driver);
  opts.onPods?.(pods.length);
  await Promise.all(
    pods.map((p) => {
      const input: PodLogInput = {
        namespace: (typeof p.metadata?.['namespace'] === 'string' ? p.metadata['namespace'] : undefined) ?? p.owner?.namespace ?? info.metadata.namespace,
        pod: p.resourceId,
        ...(opts.container ? { container: opts.container } : {}),
        ...(opts.follow ? { follow: true } : {}),
        ...(opts.sinceSeconds !== undefined ? { sinceSeconds: opts.sinceSeconds } : {}),
        ...(opts.tailLines !== undefined ? { tailLines: opts.tailLines } : {}),
      };
      return read(input, (line) => onLine(p.resourceId, line), signal);
    }),
  );
}
