/**
 * vnf-sync's record of the live state (lcm/sync.ts `synced`): VNFCs added
 * and removed, replicas, and the scale level the VNFD's deltas give, refused
 * when no level fits or the replicas leave vdu_profile (Tacker's sync_db).
 */
import { describe, expect, it } from 'vitest';
import { synced } from '../../src/lcm/sync.js';
import type { InstantiatedVnfInfo } from '../../src/model/lcm.js';
import type { Vnfc } from '../../src/model/resources.js';
import type { Flavour } from '../../src/vnfd/index.js';

// VDU1 scales by 2 per step up to level 2 (1, 3, 5 instances); VDU2 does not scale.
const flavour = {
  id: 'simple',
  vdus: {
    VDU1: { vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 5 } },
    VDU2: { vduProfile: { minNumberOfInstances: 1, maxNumberOfInstances: 2 } },
  },
  aspects: { vdu1_aspect: { id: 'vdu1_aspect', name: 'vdu1_aspect', maxScaleLevel: 2, stepDeltas: ['delta_1'], vduDeltas: { VDU1: { delta_1: 2 } } } },
  initialDeltas: { VDU1: 1, VDU2: 1 },
} as unknown as Flavour;

const owner = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace: 'ns' });
const pod = (vduId: string, name: string): Vnfc => ({
  id: `${vduId}-${name}`,
  vduId,
  resourceId: name,
  vimLevelResourceType: 'Deployment',
  owner: owner(vduId.toLowerCase()),
  state: 'STARTED',
});

const info: InstantiatedVnfInfo = {
  flavourId: 'simple',
  vnfState: 'STARTED',
  scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: 0 }],
  maxScaleLevels: [{ aspectId: 'vdu1_aspect', scaleLevel: 2 }],
  vnfcResourceInfo: [
    { id: 'vdu1-a', vduId: 'VDU1', computeResource: { resourceId: 'vdu1-a', vimLevelResourceType: 'Deployment' }, metadata: { owner: owner('vdu1') } },
    { id: 'vdu2-a', vduId: 'VDU2', computeResource: { resourceId: 'vdu2-a', vimLevelResourceType: 'Deployment' }, metadata: { owner: owner('vdu2') } },
  ],
  vnfcInfo: [
    { id: 'VDU1-vdu1-a', vduId: 'VDU1', vnfcResourceInfoId: 'vdu1-a', vnfcState: 'STARTED', vnfcConfigurableProperties: { kept: true } },
    { id: 'VDU2-vdu2-a', vduId: 'VDU2', vnfcResourceInfoId: 'vdu2-a', vnfcState: 'STARTED' },
  ],
  resources: [],
  metadata: { namespace: 'ns', 'lcm-kubernetes-def-files': [], vduReplicas: { VDU1: 1, VDU2: 1 } },
};

describe('synced', () => {
  it('changes nothing when the VIM has what is recorded', () => {
    const out = synced(info, flavour, { vnfcs: [pod('VDU1', 'vdu1-a'), pod('VDU2', 'vdu2-a')], replicas: { VDU1: 1, VDU2: 1 } });
    expect(out.changes).toEqual([]);
    expect(out.info).toEqual(info);
  });

  it('records the level the replicas give, the VNFCs added and removed, and keeps what vnf-update set on a VNFC that stays', () => {
    const live = [pod('VDU1', 'vdu1-a'), pod('VDU1', 'vdu1-b'), pod('VDU1', 'vdu1-c'), pod('VDU2', 'vdu2-z')];
    const out = synced(info, flavour, { vnfcs: live, replicas: { VDU1: 3, VDU2: 1 } });
    expect(out.changes.map((c) => c.message)).toEqual([
      'vdu1_aspect scale level 0 → 1',
      'VDU1 replicas 1 → 3',
      'vnfc added: VDU1-vdu1-b (Pod vdu1-b)',
      'vnfc added: VDU1-vdu1-c (Pod vdu1-c)',
      'vnfc added: VDU2-vdu2-z (Pod vdu2-z)',
      'vnfc removed: VDU2-vdu2-a (vdu2-a)',
    ]);
    expect(out.info.scaleStatus).toEqual([{ aspectId: 'vdu1_aspect', scaleLevel: 1 }]);
    expect(out.info.metadata.vduReplicas).toEqual({ VDU1: 3, VDU2: 1 });
    expect(out.info.vnfcInfo.find((c) => c.id === 'VDU1-vdu1-a')?.vnfcConfigurableProperties).toEqual({ kept: true });
    expect(out.info.vnfcResourceInfo.map((r) => r.id)).toEqual(['vdu1-a', 'vdu1-b', 'vdu1-c', 'vdu2-z']);
  });

  it("a Heat VNF: the recorded nfv parameter takes the group's live size, which the next stack update sends again", () => {
    const nfv = { VDU: { VDU1: { desired_capacity: 1, computeFlavourId: 'm1.tiny' }, VDU2: { computeFlavourId: 'm1.tiny' } }, CP: {} };
    const heat = { stackName: 'vnf-x', templatePath: 'BaseHOT/simple/top.yaml', nfv, environments: [] };
    const heatInfo = { ...info, metadata: { ...info.metadata, heat } } as InstantiatedVnfInfo;
    const live = [pod('VDU1', 'vdu1-a'), pod('VDU1', 'vdu1-b'), pod('VDU1', 'vdu1-c'), pod('VDU2', 'vdu2-a')];
    const out = synced(heatInfo, flavour, { vnfcs: live, replicas: { VDU1: 3, VDU2: 1 } });
    expect((out.info.metadata as unknown as { heat: typeof heat }).heat).toEqual({
      ...heat,
      nfv: { VDU: { VDU1: { desired_capacity: 3, computeFlavourId: 'm1.tiny' }, VDU2: { computeFlavourId: 'm1.tiny' } }, CP: {} },
    });
    // Nothing changed: the record stays as it was.
    expect((synced(heatInfo, flavour, { vnfcs: live.slice(0, 1).concat(live[3]!), replicas: { VDU1: 1, VDU2: 1 } }).info.metadata as unknown as { heat: typeof heat }).heat).toBe(
      heat,
    );
  });

  it('refuses replicas no scale level gives, naming what each level gives', () => {
    expect(() => synced(info, flavour, { vnfcs: [], replicas: { VDU1: 2, VDU2: 1 } })).toThrow(
      /the live replicas \(VDU1 2\) match no scale level of aspect vdu1_aspect \(levels 0 to 2 give VDU1: 1, 3, 5\): nothing was recorded/,
    );
  });

  it('refuses replicas outside the VDU profile, as Tacker does', () => {
    expect(() => synced(info, flavour, { vnfcs: [], replicas: { VDU1: 1, VDU2: 3 } })).toThrow(/VDU VDU2 runs 3 instances, outside its vdu_profile \(1 to 2\)/);
  });
});
