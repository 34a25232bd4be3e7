/**
 * operationParams on the FIELD/VALUE rows of op-show and of an operation's
 * result: a short request as its JSON, a long one (an instantiate with its
 * vimConnectionInfo and additionalParams runs to hundreds of characters)
 * summarised on one row of at most about a hundred characters.
 */
import { describe, expect, it } from 'vitest';
import { opOccSummaryView, paramsSummary, PARAMS_ROW_CHARS } from '../../src/cli/output/op-view.js';
import type { LcmOpOcc } from '../../src/lcm/index.js';

const instantiate = {
  flavourId: 'simple',
  instantiationLevelId: 'instantiation_level_1',
  vimConnectionInfo: { vim1: { vimId: '0a6f3b2c-9d7e-4f1a-8b5c-2e4d6f8a0b1c', vimType: 'ETSINFV.KUBERNETES.V_1', interfaceInfo: { endpoint: 'https://10.0.0.1:6443' } } },
  additionalParams: {
    namespace: 'production-network-functions',
    'lcm-kubernetes-def-files': ['Files/kubernetes/deployment.yaml', 'Files/kubernetes/service.yaml', 'Files/kubernetes/configmap.yaml'],
    vnfm_create_namespace: true,
    vnfm_readiness: { Deployment: { timeoutSeconds: 300 } },
  },
  extVirtualLinks: [{ id: 'ext1' }, { id: 'ext2' }],
};

describe('operationParams on a row', () => {
  it('a short request is its JSON', () => {
    expect(paramsSummary({ type: 'SCALE_OUT', aspectId: 'vdu1_aspect' })).toBe('{"type":"SCALE_OUT","aspectId":"vdu1_aspect"}');
  });

  it('a long request: each field, what an object holds, how many a list has, within the row', () => {
    expect(JSON.stringify(instantiate).length).toBeGreaterThan(400);
    const row = paramsSummary(instantiate);
    expect(row).toBe('flavourId="simple", instantiationLevelId="instantiation_level_1", +3 more fields (-o json for all)');
    expect(row.length).toBeLessThanOrEqual(PARAMS_ROW_CHARS + ' (-o json for all)'.length);
    const { flavourId: _f, instantiationLevelId: _l, vimConnectionInfo: _v, ...rest } = instantiate;
    expect(paramsSummary(rest)).toBe('additionalParams={namespace, lcm-kubernetes-def-files, vnfm_create_namespace, +1 mor…, +1 more field (-o json for all)');
  });

  it('op-show table rows hold the summary; -o json keeps the whole request', () => {
    const op = { id: 'op-1', operation: 'INSTANTIATE', operationState: 'COMPLETED', vnfInstanceId: 'i-1', operationParams: instantiate, journal: [] } as unknown as LcmOpOcc;
    const row = opOccSummaryView().toData(op) as { operationParams: string };
    expect(row.operationParams).not.toContain('production-network-functions');
    expect(row.operationParams).toMatch(/\(-o json for all\)$/);
  });
});
