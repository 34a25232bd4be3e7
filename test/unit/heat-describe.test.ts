/**
 * vnf-describe's tree of a Heat stack, from a resource list shaped as Heat
 * returns it with nested_depth (a Tacker v2 VM package: VDU1 an
 * AutoScalingGroup of a provider template holding the server and its port).
 */
import { describe, expect, it } from 'vitest';
import { heatTree, type HeatResourceRow } from '../../src/infra/openstack/describe.js';

const TOP = { name: 'vnf-7d4f', id: 'top-id' };
const GROUP = { name: 'vnf-7d4f-VDU1-g3rxs5eqmwpz', id: 'group-id' };
const MEMBER_A = { name: 'vnf-7d4f-VDU1-g3rxs5eqmwpz-a2b3c4d5e6f7-4xzvmjlhb2qk', id: 'member-a' };
const MEMBER_B = { name: 'vnf-7d4f-VDU1-g3rxs5eqmwpz-b7c8d9e0f1a2-cfvrm3jk5wnq', id: 'member-b' };

const row = (stack: { name: string; id: string }, name: string, type: string, status = 'CREATE_COMPLETE', extra: Partial<HeatResourceRow> = {}): HeatResourceRow => ({
  name,
  type,
  status,
  statusReason: status === 'CREATE_COMPLETE' ? 'state changed' : '',
  physicalId: `${name}-physical`,
  stack,
  ...extra,
});

const resources: HeatResourceRow[] = [
  row(TOP, 'VDU1', 'OS::Heat::AutoScalingGroup', 'CREATE_COMPLETE', { nestedStack: GROUP }),
  row(TOP, 'internalVL1', 'OS::Neutron::Net'),
  row(TOP, 'internalVL1_subnet', 'OS::Neutron::Subnet'),
  row(GROUP, 'a2b3c4d5e6f7', 'VDU1.yaml', 'CREATE_COMPLETE', { nestedStack: MEMBER_A }),
  row(GROUP, 'b7c8d9e0f1a2', 'VDU1.yaml', 'CREATE_FAILED', {
    nestedStack: MEMBER_B,
    statusReason: 'Resource CREATE failed: ResourceInError: resources.VDU1: Went to status ERROR due to "Message: No valid host was found."',
  }),
  row(MEMBER_A, 'VDU1', 'OS::Nova::Server'),
  row(MEMBER_A, 'VDU1_CP1', 'OS::Neutron::Port'),
  row(MEMBER_B, 'VDU1', 'OS::Nova::Server', 'CREATE_FAILED', { statusReason: 'ResourceInError: resources.VDU1: Went to status ERROR due to "Message: No valid host was found."' }),
  row(MEMBER_B, 'VDU1_CP1', 'OS::Neutron::Port', 'INIT_COMPLETE'),
];

describe('heatTree', () => {
  const tree = heatTree(resources, TOP.id);

  it('nests each stack resource over the resources of the stack it made, in Heat order', () => {
    expect(tree.map((n) => `${n.kind}/${n.name}`)).toEqual(['OS::Heat::AutoScalingGroup/VDU1', 'OS::Neutron::Net/internalVL1', 'OS::Neutron::Subnet/internalVL1_subnet']);
    const group = tree[0]!;
    expect(group.replicas).toBe(2);
    expect(group.children.map((c) => c.name)).toEqual(['a2b3c4d5e6f7', 'b7c8d9e0f1a2']);
    expect(group.children[0]!.children.map((c) => `${c.kind}/${c.name}`)).toEqual(['OS::Nova::Server/VDU1', 'OS::Neutron::Port/VDU1_CP1']);
    expect(group.children[0]!.children[0]).toMatchObject({ id: 'VDU1-physical', ready: true, reason: 'ready', drift: [] });
  });

  it('marks a failed resource not ready, with its status reason as the reason and as drift', () => {
    const failed = tree[0]!.children[1]!;
    expect(failed).toMatchObject({ ready: false, exists: true });
    expect(failed.reason).toMatch(/^CREATE_FAILED: Resource CREATE failed: ResourceInError/);
    const server = failed.children[0]!;
    expect(server.drift).toEqual(['CREATE_FAILED: ResourceInError: resources.VDU1: Went to status ERROR due to "Message: No valid host was found."']);
    expect(failed.children[1]).toMatchObject({ ready: false, reason: 'not created yet (INIT_COMPLETE)', drift: [] });
  });

  it('takes a resource marked unhealthy (CHECK_FAILED) as drift and an empty stack as no resources', () => {
    const [marked] = heatTree([row(TOP, 'VDU2', 'OS::Nova::Server', 'CHECK_FAILED', { statusReason: 'heal of VDU2 by vnfm' })], TOP.id);
    expect(marked).toMatchObject({ ready: false, drift: ['CHECK_FAILED: heal of VDU2 by vnfm'] });
    expect(heatTree([], TOP.id)).toEqual([]);
  });
});
