/** Replica counts from the basic-cnf VNFD's levels, initial deltas and aspect deltas. */
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { aspectDelta, levelReplicas, scaledReplicas } from '../../src/lcm/index.js';
import { loadVnfd, type Flavour, type ScalingAspect } from '../../src/vnfd/index.js';

let simple: Flavour;

beforeAll(async () => {
  const files = await openPackage(resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package'));
  simple = (await loadVnfd(files, 'Definitions/basic_cnf_top.vnfd.yaml')).vnfd!.flavours['simple']!;
  await files.close();
});

describe('levelReplicas', () => {
  it('uses VduInstantiationLevels and the level scale_info', () => {
    expect(levelReplicas(simple, 'instantiation_level_2')).toEqual({
      replicas: { VDU1: 2, VDU2: 2 },
      scaleStatus: [
        { aspectId: 'vdu1_aspect', scaleLevel: 1 },
        { aspectId: 'vdu2_aspect', scaleLevel: 1 },
      ],
      maxScaleLevels: [
        { aspectId: 'vdu1_aspect', scaleLevel: 2 },
        { aspectId: 'vdu2_aspect', scaleLevel: 1 },
      ],
      instantiationLevelId: 'instantiation_level_2',
    });
  });

  it('takes the default level when none is asked for', () => {
    expect(levelReplicas(simple)).toMatchObject({ replicas: { VDU1: 1, VDU2: 1 }, instantiationLevelId: 'instantiation_level_1' });
  });

  it('falls back to VduInitialDelta plus the aspect deltas up to the scale level for VDUs the level does not list', () => {
    const flavour: Flavour = {
      ...simple,
      instantiationLevels: { big: { id: 'big', scaleInfo: { vdu1_aspect: { scaleLevel: 2 } }, vduInstances: {} } },
      defaultLevel: 'big',
      initialDeltas: { VDU1: 1 },
    };
    expect(levelReplicas(flavour).replicas).toEqual({ VDU1: 3, VDU2: 1 });
    expect(levelReplicas({ ...flavour, instantiationLevels: {}, defaultLevel: undefined })).toEqual({
      replicas: { VDU1: 1, VDU2: 1 },
      scaleStatus: [
        { aspectId: 'vdu1_aspect', scaleLevel: 0 },
        { aspectId: 'vdu2_aspect', scaleLevel: 0 },
      ],
      maxScaleLevels: expect.any(Array),
    });
  });
});

describe('aspect deltas', () => {
  const aspect: ScalingAspect = {
    id: 'a',
    name: 'a',
    maxScaleLevel: 4,
    stepDeltas: ['d1', 'd2'],
    vduDeltas: { VDU1: { d1: 1, d2: 3 } },
  };
  it.each([
    [0, 1, 1],
    [0, 2, 4],
    [1, 4, 9],
    [4, 1, -9],
    [2, 2, 0],
  ])('from level %i to %i adds %i (the last step delta repeats)', (from, to, want) => {
    expect(aspectDelta(aspect, 'VDU1', from, to)).toBe(want);
  });

  it('scaledReplicas changes only the VDUs of the aspect', () => {
    expect(scaledReplicas(simple, { VDU1: 1, VDU2: 2 }, 'vdu1_aspect', 0, 2)).toEqual({ VDU1: 3, VDU2: 2 });
    expect(scaledReplicas(simple, { VDU1: 3, VDU2: 2 }, 'vdu1_aspect', 2, 1)).toEqual({ VDU1: 2, VDU2: 2 });
  });
});
