/**
 * Tacker's description of an instance as vnf-adopt reads it (lcm/tacker-instance.ts):
 * the v2 API's VnfInstance, v1's `openstack vnflcm show -f json` with
 * tackerclient's display names, lists of them, and the scale levels Tacker
 * recorded checked against the VNFD (planners/adoption.ts).
 */
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { readTackerInstances } from '../../src/lcm/tacker-instance.js';
import { adoptedScale } from '../../src/lcm/planners/adoption.js';
import type { Flavour } from '../../src/vnfd/index.js';

const V2 = {
  id: '8d3f7c52-1e4b-4a36-9b0e-6c1d2a3b4c5d',
  vnfInstanceName: 'web',
  vnfdId: 'vnfd-1',
  vimConnectionInfo: { vim1: { vimId: 'tacker-vim', vimType: 'kubernetes' } },
  instantiationState: 'INSTANTIATED',
  instantiatedVnfInfo: {
    flavourId: 'simple',
    vnfState: 'STARTED',
    scaleStatus: [{ aspectId: 'a1', scaleLevel: 1 }],
    metadata: { namespace: 'team-a', tenant: 'team-a', 'lcm-kubernetes-def-files': ['Files/k.yaml'] },
  },
};

const V1_SHOW = {
  ID: 'b2e9a4c1-7f3d-4e8a-a1b2-c3d4e5f6a7b8',
  'VNF Instance Name': 'legacy',
  'VNFD ID': 'vnfd-1',
  'Instantiation State': 'INSTANTIATED',
  'VIM Connection Info': [{ id: 'c1', vimId: 'v1-vim', vimType: 'openstack' }],
  'Instantiated Vnf Info': {
    flavourId: 'simple',
    instanceId: 'stack-uuid',
    scaleStatus: [],
    additionalParams: { 'lcm-kubernetes-def-files': ['Files/a.yaml'], namespace: 'ns-1' },
  },
  vnfPkgId: 'pkg-1',
};

describe('readTackerInstances', () => {
  it.each([
    [
      'v2 API',
      V2,
      { api: 'v2', id: V2.id, vnfInstanceName: 'web', vimId: 'tacker-vim', vimType: 'kubernetes', namespace: 'team-a', defFiles: ['Files/k.yaml'], flavourId: 'simple' },
    ],
    [
      'v1 show -f json (display names)',
      V1_SHOW,
      { api: 'v1', id: V1_SHOW.ID, vnfInstanceName: 'legacy', vimId: 'v1-vim', vimType: 'openstack', namespace: 'ns-1', defFiles: ['Files/a.yaml'], stackId: 'stack-uuid' },
    ],
    ['v2 OpenStack: stack_id in metadata', { ...V2, instantiatedVnfInfo: { ...V2.instantiatedVnfInfo, metadata: { stack_id: 's-2' } } }, { api: 'v2', stackId: 's-2' }],
  ])('%s', (_what, doc, want) => {
    const [one] = readTackerInstances('f.json', doc);
    expect(one).toMatchObject({ source: 'f.json', ...want });
  });

  it('reads a list (an array, or the object of GET .../vnf_instances) naming each item', () => {
    expect(readTackerInstances('l.json', [V2, V1_SHOW]).map((t) => `${t.source} ${t.api}`)).toEqual(['l.json[0] v2', 'l.json[1] v1']);
    expect(readTackerInstances('l.json', { vnfInstances: [V2] }).map((t) => t.source)).toEqual(['l.json[0]']);
  });

  it.each([
    ['an empty list', [], /lists no VNF instance/],
    ['no id', { ...V2, id: undefined }, /f\.json: id: is missing/],
    [
      'a scale level that is not a whole number',
      { ...V2, instantiatedVnfInfo: { ...V2.instantiatedVnfInfo, scaleStatus: [{ aspectId: 'a1', scaleLevel: 1.5 }] } },
      /scaleStatus\[0\]/,
    ],
    [
      'def files that are not a list of paths',
      { ...V2, instantiatedVnfInfo: { ...V2.instantiatedVnfInfo, metadata: { 'lcm-kubernetes-def-files': 'x.yaml' } } },
      /lcm-kubernetes-def-files/,
    ],
    ['not an object', 'text', /is not a VNF instance/],
  ])('refuses %s (exit 2)', (_what, doc, message) => {
    let caught: unknown;
    try {
      readTackerInstances('f.json', doc);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect((caught as Error).message).toMatch(message);
  });
});

describe('adoptedScale', () => {
  // One aspect over VDU1 (delta 1, max level 2), VDU1 starting at 1; VDU2 fixed at 1.
  const flavour = {
    id: 'simple',
    vdus: { VDU1: { vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 3 } }, VDU2: { vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 1 } } },
    aspects: { a1: { id: 'a1', name: 'a1', maxScaleLevel: 2, stepDeltas: ['d1'], vduDeltas: { VDU1: { d1: 1 } } } },
    initialDeltas: { VDU1: 1, VDU2: 1 },
    instantiationLevels: {},
  } as unknown as Flavour;
  const tacker = (level: number, aspectId = 'a1') =>
    readTackerInstances('f.json', { ...V2, instantiatedVnfInfo: { ...V2.instantiatedVnfInfo, scaleStatus: [{ aspectId, scaleLevel: level }] } })[0]!;
  const runs = (vduId: string, n: number) => `${vduId} runs ${n}`;

  it('records Tacker levels whose replicas run', () => {
    expect(adoptedScale(tacker(1), flavour, { VDU1: 2, VDU2: 1 }, runs)).toEqual({
      scaleStatus: [{ aspectId: 'a1', scaleLevel: 1 }],
      replicas: { VDU1: 2, VDU2: 1 },
      differences: [],
    });
  });

  it.each([
    ['replicas no level gives', tacker(0), { VDU1: 3 }, ["VDU1 runs 3; Tacker's scale level 0 of a1 gives 1"]],
    ['a level above the maximum', tacker(3), { VDU1: 3 }, ['aspect a1 is at scale level 3, above its max_scale_level 2 in the package']],
    ['an aspect the flavour lacks', tacker(0, 'other'), { VDU1: 1 }, ["Tacker's scaleStatus names aspect other, which flavour simple of the package does not have"]],
  ])('names %s', (_what, t, live, differences) => {
    expect(adoptedScale(t, flavour, live, runs).differences).toEqual(differences);
  });
});
