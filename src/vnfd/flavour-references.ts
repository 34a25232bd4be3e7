/**
 * The checks that a flavour's references land, once its nodes, groups and
 * policies are read: policy targets, placement-group members, scaling deltas
 * against their aspects, instantiation levels against aspects and VDU
 * profiles, and connection points against VDUs and virtual links. Findings
 * come in that order.
 */
import type { Flavour } from '../model/vnfd.js';
import { outsideProfile, vduInstancesAt } from './vdu-instances.js';

/** The policies of a flavour kept for the reference checks, by kind. */
export interface FlavourPolicies {
  deltaPolicies: Array<{ name: string; aspect?: string; deltas: Record<string, number>; targets: string[] }>;
  vduLevelPolicies: Array<{ name: string; levels: Record<string, number>; targets: string[] }>;
  initialDeltaPolicies: Array<{ name: string; targets: string[] }>;
  /** The InstantiationLevels policy's name, for locating lines. */
  levelsPolicy?: string;
}

/** Where a finding goes: `path` is below topology_template of the flavour's file. */
export interface FlavourSite {
  add(code: string, path: readonly string[], message: string, hint: string): void;
  warn(code: string, path: readonly string[], message: string, hint: string): void;
}

export function checkFlavourReferences(site: FlavourSite, f: Flavour, policies: FlavourPolicies): void {
  checkTargets(site, f, policies);
  checkAspectDeltas(site, f, policies);
  checkLevels(site, f, policies);
  checkConnectionPoints(site, f);
}

/** Policies, placement rules and groups name VDUs (and virtual links, groups) of this flavour. */
function checkTargets(site: FlavourSite, f: Flavour, policies: FlavourPolicies): void {
  const vduList = Object.keys(f.vdus).join(', ') || 'none';
  const checkVduTargets = (policy: string, targets: string[]) => {
    for (const t of targets) {
      if (!f.vdus[t]) {
        site.add(
          'policy-target-missing',
          ['policies', policy, 'targets'],
          `policy ${policy} targets ${t}, which is not a VDU of flavour ${f.id}`,
          `target a tosca.nodes.nfv.Vdu.Compute node of this flavour (${vduList})`,
        );
      }
    }
  };
  for (const p of policies.initialDeltaPolicies) checkVduTargets(p.name, p.targets);
  for (const p of policies.deltaPolicies) checkVduTargets(p.name, p.targets);
  for (const p of policies.vduLevelPolicies) checkVduTargets(p.name, p.targets);

  const placeable = (t: string) => Boolean(f.vdus[t] || f.virtualLinks[t] || f.placementGroups[t]);
  for (const rule of f.affinityRules) {
    for (const t of rule.targets) {
      if (!placeable(t)) {
        site.add(
          'policy-target-missing',
          ['policies', rule.policyName, 'targets'],
          `${rule.kind} rule ${rule.policyName} targets ${t}, which is not a VDU, virtual link or placement group of flavour ${f.id}`,
          `target one of: ${vduList}`,
        );
      }
    }
  }
  for (const [group, members] of Object.entries(f.placementGroups)) {
    for (const m of members) {
      if (!f.vdus[m] && !f.virtualLinks[m]) {
        site.add(
          'group-member-missing',
          ['groups', group, 'members'],
          `placement group ${group} lists ${m}, which is not a VDU or virtual link of flavour ${f.id}`,
          `list VDUs (${vduList}) or virtual links only`,
        );
      }
    }
  }
}

/** Each VduScalingAspectDeltas is for a defined aspect and gives exactly its step deltas. */
function checkAspectDeltas(site: FlavourSite, f: Flavour, policies: FlavourPolicies): void {
  const aspectList = Object.keys(f.aspects).join(', ') || 'none';
  for (const p of policies.deltaPolicies) {
    const aspect = p.aspect === undefined ? undefined : f.aspects[p.aspect];
    if (!aspect) {
      site.add(
        'aspect-missing',
        ['policies', p.name, 'properties', 'aspect'],
        `VduScalingAspectDeltas ${p.name} is for aspect ${p.aspect ?? '(none given)'}, which no ScalingAspects policy of flavour ${f.id} defines`,
        `name one of the aspects (${aspectList}), or add the aspect to the ScalingAspects policy`,
      );
      continue;
    }
    for (const deltaId of Object.keys(p.deltas)) {
      if (!aspect.stepDeltas.includes(deltaId)) {
        site.add(
          'delta-unknown',
          ['policies', p.name, 'properties', 'deltas', deltaId],
          `delta ${deltaId} of ${p.name} is not a step delta of aspect ${aspect.id} (step_deltas: ${aspect.stepDeltas.join(', ') || 'none'})`,
          `add ${deltaId} to step_deltas of ${aspect.id}, or rename the delta`,
        );
      }
    }
    for (const step of aspect.stepDeltas) {
      if (!(step in p.deltas)) {
        site.add(
          'delta-missing',
          ['policies', p.name, 'properties', 'deltas'],
          `aspect ${aspect.id} steps by delta ${step}, but ${p.name} gives no number_of_instances for it`,
          `add "${step}: {number_of_instances: 1}" under deltas of ${p.name}`,
        );
      }
    }
  }
}

/** Instantiation levels scale defined aspects within range and give each VDU a count its profile allows. */
function checkLevels(site: FlavourSite, f: Flavour, policies: FlavourPolicies): void {
  const aspectList = Object.keys(f.aspects).join(', ') || 'none';
  for (const level of Object.values(f.instantiationLevels)) {
    for (const [aspectId, { scaleLevel }] of Object.entries(level.scaleInfo)) {
      const path = ['policies', policies.levelsPolicy ?? '', 'properties', 'levels', level.id, 'scale_info', aspectId];
      const aspect = f.aspects[aspectId];
      if (!aspect) {
        site.add(
          'aspect-missing',
          path,
          `instantiation level ${level.id} scales aspect ${aspectId}, which no ScalingAspects policy of flavour ${f.id} defines`,
          `use one of the aspects (${aspectList})`,
        );
      } else if (!Number.isInteger(scaleLevel) || scaleLevel < 0 || scaleLevel > aspect.maxScaleLevel) {
        site.add(
          'scale-level-out-of-range',
          [...path, 'scale_level'],
          `instantiation level ${level.id} puts aspect ${aspectId} at scale level ${String(scaleLevel)}, outside 0..${aspect.maxScaleLevel} (max_scale_level)`,
          `use a scale_level between 0 and ${aspect.maxScaleLevel}, or raise max_scale_level of ${aspectId}`,
        );
      }
    }
  }
  const levelIds = Object.keys(f.instantiationLevels);
  if (f.defaultLevel !== undefined && !f.instantiationLevels[f.defaultLevel]) {
    site.add(
      'default-level-missing',
      ['policies', policies.levelsPolicy ?? '', 'properties', 'default_level'],
      `default_level ${f.defaultLevel} is not one of the instantiation levels (${levelIds.join(', ') || 'none'})`,
      'name one of the levels defined under levels',
    );
  } else if (f.defaultLevel === undefined && levelIds.length > 1) {
    site.warn(
      'default-level-missing',
      ['policies', policies.levelsPolicy ?? '', 'properties'],
      `flavour ${f.id} has ${levelIds.length} instantiation levels and no default_level`,
      'add default_level naming the level an instantiate request without instantiationLevelId gets',
    );
  }
  for (const p of policies.vduLevelPolicies) {
    for (const [levelId, n] of Object.entries(p.levels)) {
      if (policies.levelsPolicy !== undefined && !f.instantiationLevels[levelId]) {
        site.add(
          'level-missing',
          ['policies', p.name, 'properties', 'levels', levelId],
          `VduInstantiationLevels ${p.name} sets level ${levelId}, which InstantiationLevels does not define`,
          `use one of the levels (${levelIds.join(', ')})`,
        );
      }
      for (const t of p.targets) {
        const vdu = f.vdus[t];
        if (vdu && outsideProfile(f, t, n)) {
          const range = profileRange(f, t);
          // Tacker onboards these (many of its v1 test packages give a VDU of 1..1 three instances at instantiation_level_2); its v2 grants the level's number.
          site.warn(
            'level-instances-out-of-range',
            ['policies', p.name, 'properties', 'levels', levelId, 'number_of_instances'],
            `level ${levelId} gives ${t} ${n} instances, outside its vdu_profile ${range}; vnfm creates ${n} at that level all the same, as Tacker v2 does, and refuses a scale that would leave ${t} outside ${range}, as Tacker does`,
            `to make the VNFD consistent, use a number in ${range}, or widen the vdu_profile of ${t}`,
          );
        }
      }
    }
  }
  for (const p of policies.initialDeltaPolicies) {
    for (const t of p.targets) {
      const n = f.initialDeltas[t];
      if (f.vdus[t] && n !== undefined && outsideProfile(f, t, n)) {
        // Tacker onboards and instantiates these (its v1 test_cnf_heal gives VDU1 an initial delta of 1 and a vdu_profile of 2..3).
        site.warn(
          'initial-delta-out-of-range',
          ['policies', p.name, 'properties', 'initial_delta', 'number_of_instances'],
          `initial delta ${p.name} gives ${t} ${n} instance${n === 1 ? '' : 's'}, outside its vdu_profile ${profileRange(f, t)}; vnfm, as Tacker, accepts it: ${initialDeltaUse(f, t)}`,
          `to make the VNFD consistent, use a number in ${profileRange(f, t)}`,
        );
      }
    }
  }
}

const profileRange = (f: Flavour, vduId: string) => `${f.vdus[vduId]!.vduProfile.minNumberOfInstances}..${f.vdus[vduId]!.vduProfile.maxNumberOfInstances}`;

/** What an instantiate does with a VDU's initial delta: each level's count (or the count without levels), and whether the delta counts in it. */
function initialDeltaUse(f: Flavour, vduId: string): string {
  // A request without instantiationLevelId takes default_level; without one, the aspects stay at level 0.
  const cases: Array<[label: string, levelId: string | undefined]> = Object.keys(f.instantiationLevels).map((id) => [`at ${id}`, id]);
  if (f.defaultLevel === undefined || !f.instantiationLevels[f.defaultLevel]) cases.push(['without instantiationLevelId', undefined]);
  const counts = cases.map(([label, id]) => ({ label, ...vduInstancesAt(f, vduId, id) }));
  const said = (list: typeof counts) => list.map((c) => `${c.count} ${c.label}`).join(', ');
  if (counts.every((c) => c.from === 'level')) {
    return `an instantiate does not use it, the instantiation levels set ${vduId}'s instances (${said(counts)}), as Tacker v2 grants them`;
  }
  const fromDelta = counts.filter((c) => c.from === 'initial-delta');
  const range = profileRange(f, vduId);
  const outside = fromDelta.some((c) => outsideProfile(f, vduId, c.count));
  return (
    `an instantiate gives ${vduId} the initial delta plus the aspects' deltas at the level, as Tacker v1 does (${said(fromDelta)})` +
    (outside ? `, and a scale that would leave ${vduId} outside ${range} is refused, as in Tacker` : '')
  );
}

/** Connection points bind to a VDU and link to a virtual link of this flavour. */
function checkConnectionPoints(site: FlavourSite, f: Flavour): void {
  const vduList = Object.keys(f.vdus).join(', ') || 'none';
  for (const [name, cp] of Object.entries(f.cps)) {
    if (cp.vdu !== undefined && !f.vdus[cp.vdu]) {
      site.add(
        'requirement-target-missing',
        ['node_templates', name, 'requirements', 'virtual_binding'],
        `connection point ${name} binds to ${cp.vdu}, which is not a VDU of flavour ${f.id}`,
        `set virtual_binding to one of: ${vduList}`,
      );
    }
    if (cp.virtualLink !== undefined && !f.virtualLinks[cp.virtualLink]) {
      site.add(
        'requirement-target-missing',
        ['node_templates', name, 'requirements', 'virtual_link'],
        `connection point ${name} links to ${cp.virtualLink}, which is not a virtual link of flavour ${f.id}`,
        `define ${cp.virtualLink} as a tosca.nodes.nfv.VnfVirtualLink, or fix the name`,
      );
    }
  }
}
