/**
 * How many instances a VDU of a flavour has, from the VNFD's policies: at an
 * instantiation level, its VduInstantiationLevels number (as Tacker v2
 * grants it), else its VduInitialDelta plus the scaling aspects' deltas up
 * to the level's scale levels (as Tacker v1 computes desired_capacity). The
 * one rule the planners (lcm/replicas.ts) and the VNFD's checks use.
 */
import type { Flavour, ScalingAspect } from '../model/vnfd.js';

/**
 * The instances a VDU gains when its aspect goes from `from` to `to`
 * (negative going down). Step k (from level k to k+1) uses step_deltas[k],
 * the last delta repeating when there are fewer deltas than levels.
 */
export function aspectDelta(aspect: ScalingAspect, vduId: string, from: number, to: number): number {
  const perDelta = aspect.vduDeltas[vduId];
  if (!perDelta || aspect.stepDeltas.length === 0) return 0;
  const step = (k: number) => perDelta[aspect.stepDeltas[Math.min(k, aspect.stepDeltas.length - 1)]!] ?? 0;
  let sum = 0;
  for (let k = Math.min(from, to); k < Math.max(from, to); k++) sum += step(k);
  return to >= from ? sum : -sum;
}

/** Where a VDU's count at instantiate comes from: the level's VduInstantiationLevels, or the initial delta and the aspects. */
export interface VduInstances {
  count: number;
  from: 'level' | 'initial-delta';
}

/**
 * A VDU's instances when the flavour is instantiated at `levelId` (the
 * flavour's default_level when none is given; the aspects at level 0 when
 * there is neither). A VDU without an initial delta starts from its
 * vdu_profile minimum.
 */
export function vduInstancesAt(flavour: Flavour, vduId: string, levelId?: string): VduInstances {
  const id = levelId ?? flavour.defaultLevel;
  const level = id ? flavour.instantiationLevels[id] : undefined;
  const fixed = level?.vduInstances[vduId];
  if (fixed !== undefined) return { count: fixed, from: 'level' };
  let count = flavour.initialDeltas[vduId] ?? flavour.vdus[vduId]?.vduProfile.minNumberOfInstances ?? 0;
  for (const aspect of Object.values(flavour.aspects)) count += aspectDelta(aspect, vduId, 0, level?.scaleInfo[aspect.id]?.scaleLevel ?? 0);
  return { count, from: 'initial-delta' };
}

/** Whether `n` lies outside the VDU's vdu_profile. */
export function outsideProfile(flavour: Flavour, vduId: string, n: number): boolean {
  const p = flavour.vdus[vduId]?.vduProfile;
  return p !== undefined && (n < p.minNumberOfInstances || n > p.maxNumberOfInstances);
}
