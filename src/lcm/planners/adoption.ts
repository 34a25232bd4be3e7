/**
 * What adoptions on every kind of VIM share: the occurrence's name, the
 * flavour and scale levels Tacker recorded checked against the package, and
 * the refusal that names each difference.
 */
import { ConflictError, ValidationError } from '../../errors.js';
import type { LcmOperation } from '../../model/lcm.js';
import type { Flavour } from '../../vnfd/index.js';
import { aspectDelta, levelReplicas } from '../replicas.js';
import type { TackerInstance } from '../tacker-instance.js';

/** vnfm's own operation (not ETSI's), recorded under this name as MODIFY_INFO is. */
export const ADOPT = 'ADOPT' as LcmOperation;

/** The flavour Tacker recorded, from the package's VNFD. */
export function adoptedFlavour(tacker: TackerInstance, flavours: Record<string, Flavour>, vnfdId: string): Flavour {
  if (!tacker.flavourId) throw new ValidationError(tacker.source, 'instantiatedVnfInfo.flavourId', 'is missing: Tacker records it on every instantiated VNF');
  const flavour = flavours[tacker.flavourId];
  if (!flavour) {
    throw new ValidationError(
      tacker.source,
      'instantiatedVnfInfo.flavourId',
      `is ${tacker.flavourId}, which VNFD ${vnfdId} does not have (it has ${Object.keys(flavours).join(', ')})`,
      {
        hint: 'adopt with the package the instance was instantiated from',
      },
    );
  }
  return flavour;
}

/**
 * Tacker's scale levels on the flavour's aspects (0 for an aspect it does not
 * name), the VDU replicas they give, and each way they differ from the
 * flavour or the live replicas.
 */
export function adoptedScale(
  tacker: TackerInstance,
  flavour: Flavour,
  live: Record<string, number>,
  /** What runs of a VDU, said: `Deployment vdu1 (VDU1) runs 2 replicas`. */
  runs: (vduId: string, n: number) => string,
): { scaleStatus: { aspectId: string; scaleLevel: number }[]; replicas: Record<string, number>; differences: string[] } {
  const at = levelReplicas(flavour, tacker.instantiationLevelId);
  const differences: string[] = [];
  for (const s of tacker.scaleStatus) {
    const aspect = flavour.aspects[s.aspectId];
    if (!aspect) differences.push(`Tacker's scaleStatus names aspect ${s.aspectId}, which flavour ${flavour.id} of the package does not have`);
    else if (s.scaleLevel > aspect.maxScaleLevel)
      differences.push(`aspect ${s.aspectId} is at scale level ${s.scaleLevel}, above its max_scale_level ${aspect.maxScaleLevel} in the package`);
  }
  const scaleStatus = at.scaleStatus.map((s) => tacker.scaleStatus.find((t) => t.aspectId === s.aspectId && flavour.aspects[t.aspectId]) ?? s);
  const replicas = { ...at.replicas };
  for (const s of scaleStatus) {
    const aspect = flavour.aspects[s.aspectId]!;
    const from = at.scaleStatus.find((x) => x.aspectId === s.aspectId)?.scaleLevel ?? 0;
    for (const vduId of Object.keys(aspect.vduDeltas)) replicas[vduId] = (at.replicas[vduId] ?? 0) + aspectDelta(aspect, vduId, from, Math.min(s.scaleLevel, aspect.maxScaleLevel));
  }
  for (const [vduId, n] of Object.entries(live)) {
    const want = replicas[vduId];
    if (want === undefined || want === n) continue;
    const aspect = scaleStatus.find((s) => flavour.aspects[s.aspectId]?.vduDeltas[vduId] !== undefined);
    const why = aspect ? `scale level ${aspect.scaleLevel} of ${aspect.aspectId} gives ${want}` : `the package gives it ${want}`;
    differences.push(`${runs(vduId, n)}; Tacker's ${why}`);
  }
  return { scaleStatus, replicas: { ...replicas, ...live }, differences };
}

/** The refusal of an adoption: every difference, one a line. */
export function adoptionRefused(tacker: TackerInstance, what: string, differences: string[]): ConflictError {
  return new ConflictError(
    `cannot adopt Tacker's vnf instance ${tacker.id} (${tacker.source}): ${what} differs from the package in ${differences.length} way${differences.length === 1 ? '' : 's'}, nothing was recorded:\n  ${differences.join('\n  ')}`,
    { hint: 'adopt with the package and VIM the instance runs from (--package, --vim), or bring the VIM back to what the package defines' },
  );
}
