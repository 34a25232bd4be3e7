/**
 * What vnfm reads in a Heat template (HOT): the `get_param` paths into a JSON
 * parameter, and the scaling groups with how their size is set. Tacker's two
 * package generations size a group differently:
 *  - v2: `desired_capacity: {get_param: [nfv, VDU, <vdu>, desired_capacity]}`,
 *    changed by a stack update of the `nfv` parameter;
 *  - v1: `desired_capacity` written in the template (1, as a rule) and
 *    OS::Heat::ScalingPolicy resources `<aspect>_scale_out` /
 *    `<aspect>_scale_in` naming the group, signalled once per step.
 * A group of the second kind keeps the size its signals gave it only while
 * the stack is left alone: every stack update resizes a group to the
 * desired_capacity of the template it is given. So a template sent for such
 * a group carries the size it has to have (`withGroupSizes`).
 */
import yaml from 'js-yaml';
import type { HeatResource, StackRef } from './heat-wire.js';

export const GROUP_TYPE = 'OS::Heat::AutoScalingGroup';
export const POLICY_TYPE = 'OS::Heat::ScalingPolicy';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A template's YAML as Heat reads it, or undefined when it is not a mapping.
 * YAML 1.2's core schema: dates (`heat_template_version: 2018-08-31`) stay
 * strings, as Heat's loader keeps them.
 */
export function parseHot(text: string): Json | undefined {
  let doc: unknown;
  try {
    doc = yaml.load(text, { schema: yaml.CORE_SCHEMA });
  } catch {
    return undefined;
  }
  return isObject(doc) ? doc : undefined;
}

const resourcesOf = (template: Json): Record<string, Json> =>
  Object.fromEntries(Object.entries(isObject(template['resources']) ? template['resources'] : {}).filter((e): e is [string, Json] => isObject(e[1])));

/**
 * Every `get_param` list in the resources' properties (at any depth) whose
 * first item is `param`, without that first item: `[VDU, VDU1, flavor]`.
 * What Tacker's user data reads to know which keys a template takes
 * (v1 `create_initial_param_dict`, v2 `init_nfv_dict`).
 */
export function getParamPaths(template: Json, param: string): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObject(v)) {
      for (const [key, inner] of Object.entries(v)) {
        if (key === 'get_param' && Array.isArray(inner) && inner[0] === param && inner.slice(1).every((p) => typeof p === 'string' || typeof p === 'number')) {
          out.push(inner.slice(1) as Array<string | number>);
        } else walk(inner);
      }
    }
  };
  for (const resource of Object.values(resourcesOf(template))) walk(resource['properties']);
  return out;
}

/** A scaling group of a template's top level. */
export interface TemplateGroup {
  /** The OS::Heat::AutoScalingGroup resource's name. */
  name: string;
  /** The VDU whose `nfv.VDU.<vdu>.desired_capacity` sets its size (v2's form). */
  nfvVdu?: string;
  /** desired_capacity when the template writes it as a number. */
  desiredCapacity?: number;
  minSize?: number;
  maxSize?: number;
  /** The OS::Heat::ScalingPolicy resources whose auto_scaling_group_id is this group, with scaling_adjustment when a number. */
  policies: Array<{ name: string; adjustment?: number }>;
  /** `resource.type`: the member's template file (or resource type). */
  memberType?: string;
}

const numberOf = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const getResource = (v: unknown): string | undefined => (isObject(v) && typeof v['get_resource'] === 'string' ? v['get_resource'] : undefined);

/** The template's top-level scaling groups, each with the policies that adjust it. */
export function templateGroups(template: Json): TemplateGroup[] {
  const resources = resourcesOf(template);
  const policies = Object.entries(resources).filter(([, r]) => r['type'] === POLICY_TYPE);
  return Object.entries(resources)
    .filter(([, r]) => r['type'] === GROUP_TYPE)
    .map(([name, r]) => {
      const props = isObject(r['properties']) ? r['properties'] : {};
      const capacity = props['desired_capacity'];
      const path = isObject(capacity) && Array.isArray(capacity['get_param']) ? (capacity['get_param'] as unknown[]) : undefined;
      const nfvVdu = path?.length === 4 && path[0] === 'nfv' && path[1] === 'VDU' && path[3] === 'desired_capacity' && typeof path[2] === 'string' ? path[2] : undefined;
      const member = isObject(props['resource']) ? props['resource']['type'] : undefined;
      const own = policies.filter(([, p]) => isObject(p['properties']) && getResource(p['properties']['auto_scaling_group_id']) === name);
      const group: TemplateGroup = {
        name,
        policies: own.map(([policy, p]) => {
          const adjustment = numberOf((p['properties'] as Json)['scaling_adjustment']);
          return { name: policy, ...(adjustment !== undefined ? { adjustment } : {}) };
        }),
      };
      if (nfvVdu !== undefined) group.nfvVdu = nfvVdu;
      const literal = numberOf(capacity);
      if (literal !== undefined) group.desiredCapacity = literal;
      const min = numberOf(props['min_size']);
      if (min !== undefined) group.minSize = min;
      const max = numberOf(props['max_size']);
      if (max !== undefined) group.maxSize = max;
      if (typeof member === 'string') group.memberType = member;
      return group;
    });
}

/** A group whose size follows its policies' signals, not the nfv parameter: its templates must carry its size. */
export const sizedBySignals = (group: TemplateGroup): boolean => group.nfvVdu === undefined && group.policies.length > 0;

/**
 * The template with `desired_capacity` set to `sizes[group]` for each group
 * sized by signals that `sizes` names; undefined when each already has it.
 */
export function withGroupSizes(template: Json, sizes: Record<string, number>): Json | undefined {
  const changes = templateGroups(template).filter((g) => sizedBySignals(g) && sizes[g.name] !== undefined && g.desiredCapacity !== sizes[g.name]);
  if (changes.length === 0) return undefined;
  const resources = { ...(template['resources'] as Json) };
  for (const g of changes) {
    const r = resources[g.name] as Json;
    resources[g.name] = { ...r, properties: { ...(r['properties'] as Json), desired_capacity: sizes[g.name] } };
  }
  return { ...template, resources };
}

/** A top-level group's members as Heat lists them. */
export interface GroupMembers {
  /** Members that count towards the group's size (Heat leaves failed ones out). */
  members: number;
  /** Members in a *_FAILED state (marked unhealthy, or that failed to be made). */
  failed: number;
  /** The group's nested stack. */
  nested?: StackRef;
}

/** Each top-level scaling group's members, from a resource list of `stackId` with nested_depth 1 or more. */
export function groupMembers(resources: readonly HeatResource[], stackId: string): Record<string, GroupMembers> {
  const out: Record<string, GroupMembers> = {};
  for (const group of resources.filter((r) => r.stack.id === stackId && r.type === GROUP_TYPE)) {
    const nested = group.nestedStack;
    const inside = nested ? resources.filter((r) => r.stack.id === nested.id && !r.status.startsWith('DELETE')) : [];
    const failed = inside.filter((r) => r.status.endsWith('_FAILED')).length;
    out[group.name] = { members: inside.length - failed, failed, ...(nested ? { nested } : {}) };
  }
  return out;
}
