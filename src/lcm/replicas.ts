/**
 * How many VNFC instances each VDU has, from the VNFD's policies:
 * VduInstantiationLevels for a level, else VduInitialDelta plus the scaling
 * aspects' VduScalingAspectDeltas for each step up to the scale level.
 */
import type { Flavour, ScalingAspect } from '../vnfd/index.js';
import type { ScaleInfo } from '../model/lcm.js';

export interface LevelReplicas {
  /** VDU node name → replicas. */
  replicas: Record<string, number>;
  /** One entry per aspect of the flavour, from the level's scale_info (0 when the level does not name the aspect). */
  scaleStatus: ScaleInfo[];
  maxScaleLevels: ScaleInfo[];
  /** The level used: the requested one, else the flavour's default_level, else none. */
  instantiationLevelId?: string;
}

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

/** Replicas and scale status at an instantiation level (the default level when none is given). */
export function levelReplicas(flavour: Flavour, instantiationLevelId?: string): LevelReplicas {
  const levelId = instantiationLevelId ?? flavour.defaultLevel;
  const level = levelId ? flavour.instantiationLevels[levelId] : undefined;
  const scaleStatus = Object.keys(flavour.aspects).map((aspectId) => ({ aspectId, scaleLevel: level?.scaleInfo[aspectId]?.scaleLevel ?? 0 }));
  const maxScaleLevels = Object.values(flavour.aspects).map((a) => ({ aspectId: a.id, scaleLevel: a.maxScaleLevel }));
  const replicas: Record<string, number> = {};
  for (const [vduId, vdu] of Object.entries(flavour.vdus)) {
    const fixed = level?.vduInstances[vduId];
    if (fixed !== undefined) {
      replicas[vduId] = fixed;
      continue;
    }
    let n = flavour.initialDeltas[vduId] ?? vdu.vduProfile.minNumberOfInstances;
    for (const s of scaleStatus) n += aspectDelta(flavour.aspects[s.aspectId]!, vduId, 0, s.scaleLevel);
    replicas[vduId] = n;
  }
  return { replicas, scaleStatus, maxScaleLevels, ...(level ? { instantiationLevelId: levelId } : {}) };
}

/**
 * Scale status and maximum levels on a change of package: the new flavour's
 * aspects, each keeping the level the instance had where the aspect stays.
 */
export function carriedScaleLevels(flavour: Flavour, current: readonly { aspectId: string; scaleLevel: number }[]): Pick<LevelReplicas, 'scaleStatus' | 'maxScaleLevels'> {
  const levels = levelReplicas(flavour);
  return { scaleStatus: levels.scaleStatus.map((s) => current.find((c) => c.aspectId === s.aspectId) ?? s), maxScaleLevels: levels.maxScaleLevels };
}

/** The replicas after moving `aspectId` from level `from` to `to`: only the aspect's VDUs change. */
export function scaledReplicas(flavour: Flavour, current: Record<string, number>, aspectId: string, from: number, to: number): Record<string, number> {
  const aspect = flavour.aspects[aspectId];
  if (!aspect) return { ...current };
  const next = { ...current };
  for (const vduId of Object.keys(aspect.vduDeltas)) {
    next[vduId] = (current[vduId] ?? 0) + aspectDelta(aspect, vduId, from, to);
  }
  return next;
}
