/**
 * Request bodies in both Tacker API versions: vimConnectionInfo as the v1
 * array and the v2 map (a request mixing them refused), a v1 entry read as
 * Tacker v1 reads it (a registered VIM by vimId, else the default one, in
 * the entry's region; its endpoint and credentials unused), inline credentials
 * sealed where they are kept and opened again for later operations, heal by
 * v1 or v2 VNFC ids, the Helm driver's parameters refused, and Tacker v2's
 * namespace rule. An inline Kubernetes VIM without ssl_ca_cert (which Tacker
 * uses unverified) is verified with the CA of a registered VIM at the same
 * endpoint, else refused with the fix, or used unverified with a warning
 * when the operator says so.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openPackage } from '../../src/csar/index.js';
import { loadKeyring } from '../../src/crypto/index.js';
import { ExitCode, TlsVerifyError, ValidationError, VimCheckError } from '../../src/errors.js';
import type { KubeObject } from '../../src/infra/kubernetes/driver-contract.js';
import type { LcmDeps, VimConnection, VnfInstance } from '../../src/lcm/index.js';
import { levelReplicas } from '../../src/lcm/index.js';
import { chooseNamespace } from '../../src/lcm/planners/kubernetes.js';
import { checkHealRequest, checkInstantiateRequest, normalizeRequest, normalizeVimConnectionInfo, v1VimNotices } from '../../src/lcm/requests.js';
import {
  checkedInline,
  instanceVim,
  instanceVimFields,
  keepsCredentials,
  kubernetesVims,
  openInlineVim,
  openStackVims,
  recordedVim,
  resolveOpenStackVim,
  resolveVimConnection,
  sealVimConnectionInfo,
  vimLookup,
  type InlineCheckDeps,
  type VimLookup,
} from '../../src/lcm/vim-connection.js';
import type { Open, Seal } from '../../src/mgmt/sealed.js';
import { openStore } from '../../src/store/index.js';
import { openSecrets, sealSecrets, type Vim } from '../../src/vim/index.js';
import { loadVnfd, type Vnfd } from '../../src/vnfd/index.js';

let vnfd: Vnfd;
const DEFS = ['Files/kubernetes/configmap.yaml', 'Files/kubernetes/service.yaml', 'Files/kubernetes/deployment_vdu1.yaml', 'Files/kubernetes/deployment_vdu2.yaml'];
const pkg = { hasMember: (p: string) => DEFS.includes(p), kubernetesDefinitions: DEFS };

const keyring = loadKeyring({ home: mkdtempSync(join(tmpdir(), 'vnfm-tacker-req-')), env: {}, createIfMissing: true });
const seal: Seal = async (plain) => {
  const { token, keyId } = keyring.encrypt(plain);
  return { sealed: token, keyId };
};
const open: Open = async (v) => keyring.decrypt(v.sealed, v.keyId);

beforeAll(async () => {
  const files = await openPackage(resolve(import.meta.dirname, '../../csar-samples/basic-cnf/package'));
  vnfd = (await loadVnfd(files, 'Definitions/basic_cnf_top.vnfd.yaml')).vnfd!;
  await files.close();
});

const base: VnfInstance = {
  id: 'i1',
  vnfInstanceDescription: '',
  vnfdId: 'v',
  vnfPkgId: 'p',
  vnfProvider: '',
  vnfProductName: '',
  vnfSoftwareVersion: '',
  vnfdVersion: '',
  instantiationState: 'NOT_INSTANTIATED',
  createdAt: '',
  updatedAt: '',
};

const instantiated: VnfInstance = {
  ...base,
  instantiationState: 'INSTANTIATED',
  instantiatedVnfInfo: {
    flavourId: 'simple',
    vnfState: 'STARTED',
    scaleStatus: [{ aspectId: 'vdu1_aspect', scaleLevel: 0 }],
    maxScaleLevels: [],
    vnfcResourceInfo: [
      { id: 'vdu1-a', vduId: 'VDU1', computeResource: { resourceId: 'vdu1-a', vimLevelResourceType: 'Deployment' }, metadata: {} },
      { id: 'vdu2-b', vduId: 'VDU2', computeResource: { resourceId: 'vdu2-b', vimLevelResourceType: 'Deployment' }, metadata: {} },
    ],
    vnfcInfo: [
      { id: 'VDU1-vdu1-a', vduId: 'VDU1', vnfcResourceInfoId: 'vdu1-a', vnfcState: 'STARTED' },
      { id: 'VDU2-vdu2-b', vduId: 'VDU2', vnfcResourceInfoId: 'vdu2-b', vnfcState: 'STARTED' },
    ],
    resources: [],
    metadata: { namespace: 'default', 'lcm-kubernetes-def-files': DEFS, vduReplicas: { VDU1: 1, VDU2: 1 } },
  },
};

function refused(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err;
    throw err;
  }
  throw new Error('not refused');
}

const CA = '-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n';
const noVims: VimLookup = { find: async () => undefined, findDefault: async () => undefined, openSecrets: async () => ({}), open };
const noDefault = async (): Promise<VimConnection> => {
  throw new Error('no default VIM');
};

describe('vimConnectionInfo in both Tacker API versions', () => {
  it("takes the v1 array (SOL003 2.6.1) as the v2 map keyed by the entries' ids, each entry as Tacker v1 reads it (vimId, vimType, accessInfo.region)", () => {
    // Tacker's own v1 Helm bodies carry extra, which Tacker v1 replaces with the registered VIM's.
    const v1 = [
      {
        id: 'vim-a',
        vimId: 'k8s',
        vimType: 'kubernetes',
        interfaceInfo: { endpoint: 'https://127.0.0.1:6443' },
        accessInfo: { bearer_token: 't', region: 'RegionOne' },
        extra: { use_helm: true },
      },
    ];
    expect(normalizeVimConnectionInfo('r.json', v1)).toEqual({ 'vim-a': { vimId: 'k8s', vimType: 'kubernetes', accessInfo: { region: 'RegionOne' } } });
    const v2 = { vim1: { vimId: 'k8s', vimType: 'ETSINFV.KUBERNETES.V_1' } };
    expect(normalizeVimConnectionInfo('r.json', v2)).toEqual(v2);
    expect(normalizeRequest('r.json', { flavourId: 'simple', vimConnectionInfo: v1 })).toMatchObject({ flavourId: 'simple', vimConnectionInfo: { 'vim-a': { vimId: 'k8s' } } });
  });

  it('refuses a request mixing the v1 and v2 forms (a v2 map entry with v1 id), naming both', () => {
    const err = refused(() => checkInstantiateRequest('r.json', { flavourId: 'simple', vimConnectionInfo: { vim1: { id: 'vim1', vimId: 'k8s' } } }, base, vnfd, pkg));
    expect(err.field).toBe('vimConnectionInfo.vim1.id');
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(/mixes the v1 and v2 forms/);
    expect(err.hint).toMatch(/v1 array .*v2 map/);
  });

  it.each([
    [[{ vimId: 'k8s' }], 'vimConnectionInfo[0].id'],
    [[{ id: 'a' }, { id: 'a' }], 'vimConnectionInfo[1].id'],
    [['k8s'], 'vimConnectionInfo[0]'],
    ['k8s', 'vimConnectionInfo'],
  ])('refuses the malformed %j at %s', (info, field) => {
    expect(refused(() => normalizeVimConnectionInfo('r.json', info)).field).toBe(field);
  });
});

describe('a v1 (array) entry as Tacker v1 reads it: a registered VIM by vimId, else the default one, and accessInfo.region', () => {
  const vimOf = (name: string, type: 'openstack' | 'kubernetes', isDefault: boolean): Vim => ({
    id: `vim-${name}`,
    name,
    description: '',
    isDefault,
    spec:
      type === 'openstack'
        ? { type, authUrl: 'http://127.0.0.1:5000/v3', projectName: 'vnf', auth: { method: 'password', username: 'vnfuser' }, verifyTls: true }
        : { type, authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
    secretNames: [type === 'openstack' ? 'password' : 'bearerToken'],
    status: 'REACHABLE',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  });
  /** LcmDeps over a real store holding `vims` (the first one the default), their secrets sealed with the keyring. */
  async function depsWith(...vims: Vim[]): Promise<LcmDeps> {
    const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-v1-vim-')), 'home'));
    for (const vim of vims)
      await store.vims.insert(vim, sealSecrets(keyring, vim.spec.type === 'openstack' ? { password: `${vim.name}-password` } : { bearerToken: `${vim.name}-token` }));
    return { store, openVimSecrets: (vim: Vim) => openSecrets(store.vims, keyring, vim), open } as unknown as LcmDeps;
  }
  const ID = 'f8c35bd0-4d67-4436-9f11-14b8a84c92aa';
  /** fake_vnflcm.py make_inst_request_body's vimConnectionInfo: no vimId, the endpoint and credentials of Tacker's test cloud. */
  const tackerV1 = (region = 'RegionOne') => [
    {
      id: ID,
      vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_2',
      vimConnectionId: ID,
      interfaceInfo: { endpoint: 'http://127.0.0.1/identity' },
      accessInfo: { username: 'nfv_user', region, password: 'devstack', tenant: '6f7c0b3e-2a4d-4c1e-9f8a-1b2c3d4e5f60' },
    },
  ];

  it("without vimId: the default VIM in the entry's region, kept for the operations that follow; the endpoint and credentials unused, and said so", async () => {
    const deps = await depsWith(vimOf('os1', 'openstack', true), vimOf('os2', 'openstack', false));
    const given = normalizeVimConnectionInfo('r.json', tackerV1())!;
    const vim = await resolveOpenStackVim(deps, 'r.json', given, base);
    expect(vim).toMatchObject({
      inline: false,
      id: 'vim-os1',
      name: 'os1',
      spec: { authUrl: 'http://127.0.0.1:5000/v3', regionName: 'RegionOne' },
      secrets: { password: 'os1-password' },
    });
    const record = await recordedVim({ seal }, vim, given, 'ETSINFV.OPENSTACK_KEYSTONE.V_3');
    expect(record).toEqual({ [ID]: { vimId: 'vim-os1', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3', accessInfo: { region: 'RegionOne' } } });
    expect(JSON.stringify(record)).not.toMatch(/devstack|nfv_user|identity/);
    const [notice, ...more] = await v1VimNotices(vimLookup(deps), { flavourId: 'simple', vimConnectionInfo: tackerV1() });
    expect(more).toEqual([]);
    expect(notice).toMatch(/^vimConnectionInfo\[0\]: interfaceInfo \(endpoint\), accessInfo \(username, password, tenant\) not used, as in Tacker v1/);
    expect(notice).toMatch(/the default VIM "os1" \(vim-os1\) is used in region "RegionOne" \(accessInfo\.region\)/);
    expect(notice).not.toMatch(/devstack/);
    // The instance keeps the region with the VIM: scale, heal, terminate and a retry from the recorded request use it too.
    const fields = instanceVimFields(vim, record);
    expect(fields).toEqual({ vimId: 'vim-os1', vimConnectionInfo: record });
    expect((await instanceVim(deps, { ...instantiated, ...fields }, 'scale.json', openStackVims)).spec.regionName).toBe('RegionOne');
    expect((await resolveOpenStackVim(deps, 'occurrence', record, base)).spec.regionName).toBe('RegionOne');
    // Another region is the one used: Keystone's catalog then decides whether Heat is there.
    expect((await resolveOpenStackVim(deps, 'r.json', normalizeVimConnectionInfo('r.json', tackerV1('RegionTwo')), base)).spec.regionName).toBe('RegionTwo');
  });

  it('with vimId: that registered VIM, whatever credentials the entry carries; a vimId not registered, or no default VIM, is refused (exit 2)', async () => {
    const deps = await depsWith(vimOf('os1', 'openstack', true), vimOf('os2', 'openstack', false));
    // tests/functional/sol/vnflcm/base.py's shape, with credentials for another cloud beside it.
    const entry = { id: ID, vimId: 'vim-os2', vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_2', interfaceInfo: { endpoint: 'http://192.0.2.1/identity' }, accessInfo: { password: 'x' } };
    const vim = await resolveOpenStackVim(deps, 'r.json', normalizeVimConnectionInfo('r.json', [entry]), base);
    expect(vim).toMatchObject({ inline: false, id: 'vim-os2', secrets: { password: 'os2-password' } });
    expect(vim.spec.regionName).toBeUndefined();
    expect((await v1VimNotices(vimLookup(deps), { vimConnectionInfo: [entry] }))[0]).toMatch(/accessInfo \(password\) not used, .*: VIM "os2" \(vim-os2\) is used;/);
    // Nothing unused, nothing said.
    expect(await v1VimNotices(vimLookup(deps), { vimConnectionInfo: [{ id: ID, vimId: 'vim-os2', vimType: 'openstack' }] })).toEqual([]);

    const unknown = await resolveOpenStackVim(deps, 'r.json', normalizeVimConnectionInfo('r.json', [{ ...entry, vimId: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e' }]), base).catch(
      (e: unknown) => e,
    );
    expect(unknown).toBeInstanceOf(ValidationError);
    expect((unknown as ValidationError).field).toBe(`vimConnectionInfo.${ID}.vimId`);
    expect((unknown as ValidationError).exitCode).toBe(ExitCode.usage);
    expect((unknown as ValidationError).hint).toMatch(/v2 map form with interfaceInfo and accessInfo \(a v1 array entry always names a registered VIM, as in Tacker v1\)/);
    const none = await depsWith(vimOf('os2', 'openstack', false));
    await expect(resolveOpenStackVim(none, 'r.json', normalizeVimConnectionInfo('r.json', tackerV1()), base)).rejects.toThrow(
      /vimId: is absent, which means the default VIM, and there is no default VIM/,
    );
  });

  it('a Kubernetes entry without vimId is the default Kubernetes VIM, not a VIM inline', async () => {
    const deps = await depsWith(vimOf('k8s', 'kubernetes', true));
    const v1 = [{ id: ID, vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://192.0.2.1:6443' }, accessInfo: { bearer_token: 'body-token' } }];
    const vim = await resolveVimConnection('r.json', normalizeVimConnectionInfo('r.json', v1), vimLookup(deps), noDefault);
    expect(vim).toMatchObject({ inline: false, id: 'vim-k8s', spec: { authUrl: 'https://127.0.0.1:6443' }, secrets: { bearerToken: 'k8s-token' } });
  });

  it('a v2 inline entry (paramgen.py shape) still connects as given: endpoint, credentials and region', async () => {
    const deps = await depsWith(vimOf('os1', 'openstack', true));
    const access = { username: 'nfv_user', region: 'RegionOne', password: 'devstack', project: 'nfv', projectDomain: 'Default', userDomain: 'Default' };
    const given = {
      vim1: {
        vimId: ID,
        vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
        interfaceInfo: { endpoint: 'http://192.0.2.1/identity/v3' },
        accessInfo: access,
        extra: { 'dummy-key': 'dummy-val' },
      },
    };
    expect(await resolveOpenStackVim(deps, 'r.json', normalizeVimConnectionInfo('r.json', given), base)).toMatchObject({
      inline: true,
      spec: { authUrl: 'http://192.0.2.1/identity/v3', regionName: 'RegionOne', projectName: 'nfv', auth: { username: 'nfv_user' } },
      secrets: { password: 'devstack' },
    });
    expect(await v1VimNotices(vimLookup(deps), { vimConnectionInfo: given })).toEqual([]);
  });
});

describe('inline credentials', () => {
  const given = {
    vim1: {
      vimId: 'edge',
      vimType: 'ETSINFV.KUBERNETES.V_1',
      interfaceInfo: { endpoint: 'https://127.0.0.1:6443', ssl_ca_cert: CA },
      accessInfo: { bearer_token: 'sekret-token' },
      extra: { dummy: 'x' },
    },
  };

  it('are kept sealed (token and CA) and opened again for the operations that follow', async () => {
    const vim = await resolveVimConnection('r.json', given, noVims, noDefault);
    const kept = await recordedVim({ seal }, vim, given);
    const text = JSON.stringify(kept);
    expect(text).not.toContain('sekret-token');
    expect(text).not.toContain('MIIBcert');
    expect(kept['vim1']).toMatchObject({ vimId: 'edge', interfaceInfo: { endpoint: 'https://127.0.0.1:6443' }, extra: { dummy: 'x' } });
    expect(keepsCredentials(kept['vim1']!)).toBe(true);

    const again = await openInlineVim('instance i1', 'vim1', kept['vim1']!, open);
    expect(again).toMatchObject({
      inline: true,
      name: 'edge',
      spec: { authUrl: 'https://127.0.0.1:6443', verifyTls: true, extra: { dummy: 'x' } },
      secrets: { bearerToken: 'sekret-token', caCert: CA },
    });
    // A recorded (sealed) vimConnectionInfo given again — a retry — resolves the same way.
    expect((await resolveVimConnection('occurrence', kept, noVims, noDefault)).secrets.bearerToken).toBe('sekret-token');
    // Sealing what is sealed changes nothing.
    expect(await sealVimConnectionInfo(kept, seal)).toEqual(kept);
  });

  it('take username and password, or a client certificate and key', async () => {
    // Not a run of base64url characters: a sealed value (random ciphertext) could hold one by chance.
    const KEY = 'a private key!';
    const basic = await resolveVimConnection(
      'r',
      { v: { interfaceInfo: { endpoint: 'https://h:6443', ssl_ca_cert: 'None' }, accessInfo: { username: 'admin', password: 'pw' } } },
      noVims,
      noDefault,
    );
    expect(basic).toMatchObject({ spec: { auth: { method: 'basic', username: 'admin' }, verifyTls: false }, secrets: { password: 'pw' } });
    const cert = await resolveVimConnection('r', { v: { interfaceInfo: { endpoint: 'https://h:6443' }, accessInfo: { client_cert: CA, client_key: KEY } } }, noVims, noDefault);
    expect(cert).toMatchObject({ spec: { auth: { method: 'client-certificate' } }, secrets: { clientCert: CA, clientKey: KEY } });
    const kept = await recordedVim({ seal }, cert, { v: { interfaceInfo: { endpoint: 'https://h:6443' }, accessInfo: { client_cert: CA, client_key: KEY } } });
    expect(JSON.stringify(kept)).not.toContain(KEY);
  });

  it('sealed without a keyring to open them is refused, not sent in the clear', async () => {
    const vim = await resolveVimConnection('r.json', given, noVims, noDefault);
    const kept = await recordedVim({ seal }, vim, given);
    await expect(openInlineVim('instance i1', 'vim1', kept['vim1']!, undefined)).rejects.toThrow(/sealed credentials/);
  });
});

describe('heal by v1 or v2 VNFC ids', () => {
  it('takes v2 vnfcInfo ids and v1 vnfcResourceInfo ids', () => {
    expect(checkHealRequest('h', { vnfcInstanceId: ['VDU2-vdu2-b'] }, instantiated).vnfcs.map((v) => v.id)).toEqual(['VDU2-vdu2-b']);
    expect(checkHealRequest('h', { vnfcInstanceId: ['vdu1-a', 'vdu2-b'] }, instantiated).vnfcs.map((v) => v.id)).toEqual(['VDU1-vdu1-a', 'VDU2-vdu2-b']);
  });

  it('refuses a request mixing v1 and v2 ids, naming both', () => {
    const err = refused(() => checkHealRequest('h', { vnfcInstanceId: ['vdu1-a', 'VDU2-vdu2-b'] }, instantiated));
    expect(err.field).toBe('vnfcInstanceId');
    expect(err.message).toMatch(/v1 id \("vdu1-a".*v2 id \("VDU2-vdu2-b"/);
  });

  it('lists both forms when an id is unknown', () => {
    expect(refused(() => checkHealRequest('h', { vnfcInstanceId: ['nope'] }, instantiated)).hint).toMatch(/VDU1-vdu1-a.*vdu1-a/);
  });
});

describe('Helm', () => {
  it("refuses the Helm driver's parameters, and takes a ETSINFV.HELM.V_3 VIM as a Kubernetes one", async () => {
    const err = refused(() => checkInstantiateRequest('r.json', { flavourId: 'simple', additionalParams: { helm_chart_path: 'Files/kubernetes/chart.tgz' } }, base, vnfd, pkg));
    expect(err.field).toBe('additionalParams.helm_chart_path');
    expect(err.message).toMatch(/Helm chart/);
    const vim = await resolveVimConnection(
      'r',
      { v: { vimType: 'ETSINFV.HELM.V_3', interfaceInfo: { endpoint: 'https://h:6443' }, accessInfo: { bearer_token: 't' } } },
      noVims,
      noDefault,
    );
    expect(vim.spec.type).toBe('kubernetes');
  });
});

describe('namespaces as Tacker v2 decides them', () => {
  const vim = { name: 'k', inline: true, spec: { type: 'kubernetes', authUrl: 'https://h', auth: { method: 'bearer-token' }, verifyTls: true }, secrets: {} } as VimConnection;
  const obj = (kind: string, name: string, namespace?: string): KubeObject => ({ apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) } });

  it("additionalParams.namespace wins over the manifests' own", () => {
    expect(chooseNamespace('r', 'req-ns', [obj('Deployment', 'a', 'x'), obj('Service', 'b', 'y')], vim, DEFS)).toBe('req-ns');
  });

  it("else the manifests' namespace, objects without one counting as the default", () => {
    expect(chooseNamespace('r', undefined, [obj('Deployment', 'a', 'x'), obj('Service', 'b', 'x'), obj('Namespace', 'x')], vim, DEFS)).toBe('x');
    expect(chooseNamespace('r', undefined, [obj('Deployment', 'a')], vim, DEFS)).toBe('default');
    expect(chooseNamespace('r', undefined, [obj('Deployment', 'a', 'default'), obj('Service', 'b')], vim, DEFS)).toBe('default');
  });

  it("refuses manifests that put objects in different namespaces (Tacker's NamespaceNotUniform)", () => {
    const err = refused(() => chooseNamespace('r.json', undefined, [obj('Deployment', 'a', 'x'), obj('Service', 'b', 'y')], vim, DEFS));
    expect(err.field).toBe('additionalParams.namespace');
    expect(err.message).toMatch(/2 namespaces \(x, y/);
    // One with a namespace and one without (the default) differ too.
    expect(refused(() => chooseNamespace('r.json', undefined, [obj('Deployment', 'a', 'x'), obj('ConfigMap', 'b')], vim, DEFS)).message).toMatch(/x, default/);
  });

  it('leaves objects in namespaces the files create themselves where they are (packages of cluster controllers)', () => {
    const objects = [obj('Namespace', 'ctl-a'), obj('Namespace', 'ctl-b'), obj('Deployment', 'a', 'ctl-a'), obj('Deployment', 'b', 'ctl-b')];
    expect(chooseNamespace('r', undefined, objects, vim, DEFS)).toBe('ctl-a');
  });
});

describe('an inline Kubernetes VIM without ssl_ca_cert (Tacker skips verification; vnfm does not unasked)', () => {
  const CLUSTER_CA = '-----BEGIN CERTIFICATE-----\nMIIBclusterCA\n-----END CERTIFICATE-----\n';
  const OTHER_CA = '-----BEGIN CERTIFICATE-----\nMIIBotherCA\n-----END CERTIFICATE-----\n';
  const entry = (endpoint: string) => ({ vim1: { vimType: 'ETSINFV.KUBERNETES.V_1', interfaceInfo: { endpoint }, accessInfo: { bearer_token: 'tok' } } });
  const registered = (name: string, authUrl: string, caCert?: string): Vim => ({
    id: `vim-${name}`,
    name,
    description: '',
    isDefault: false,
    spec: { type: 'kubernetes', authUrl, auth: { method: 'bearer-token' }, verifyTls: true },
    secretNames: caCert ? ['bearerToken', 'caCert'] : ['bearerToken'],
    status: 'REACHABLE',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  });

  /** A real store holding `vims`, and a cluster at https://10.0.0.7:6443 whose certificate CLUSTER_CA alone verifies. */
  async function setup(vims: Array<[Vim, string | undefined]>, insecure = false) {
    const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-inline-ca-')), 'home'));
    for (const [vim, ca] of vims) await store.vims.insert(vim, sealSecrets(keyring, { bearerToken: 'registered-token', ...(ca ? { caCert: ca } : {}) }));
    const checked: VimConnection[] = [];
    const warnings: string[] = [];
    const deps: InlineCheckDeps = {
      store,
      openVimSecrets: async (vim) => openSecrets(store.vims, keyring, vim),
      async checkInlineVim(vim) {
        checked.push(vim);
        if (vim.spec.verifyTls && vim.secrets.caCert !== CLUSTER_CA) {
          throw new TlsVerifyError(`the TLS certificate of ${vim.spec.authUrl} could not be verified (SELF_SIGNED_CERT_IN_CHAIN)`);
        }
      },
      ...(insecure ? { insecureInlineVims: { warn: (m: string) => warnings.push(m) } } : {}),
    };
    return { deps, checked, warnings };
  }
  const inline = (endpoint: string) => resolveVimConnection('r.json', entry(endpoint), noVims, noDefault);

  it('takes the CA of a registered VIM at the same endpoint (default port and trailing slash aside), and verifies with it', async () => {
    const { deps, checked, warnings } = await setup([
      [registered('elsewhere', 'https://10.0.0.8:6443', OTHER_CA), OTHER_CA],
      [registered('no-ca', 'https://10.0.0.7:6443', undefined), undefined],
      [registered('edge', 'https://10.0.0.7:6443/', CLUSTER_CA), CLUSTER_CA],
    ]);
    const vim = await checkedInline(deps, await inline('https://10.0.0.7:6443'));
    expect(vim).toMatchObject({ inline: true, spec: { verifyTls: true }, secrets: { bearerToken: 'tok', caCert: CLUSTER_CA } });
    expect(checked).toHaveLength(1);
    expect(warnings).toEqual([]);
    // The same for the operations after instantiate, which reopen the inline VIM the instance keeps.
    const kept = await recordedVim({ seal }, vim, entry('https://10.0.0.7:6443'));
    const instance: VnfInstance = { ...instantiated, vimConnectionInfo: kept };
    const again = await instanceVim({ ...(deps as LcmDeps), open }, instance, 'scale.json', kubernetesVims);
    expect(again.secrets.caCert).toBe(CLUSTER_CA);
    // A registered VIM on port 443 is the same endpoint as one without a port.
    const { deps: d443 } = await setup([[registered('edge', 'https://10.0.0.7:443', CLUSTER_CA), CLUSTER_CA]]);
    expect((await checkedInline(d443, await inline('https://10.0.0.7'))).secrets.caCert).toBe(CLUSTER_CA);
  });

  it('without one whose CA verifies it, is refused (exit 6) with the three ways out', async () => {
    const { deps } = await setup([[registered('elsewhere', 'https://10.0.0.8:6443', CLUSTER_CA), CLUSTER_CA]]);
    const err = await checkedInline(deps, await inline('https://10.0.0.7:6443')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VimCheckError);
    expect((err as VimCheckError).exitCode).toBe(ExitCode.vimCheck);
    expect((err as VimCheckError).message).toMatch(
      /inline VIM https:\/\/10\.0\.0\.7:6443: the TLS certificate .* could not be verified .*no interfaceInfo\.ssl_ca_cert, and no registered VIM has this endpoint/,
    );
    const hint = (err as VimCheckError).hint!;
    expect(hint).toMatch(/add "ssl_ca_cert": "<the cluster CA in PEM>" to the vimConnectionInfo entry's interfaceInfo/);
    expect(hint).toMatch(/register the VIM with its CA \(vnfm vim-register --config-file FILE NAME, auth_url https:\/\/10\.0\.0\.7:6443\)/);
    expect(hint).toMatch(/--insecure-inline-vims/);
    // A registered VIM at the endpoint whose CA does not verify it is named.
    const { deps: wrong } = await setup([[registered('stale', 'https://10.0.0.7:6443', OTHER_CA), OTHER_CA]]);
    const stale = await checkedInline(wrong, await inline('https://10.0.0.7:6443')).catch((e: unknown) => e);
    expect((stale as VimCheckError).message).toMatch(/the CA of registered VIM "stale", which has the same endpoint, does not verify it either/);
  });

  it('with --insecure-inline-vims, is used without verification, a warning naming the endpoint each time', async () => {
    const { deps, checked, warnings } = await setup([], true);
    const first = await checkedInline(deps, await inline('https://10.0.0.7:6443'));
    expect(first.spec.verifyTls).toBe(false);
    await checkedInline(deps, await inline('https://10.0.0.7:6443'));
    expect(warnings).toEqual([
      expect.stringMatching(/^inline VIM https:\/\/10\.0\.0\.7:6443 is used without TLS verification \(--insecure-inline-vims\)/),
      expect.stringMatching(/^inline VIM https:\/\/10\.0\.0\.7:6443 is used without TLS verification/),
    ]);
    // Verification was tried first each time, then turned off.
    expect(checked.map((v) => v.spec.verifyTls)).toEqual([true, false, true, false]);
    // A registered CA that verifies still wins: no warning.
    const withCa = await setup([[registered('edge', 'https://10.0.0.7:6443', CLUSTER_CA), CLUSTER_CA]], true);
    expect((await checkedInline(withCa.deps, await inline('https://10.0.0.7:6443'))).spec.verifyTls).toBe(true);
    expect(withCa.warnings).toEqual([]);
  });

  it('leaves alone an inline VIM with its own CA, or with ssl_ca_cert "None"', async () => {
    const { deps, warnings } = await setup([[registered('edge', 'https://10.0.0.7:6443', OTHER_CA), OTHER_CA]], true);
    const own = await resolveVimConnection(
      'r',
      { v: { interfaceInfo: { endpoint: 'https://10.0.0.7:6443', ssl_ca_cert: CLUSTER_CA }, accessInfo: { bearer_token: 't' } } },
      noVims,
      noDefault,
    );
    expect((await checkedInline(deps, own)).secrets.caCert).toBe(CLUSTER_CA);
    const none = await resolveVimConnection(
      'r',
      { v: { interfaceInfo: { endpoint: 'https://10.0.0.7:6443', ssl_ca_cert: 'None' }, accessInfo: { bearer_token: 't' } } },
      noVims,
      noDefault,
    );
    expect(await checkedInline(deps, none)).toMatchObject({ spec: { verifyTls: false }, secrets: { bearerToken: 't' } });
    expect(warnings).toEqual([]);
  });
});
