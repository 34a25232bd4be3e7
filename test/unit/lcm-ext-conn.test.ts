/**
 * Change external connectivity (CHANGE_EXT_CONN) of an OpenStack VNF with a
 * real store, the heat-vnf sample onboarded and an in-memory OpenStack
 * infra-driver: the stack's nfv parameter gets the new connection points
 * and keeps the rest; bad requests are refused with nothing recorded;
 * a failure is FAILED_TEMP, retried or rolled back to the nfv before.
 * vimConnectionInfo (Tacker v2's map) is merged into the instance and the
 * stack updated on the VIM it gives; a rollback runs on the VIM the instance
 * had, which it keeps; Tacker v1's array is not used.
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
import type { VimConnection } from '../../src/lcm/index.js';
import { loadKeyring } from '../../src/crypto/index.js';
import type { Open, Seal } from '../../src/mgmt/sealed.js';
import { FakeInfraDriver } from '../support/fake-infra-driver.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/heat-vnf');
const request = (name: string) => JSON.parse(readFileSync(join(SAMPLE, 'requests', name), 'utf8')) as Record<string, unknown>;

let home: string;
let store: Store;
let deps: LcmDeps;
let updates: OpenStackScaleInput[];
let failNext: Error | undefined;
let hooks: string[];
/** The VIM each stack operation connected to. */
let connected: VimConnection[];
let notices: string[];

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

const keyring = loadKeyring({ home: mkdtempSync(join(tmpdir(), 'vnfm-extconn-key-')), env: {}, createIfMissing: true });
const seal: Seal = async (plain) => {
  const { token, keyId } = keyring.encrypt(plain);
  return { sealed: token, keyId };
};
const open: Open = async (v) => keyring.decrypt(v.sealed, v.keyId);

beforeEach(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-extconn-')), 'home');
  store = openStore(home);
  await onboardPackage({ packages: store.packages, home, now: () => new Date() }, { path: join(SAMPLE, 'package') });
  await store.vims.insert(vim, undefined);
  updates = [];
  hooks = [];
  connected = [];
  notices = [];
  failNext = undefined;
  deps = {
    store,
    home,
    now: () => new Date(),
    openVimSecrets: async () => ({ password: 'p' }),
    kubernetesDriver: () => new FakeInfraDriver(),
    openstackDriver: (v) => {
      connected.push(v);
      return driver;
    },
    seal,
    open,
    mgmt: { runHook: async (ctx: HookContext) => void hooks.push(ctx.hook) },
  };
});

afterEach(async () => await store.close());

async function instantiated(): Promise<string> {
  const pkg = (await store.packages.list())[0]!;
  const vnf = await createVnf(deps, { vnfdId: pkg.vnfdId, name: 'vm' });
  await instantiateVnf(deps, vnf.id, request('instantiate.json'));
  hooks.length = 0;
  return vnf.id;
}

type Nfv = { VDU: Record<string, unknown>; CP: Record<string, { network?: string; fixed_ips?: unknown[] }> };
const nfvOf = async (id: string) => ((await getVnf(deps, id)).instantiatedVnfInfo!.metadata as unknown as { heat: { nfv: Nfv; extVirtualLinks: { id: string }[] } }).heat;

describe('vnf-change-ext-conn (OpenStack)', () => {
  it("updates the stack's nfv: the named connection point gets the new network and fixed IP, the rest stays; hooks around", async () => {
    const id = await instantiated();
    const before = await nfvOf(id);
    const r = await changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-2', 'net-new')] });
    expect(r.opOcc).toMatchObject({ operation: 'CHANGE_EXT_CONN', operationState: 'COMPLETED' });
    expect(updates).toHaveLength(1);
    expect(updates[0]!.remove).toEqual({});
    expect(updates[0]!.nfv.CP['VDU1_CP1']).toEqual({ network: 'net-new', fixed_ips: [{ ip_address: '10.10.0.5', subnet: 'subnet-new' }] });
    expect(updates[0]!.nfv.CP['VDU2_CP1']).toEqual(before.nfv.CP['VDU2_CP1']);
    expect(updates[0]!.nfv.VDU).toEqual(before.nfv.VDU);
    const after = await nfvOf(id);
    expect(after.nfv).toEqual(updates[0]!.nfv);
    expect(after.extVirtualLinks.map((l) => l.id)).toEqual(['ext-vl-1', 'ext-vl-2']);
    expect(hooks).toEqual(['change_external_connectivity_start', 'change_external_connectivity_end']);
  });

  it('an unknown connection point, an unknown field or no links: exit 2, nothing recorded', async () => {
    const id = await instantiated();
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('x', 'n', 'NOPE_CP')] })).rejects.toThrow(/extCps\[0\]\.cpdId: "?NOPE_CP"? is not an external connection point/);
    await expect(changeExtConn(deps, id, { extVirtualLink: [] })).rejects.toThrow(ValidationError);
    await expect(changeExtConn(deps, id, { extVirtualLinks: [] })).rejects.toThrow(/extVirtualLinks: is required/);
    expect((await listOpOccs(deps, { vnf: id })).map((o) => o.operation)).toEqual(['INSTANTIATE']);
    expect(updates).toEqual([]);
  });

  it('a Heat failure is FAILED_TEMP; retry completes; rollback updates the stack with the nfv before', async () => {
    const id = await instantiated();
    const before = await nfvOf(id);
    failNext = new Error('UPDATE_FAILED: port quota exceeded');
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-2', 'net-new')] })).rejects.toThrow(
      /CHANGE_EXT_CONN of vnf instance .* failed: UPDATE_FAILED.*FAILED_TEMP/,
    );
    const op = (await listOpOccs(deps, { vnf: id })).find((o) => o.operationState === 'FAILED_TEMP')!;
    expect(await nfvOf(id)).toEqual(before);
    const back = await rollbackOpOcc(deps, op.id);
    expect(back.opOcc.operationState).toBe('ROLLED_BACK');
    expect(updates.at(-1)!.nfv).toEqual(before.nfv);

    failNext = new Error('UPDATE_FAILED: again');
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-1', 'net-3')] })).rejects.toThrow(/FAILED_TEMP/);
    const second = (await listOpOccs(deps, { vnf: id })).find((o) => o.operationState === 'FAILED_TEMP')!;
    const retried = await retryOpOcc(deps, second.id);
    expect(retried.opOcc.operationState).toBe('COMPLETED');
    expect((await nfvOf(id)).nfv.CP['VDU1_CP1']?.network).toBe('net-3');
    // The link of the same id is replaced, not added.
    expect((await nfvOf(id)).extVirtualLinks.map((l) => l.id)).toEqual(['ext-vl-1']);
  });
});

describe('vnf-change-ext-conn with vimConnectionInfo', () => {
  /** sol_v2_common/paramgen.py change_ext_conn_max's vimConnectionInfo: vim1 the cloud's credentials, vim2 a dummy. */
  const changeExtConnMax = (password = 'devstack') => ({
    extVirtualLinks: [link('ext-vl-2', 'net-new')],
    vimConnectionInfo: {
      vim1: {
        vimId: '3a1e2b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b',
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
        interfaceInfo: { endpoint: 'http://127.0.0.2:5000/v3' },
        accessInfo: { username: 'nfv_user', region: 'RegionOne', password, project: 'nfv', projectDomain: 'Default', userDomain: 'Default' },
        extra: { 'dummy-key': 'dummy-val' },
      },
      vim2: {
        vimId: '4b2f3c5d-6e7f-4081-9bac-1d2e3f4a5b6c',
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
        interfaceInfo: { endpoint: 'http://127.0.0.2:5000/v3' },
        accessInfo: { username: 'dummy_user', region: 'RegionOne', password: 'dummy_password', project: 'dummy_project', projectDomain: 'Default', userDomain: 'Default' },
        extra: { 'dummy-key': 'dummy-val' },
      },
    },
    additionalParams: { 'dummy-key': 'dummy-val' },
  });
  const onEvent = (e: { type: string; message?: string }) => void (e.type === 'notice' && notices.push(e.message!));
  const keptVim = async (id: string) => (await getVnf(deps, id)).vimConnectionInfo?.['vim1'];

  it('is merged into the instance as Tacker v2 merges it: the stack is updated on the merged VIM, which the instance then runs on', async () => {
    const id = await instantiated();
    const r = await changeExtConn(deps, id, changeExtConnMax(), { onEvent });
    expect(r.opOcc).toMatchObject({ operation: 'CHANGE_EXT_CONN', operationState: 'COMPLETED' });
    // The stack update connected to the VIM the request gives, not the one the instance had.
    expect(connected.at(-1)).toMatchObject({
      inline: true,
      spec: { authUrl: 'http://127.0.0.2:5000/v3', regionName: 'RegionOne', auth: { username: 'nfv_user' } },
      secrets: { password: 'devstack' },
    });
    expect(updates).toHaveLength(1);
    const after = await getVnf(deps, id);
    expect(after.vimId).toBeUndefined();
    expect(await keptVim(id)).toMatchObject({
      vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
      interfaceInfo: { endpoint: 'http://127.0.0.2:5000/v3' },
      extra: { 'dummy-key': 'dummy-val' },
    });
    expect(Object.keys(after.vimConnectionInfo!)).toEqual(['vim1']);
    expect(notices.join('\n')).toMatch(/vimConnectionInfo\.vim2 is not kept: an instance runs on one VIM/);
    // Kept and recorded sealed: neither the instance nor the occurrence holds a password in the clear.
    expect(JSON.stringify(after)).not.toMatch(/devstack|dummy_password/);
    expect(JSON.stringify(r.opOcc.operationParams)).not.toMatch(/devstack|dummy_password/);
    // The operations that follow run there: a second change reaches the same VIM.
    await changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-3', 'net-3', 'VDU2_CP1')] });
    expect(connected.at(-1)).toMatchObject({ inline: true, spec: { authUrl: 'http://127.0.0.2:5000/v3' }, secrets: { password: 'devstack' } });
  });

  it('a change that fails is retried on the merged VIM; rolled back, it runs on the VIM the instance had, which it keeps', async () => {
    const id = await instantiated();
    failNext = new Error('Stack vnf-x could not be found');
    await expect(changeExtConn(deps, id, changeExtConnMax('new-password'))).rejects.toThrow(/FAILED_TEMP/);
    const op = (await listOpOccs(deps, { vnf: id })).find((o) => o.operationState === 'FAILED_TEMP')!;
    expect(connected.at(-1)).toMatchObject({ inline: true, secrets: { password: 'new-password' } });
    // Nothing of the instance changed yet: its VIM is the registered one.
    expect(await getVnf(deps, id)).toMatchObject({ vimId: 'vim-os' });
    expect((await getVnf(deps, id)).vimConnectionInfo).toBeUndefined();
    const back = await rollbackOpOcc(deps, op.id);
    expect(back.opOcc.operationState).toBe('ROLLED_BACK');
    expect(connected.at(-1)).toMatchObject({ inline: false, id: 'vim-os' });
    expect(await getVnf(deps, id)).toMatchObject({ vimId: 'vim-os' });
    expect((await getVnf(deps, id)).vimConnectionInfo).toBeUndefined();

    failNext = new Error('UPDATE_FAILED: again');
    await expect(changeExtConn(deps, id, changeExtConnMax('new-password'))).rejects.toThrow(/FAILED_TEMP/);
    const second = (await listOpOccs(deps, { vnf: id })).find((o) => o.operationState === 'FAILED_TEMP')!;
    expect((await retryOpOcc(deps, second.id)).opOcc.operationState).toBe('COMPLETED');
    // The retry reopened the credentials the occurrence kept sealed.
    expect(connected.at(-1)).toMatchObject({ inline: true, secrets: { password: 'new-password' } });
    expect((await getVnf(deps, id)).vimId).toBeUndefined();
    expect(await keptVim(id)).toMatchObject({ interfaceInfo: { endpoint: 'http://127.0.0.2:5000/v3' } });
  });

  it('naming a registered VIM moves the instance to it; a Kubernetes VIM or a vimId not registered is refused, nothing recorded', async () => {
    const id = await instantiated();
    await store.vims.insert({ ...vim, id: 'vim-os-2', name: 'openstack-2', isDefault: false }, undefined);
    await store.vims.insert(
      { ...vim, id: 'vim-k8s', name: 'k8s', isDefault: false, spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true } },
      undefined,
    );
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('l', 'n')], vimConnectionInfo: { vim1: { vimId: 'k8s' } } })).rejects.toThrow(
      /is a kubernetes VIM, not an OpenStack one/,
    );
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('l', 'n')], vimConnectionInfo: { vim1: { vimId: 'nope' } } })).rejects.toThrow(
      /vimConnectionInfo\.vim1\.vimId: no VIM "?nope"? is registered/,
    );
    await expect(changeExtConn(deps, id, { extVirtualLinks: [link('l', 'n')], vimConnectionInfo: 'vim1' })).rejects.toThrow(ValidationError);
    expect((await listOpOccs(deps, { vnf: id })).map((o) => o.operation)).toEqual(['INSTANTIATE']);
    const r = await changeExtConn(deps, id, {
      extVirtualLinks: [link('l', 'n')],
      vimConnectionInfo: { vim1: { vimId: 'openstack-2', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } },
    });
    expect(r.opOcc.operationParams).toMatchObject({ vimConnectionInfo: { vim1: { vimId: 'vim-os-2' } } });
    expect(connected.at(-1)).toMatchObject({ inline: false, id: 'vim-os-2' });
    expect(await getVnf(deps, id)).toMatchObject({ vimId: 'vim-os-2' });
  });

  it("Tacker v1's array (fake_vnflcm.py's change_ext_conn body) is not used, as in Tacker v1: the instance's VIM, a notice, no credentials recorded", async () => {
    const id = await instantiated();
    const v1 = [
      {
        id: '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f',
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_2',
        vimConnectionId: '5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f',
        interfaceInfo: { endpoint: 'http://127.0.0.1/identity' },
        accessInfo: { username: 'nfv_user', region: 'RegionOne', password: 'devstack', tenant: '6f7c0b3e-2a4d-4c1e-9f8a-1b2c3d4e5f60' },
      },
    ];
    const r = await changeExtConn(deps, id, { extVirtualLinks: [link('ext-vl-2', 'net-new')], vimConnectionInfo: v1 }, { onEvent });
    expect(r.opOcc.operationState).toBe('COMPLETED');
    expect(connected.at(-1)).toMatchObject({ inline: false, id: 'vim-os' });
    expect(notices.join('\n')).toMatch(/vimConnectionInfo in the v1 \(array\) form is not used by a change of external connectivity, as in Tacker v1: .*"openstack" \(vim-os\)/);
    expect(await getVnf(deps, id)).toMatchObject({ vimId: 'vim-os' });
    expect(JSON.stringify(r.opOcc.operationParams)).not.toMatch(/devstack|identity/);
  });
});

describe('vnf-update of an OpenStack VNF', () => {
  it('changes the records only (no stack update), with the modify_information hooks; another VIM is refused', async () => {
    const id = await instantiated();
    const r = await modifyVnfInfo(deps, id, { vnfInstanceName: 'vm-2', extensions: { site: 'a' } });
    expect(r.opOcc).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    expect(await getVnf(deps, id)).toMatchObject({ vnfInstanceName: 'vm-2', extensions: { site: 'a' } });
    expect(updates).toEqual([]);
    expect(hooks).toEqual(['modify_information_start', 'modify_information_end']);
    await expect(modifyVnfInfo(deps, id, { vimConnectionInfo: { vim1: { vimId: 'openstack', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3' } } })).rejects.toThrow(
      /moves an OpenStack VNF to another VIM/,
    );
  });
});
