/**
 * Which scaling group of the Base HOT holds each VDU, how the template sizes
 * it, and what an operation asks of the groups: the sizes they must have
 * afterwards, and for a scale of Tacker v1's form the policy to signal per
 * step. A group whose desired_capacity reads `nfv.VDU.<vdu>.desired_capacity`
 * is scaled by updating the nfv parameter (Tacker v2); one with
 * OS::Heat::ScalingPolicy resources `<aspect>_scale_out` / `_scale_in`
 * naming it is scaled by signalling them, as Tacker v1 does
 * (infra_drivers/openstack/openstack.py `scale`, `get_scaling_policy_name`).
 */
import { UsageError } from '../errors.js';
import type { HeatTemplates, NfvParameter, ScalingGroupSize, ScalingPolicySignal } from '../infra/openstack/driver-contract.js';
import { parseHot, sizedBySignals, templateGroups, type TemplateGroup } from '../infra/openstack/hot.js';
import type { Flavour, ScalingAspect } from '../vnfd/index.js';
import { aspectDelta } from './replicas.js';

/** A group of the Base HOT's top level and the VDU whose VNFCs are its members. */
export interface VduGroup {
  group: string;
  vduId: string;
  /** Present when the group is sized by signals to its aspect's policies (Tacker v1's form). */
  policies?: { aspectId: string; scaleOut?: string; scaleIn?: string };
}

const policyName = (aspectId: string, action: 'out' | 'in') => `${aspectId}_scale_${action}`;

/** The VDU of an aspect a group holds: the aspect's only one, else the one whose server the member template has. */
function vduOfGroup(group: TemplateGroup, aspect: ScalingAspect, templates: Pick<HeatTemplates, 'files'>): string | undefined {
  const candidates = Object.keys(aspect.vduDeltas).sort();
  if (candidates.length <= 1) return candidates[0];
  const member = group.memberType !== undefined ? templates.files[group.memberType] : undefined;
  const resources = member ? parseHot(member)?.['resources'] : undefined;
  const servers =
    typeof resources === 'object' && resources !== null ? Object.entries(resources).filter(([, r]) => (r as { type?: unknown } | null)?.type === 'OS::Nova::Server') : [];
  return candidates.find((v) => servers.some(([name]) => name === v)) ?? candidates[0];
}

/** The Base HOT's groups that hold a VDU of the flavour, in either form. */
export function vduGroups(templates: Pick<HeatTemplates, 'template' | 'files'>, flavour: Flavour): VduGroup[] {
  const top = parseHot(templates.template);
  if (!top) return [];
  const out: VduGroup[] = [];
  for (const g of templateGroups(top)) {
    if (g.nfvVdu !== undefined) {
      if (flavour.vdus[g.nfvVdu]) out.push({ group: g.name, vduId: g.nfvVdu });
      continue;
    }
    if (!sizedBySignals(g)) continue;
    const has = (name: string) => g.policies.some((p) => p.name === name);
    const aspect = Object.values(flavour.aspects).find((a) => has(policyName(a.id, 'out')) || has(policyName(a.id, 'in')));
    const vduId = aspect && vduOfGroup(g, aspect, templates);
    if (!aspect || !vduId) continue;
    const scaleOut = policyName(aspect.id, 'out');
    const scaleIn = policyName(aspect.id, 'in');
    out.push({ group: g.name, vduId, policies: { aspectId: aspect.id, ...(has(scaleOut) ? { scaleOut } : {}), ...(has(scaleIn) ? { scaleIn } : {}) } });
  }
  return out;
}

/**
 * The members each group must have: its VDU's replicas for a group sized by
 * signals, the desired_capacity the nfv parameter carries (after
 * additionalParams.nfv) for one that reads it.
 */
export function groupSizes(groups: readonly VduGroup[], replicas: Record<string, number>, nfv: NfvParameter): ScalingGroupSize[] {
  return groups.flatMap((g) => {
    const fromNfv = nfv.VDU[g.vduId]?.desired_capacity;
    const members = g.policies ? replicas[g.vduId] : typeof fromNfv === 'number' ? fromNfv : replicas[g.vduId];
    return members === undefined ? [] : [{ group: g.group, members, vduId: g.vduId }];
  });
}

/**
 * For a scale of an aspect in Tacker v1's form, the policy to signal and the
 * group's size after each step; undefined when the aspect's group reads the
 * nfv parameter (or the aspect has no group). Refused when the policy for
 * the direction is missing from the template.
 */
export function policySignal(
  groups: readonly VduGroup[],
  flavour: Flavour,
  scale: { aspectId: string; fromLevel: number; toLevel: number; replicas: Record<string, number> },
  templatePath: string,
): ScalingPolicySignal | undefined {
  const g = groups.find((x) => x.policies?.aspectId === scale.aspectId);
  const aspect = flavour.aspects[scale.aspectId];
  if (!g?.policies || !aspect) return undefined;
  const out = scale.toLevel > scale.fromLevel;
  const policy = out ? g.policies.scaleOut : g.policies.scaleIn;
  if (!policy) {
    const missing = policyName(scale.aspectId, out ? 'out' : 'in');
    throw new UsageError(`the Base HOT ${templatePath} scales aspect ${scale.aspectId} through OS::Heat::ScalingPolicy resources, and has no ${missing}`, {
      hint: `add ${missing} (type OS::Heat::ScalingPolicy, auto_scaling_group_id: {get_resource: ${g.group}}, adjustment_type: change_in_capacity, scaling_adjustment: ${out ? '' : '-'}the aspect's delta), as Tacker v1's templates have`,
    });
  }
  const from = scale.replicas[g.vduId] ?? 0;
  const steps: number[] = [];
  for (let level = scale.fromLevel; level !== scale.toLevel;) {
    level += out ? 1 : -1;
    steps.push(from + aspectDelta(aspect, g.vduId, scale.fromLevel, level));
  }
  return { policy, group: g.group, vduId: g.vduId, from, steps };
}
