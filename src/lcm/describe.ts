/**
 * vnf-describe: an INSTANTIATED instance as it is at its VIM now, read by
 * the planner of its VIM type (live objects of a CNF, the resources of a
 * Heat stack). Writes nothing.
 */
import { ConflictError, UsageError } from '../errors.js';
import type { VnfInstance } from '../model/lcm.js';
import type { VnfLiveState } from '../model/live.js';
import type { LcmDeps } from './engine.js';
import { plannerOf } from './planners/index.js';

/** Refuses an instance with nothing at a VIM. */
export function assertInstantiated(instance: VnfInstance, command: string): void {
  if (instance.instantiationState === 'INSTANTIATED' && instance.instantiatedVnfInfo) return;
  throw new ConflictError(`vnf instance ${instance.vnfInstanceName ?? instance.id} is NOT_INSTANTIATED: nothing of it runs at a VIM for ${command} to read`, {
    hint: `instantiate it first: vnfm vnf-instantiate ${instance.vnfInstanceName ?? instance.id} --request-file FILE`,
  });
}

export async function describeVnf(deps: LcmDeps, ref: string, signal: AbortSignal = new AbortController().signal): Promise<VnfLiveState> {
  const instance = await deps.store.instances.get(ref);
  assertInstantiated(instance, 'vnf-describe');
  const planner = await plannerOf(deps, instance);
  if (!planner.describe) throw new UsageError(`vnf-describe cannot read instances on ${planner.name} VIMs`);
  return planner.describe(deps, instance, signal);
}
