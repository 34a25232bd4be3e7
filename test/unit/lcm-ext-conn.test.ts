/**
 * Change external connectivity (CHANGE_EXT_CONN) of an OpenStack VNF with a
 * real store, the heat-vnf sample onboarded and an in-memory OpenStack
 * infra-driver: the stack's nfv parameter gets the new connection points
 * and keeps the rest; bad requests are refused with nothing recorded;
 * a failure is FAILED_TEMP, retried or rolled back to the nfv before.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onboardPackage } from '../../src/csar/index.js';
import { ValidationError } from '../../src/errors.js';
import type { OpenStackInfraDriver, OpenStackScaleInput } from '../../src/infra/openstack/driver-contract.js';
import { changeExtConn, createVnf, getVnf, instantiateVnf, listOpOccs, modifyVnfInfo, retryOpOcc, rollbackOpOcc, type LcmDeps } from '../../src/lcm/index.js';
import type { HookContext } from '../../src/mgmt/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { Vim } from '../../src/vim/index.js';
import { FakeInfraDriver } from '../support/fake-infra-driver.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/heat-vnf');
const request = (name: string) => JSON.parse(readFileSync(join(SAMPLE, 'requests', name), 'utf8')) as Record<string, unknown>;

let home: string;
let store: Store;
let deps: LcmDeps;
let updates: OpenStackScaleInput[];
let failNext: Error | undefined;
let hooks: string[];

const vim: Vim = {
  id: 'vim-os',
  name: 'openstack',
  description: '',
  isDefault: true,
  spec: { type: 'openstack', authUrl: 'http://127.0.0.1:5000/v3', projectName: 'demo', auth: { method: 'password', username: 'u' }, verifyTls: true },
  secretNames: [],
  status: 'REACHABLE',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

const driver: OpenStackInfraDriver = {
  deploy: async () => [{ apiVersion: 'heat', kind: 'Stack', name: 'vnf' }],
  scale: async (_ctx, input) => {
    updates.push(input);
    if (failNext) {
      const e = failNext;
      failNext = undefined;
      throw e;
    }
  },
  heal: async () => {},
  remove: async () => {},
  changePackage: async () => [],
  listVnfcs: async () => [],
};

const link = (id: string, network: string, cpdId = 'VDU1_CP1') => ({
  id,
  resourceId: network,
  extCps: [
    {
      cpdId,
      cpConfig: {
        [`${cpdId}_1`]: {
          cpProtocolData: [{ layerProtocol: 'IP_OVER_ETHERNET', ipOverEthernet: { ipAddresses: [{ type: 'IPV4', fixedAddresses: ['10.10.0.5'], subnetId: 'subnet-new' }] } }],
        },
      },
    },
  ],
});

beforeEach(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-extconn-')), 'home');
  store = openStore(home);
  await onboardPackage({ packages: store.packages, home, now: () => new Date() }, { path: join(SAMPLE, 'package') });
  store.vims.insert(vim, undefined);
  updates = [];
  hooks = [];
  failNext = undefined;
  deps = {
    store,
    home,
    now: () => new Date(),
    openVimSecrets: async () => ({ password: 'p' }),
    kubernetesDriver: () => new FakeInfraDriver(),
    openstackDriver: () => driver,
    mgmt: { runHook: async (ctx: HookContext) => void hooks.push(ctx.hook) },
  };
});

afterEach(() => store.close());

async function instantiated(): Promise<string> {
  const pkg = store.packages.list()[0]!;
  const vnf = createVnf(deps, { vnfdId: pkg.vnfdId, name: 'vm' });
  await instantiateVnf(deps, vnf.id, request('instantiate.json'));
  hooks.length = 0;
  return vnf.id;
}

type Nfv = { VDU: Record<string, unknown>; CP: Record<string, { network?: string; fixed_ips?: unknown[] }> };
const nfvOf = (id: string) => (getVnf(deps, id).instantiatedVnfInfo!.metadata as unknown as { heat: { nfv: Nfv; extVirtualLinks: { id: string }[] } }).heat;

describe('vnf-change-ext-conn (OpenStack)', () => {
  it("updates the stack's nfv: the named connection point gets the new network and fixed IP, the rest stays; hooks around", async () => {
    const id = await instantiated();
    const before = nfvOf(id);
    const r = await changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-2', 'net-new')] });
    expect(r.opOcc).toMatchObject({ operation: 'CHANGE_EXT_CONN', operationState: 'COMPLETED' });
    expect(updates).toHaveLength(1);
    expect(updates[0]!.remove).toEqual({});
    expect(updates[0]!.nfv.CP['VDU1_CP1']).toEqual({ network: 'net-new', fixed_ips: [{ ip_address: '10.10.0.5', subnet: 'subnet-new' }] });
    expect(updates[0]!.nfv.CP['VDU2_CP1']).toEqual(before.nfv.CP['VDU2_CP1']);
    expect(updates[0]!.nfv.VDU).toEqual(before.nfv.VDU);
    const after = nfvOf(id);
    expect(after.nfv).toEqual(updates[0]!.nfv);
    expect(after.extVirtualLinks.map((l) => l.id)).toEqual(['ext-vl-1', 'ext-vl-2']);
    expect(hooks).toEqual(['change_external_connectivity_start', 'change_external_connectivity_end']);
  });

  it('an unknown connection point, an unknown field or no links: exit 2, nothing recorded', async () => {
    const id = await instantiated();
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('x', 'n', 'NOPE_CP')] })).rejects.toThrow(/extCps\[0\]\.cpdId: "?NOPE_CP"? is not an external connection point/);
    await expect(changeExtConn(deps, id, { extVirtualLink: [] })).rejects.toThrow(ValidationError);
    await expect(changeExtConn(deps, id, { extVirtualLinks: [] })).rejects.toThrow(/extVirtualLinks: is required/);
    expect(listOpOccs(deps, { vnf: id }).map((o) => o.operation)).toEqual(['INSTANTIATE']);
    expect(updates).toEqual([]);
  });

  it('a Heat failure is FAILED_TEMP; retry completes; rollback updates the stack with the nfv before', async () => {
    const id = await instantiated();
    const before = nfvOf(id);
    failNext = new Error('UPDATE_FAILED: port quota exceeded');
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-2', 'net-new')] })).rejects.toThrow(
      /CHANGE_EXT_CONN of vnf instance .* failed: UPDATE_FAILED.*FAILED_TEMP/,
    );
    const op = listOpOccs(deps, { vnf: id }).find((o) => o.operationState === 'FAILED_TEMP')!;
    expect(nfvOf(id)).toEqual(before);
    const back = await rollbackOpOcc(deps, op.id);
    expect(back.opOcc.operationState).toBe('ROLLED_BACK');
    expect(updates.at(-1)!.nfv).toEqual(before.nfv);

    failNext = new Error('UPDATE_FAILED: again');
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-1', 'net-3')] })).rejects.toThrow(/FAILED_TEMP/);
    const second = listOpOccs(deps, { vnf: id }).find((o) => o.operationState === 'FAILED_TEMP')!;
    const retried = await retryOpOcc(deps, second.id);
    expect(retried.opOcc.operationState).toBe('COMPLETED');
    expect(nfvOf(id).nfv.CP['VDU1_CP1']?.network).toBe('net-3');
    // The link of the same id is replaced, not added.
    expect(nfvOf(id).extVirtualLinks.map((l) => l.id)).toEqual(['ext-vl-1']);
  });
});

describe('vnf-update of an OpenStack VNF', () => {
  it('changes the records only (no stack update), with the modify_information hooks; another VIM is refused', async () => {
    const id = await instantiated();
    const r = await modifyVnfInfo(deps, id, { vnfInstanceName: 'vm-2', extensions: { site: 'a' } });
    expect(r.opOcc).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    expect(getVnf(deps, id)).toMatchObject({ vnfInstanceName: 'vm-2', extensions: { site: 'a' } });
    expect(updates).toEqual([]);
    expect(hooks).toEqual(['modify_information_start', 'modify_information_end']);
    await expect(modifyVnfInfo(deps, id, { vimConnectionInfo: { vim1: { vimId: 'openstack', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } } })).rejects.toThrow(
      /moves an OpenStack VNF to another VIM/,
    );
  });
});
