/**
 * How many VNFC instances each VDU has, from the VNFD's policies:
 * VduInstantiationLevels for a level, else VduInitialDelta plus the scaling
 * aspects' VduScalingAspectDeltas for each step up to the scale level.
 */
import { aspectDelta, outsideProfile, vduInstancesAt, type Flavour } from '../vnfd/index.js';
import type { ScaleInfo } from '../model/lcm.js';

export { aspectDelta };

export interface LevelReplicas {
  /** VDU node name → replicas. */
  replicas: Record<string, number>;
  /** One entry per aspect of the flavour, from the level's scale_info (0 when the level does not name the aspect). */
  scaleStatus: ScaleInfo[];
  maxScaleLevels: ScaleInfo[];
  /** The level used: the requested one, else the flavour's default_level, else none. */
  instantiationLevelId?: string;
}

/** Replicas and scale status at an instantiation level (the default level when none is given). */
export function levelReplicas(flavour: Flavour, instantiationLevelId?: string): LevelReplicas {
  const levelId = instantiationLevelId ?? flavour.defaultLevel;
  const level = levelId ? flavour.instantiationLevels[levelId] : undefined;
  const scaleStatus = Object.keys(flavour.aspects).map((aspectId) => ({ aspectId, scaleLevel: level?.scaleInfo[aspectId]?.scaleLevel ?? 0 }));
  const maxScaleLevels = Object.values(flavour.aspects).map((a) => ({ aspectId: a.id, scaleLevel: a.maxScaleLevel }));
  const replicas = Object.fromEntries(Object.keys(flavour.vdus).map((vduId) => [vduId, vduInstancesAt(flavour, vduId, levelId).count]));
  return { replicas, scaleStatus, maxScaleLevels, ...(level ? { instantiationLevelId: levelId } : {}) };
}

/**
 * What an instantiate of `flavour` (at `instantiationLevelId`, else its
 * default level) does where the VNFD breaks its own rules and Tacker goes
 * ahead all the same, one warning each (vnfpkg-validate and onboarding
 * warned of the same): a flavour id its VNF type does not list, a VDU given
 * instances outside its vdu_profile, an initial delta outside it.
 */
export function instantiateWarnings(flavour: Flavour, instantiationLevelId?: string): string[] {
  const warnings: string[] = [];
  if (flavour.typeAllowsOnly) {
    warnings.push(
      `warning: flavour ${flavour.id} is not one of the flavour_id values its VNF node type allows (${flavour.typeAllowsOnly.join(', ')}): instantiated all the same, as Tacker does`,
    );
  }
  const levelId = instantiationLevelId ?? flavour.defaultLevel;
  const at = levelId ? ` at ${levelId}` : '';
  for (const [vduId, vdu] of Object.entries(flavour.vdus)) {
    const { count, from } = vduInstancesAt(flavour, vduId, levelId);
    const range = `${vdu.vduProfile.minNumberOfInstances}..${vdu.vduProfile.maxNumberOfInstances}`;
    const why = from === 'level' ? `VduInstantiationLevels${at}, as Tacker v2 grants them` : `its initial delta plus the aspects' deltas${at}, as Tacker v1 counts them`;
    const delta = flavour.initialDeltas[vduId];
    if (outsideProfile(flavour, vduId, count)) {
      warnings.push(
        `warning: ${vduId} gets ${count} instance${count === 1 ? '' : 's'} (${why}), outside its vdu_profile ${range}: created all the same; a scale that would leave ${vduId} outside ${range} is refused, as in Tacker`,
      );
    } else if (delta !== undefined && outsideProfile(flavour, vduId, delta)) {
      warnings.push(`warning: the initial delta of ${vduId} (${delta}) is outside its vdu_profile ${range}; ${vduId} gets ${count} instance${count === 1 ? '' : 's'} (${why})`);
    }
  }
  return warnings;
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
