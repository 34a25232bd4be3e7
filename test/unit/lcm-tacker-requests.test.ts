/**
 * Request bodies in both Tacker API versions: vimConnectionInfo as the v1
 * array and the v2 map (a request mixing them refused), inline credentials
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
import { checkHealRequest, checkInstantiateRequest, normalizeRequest, normalizeVimConnectionInfo } from '../../src/lcm/requests.js';
import {
  checkedInline,
  instanceVim,
  keepsCredentials,
  kubernetesVims,
  openInlineVim,
  recordedVim,
  resolveVimConnection,
  sealVimConnectionInfo,
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
const noVims: VimLookup = { find: () => undefined, findDefault: () => undefined, openSecrets: async () => ({}), open };
const noDefault = async (): Promise<VimConnection> => {
  throw new Error('no default VIM');
};

describe('vimConnectionInfo in both Tacker API versions', () => {
  it("takes the v1 array (SOL003 2.6.1) as the v2 map keyed by the entries' ids", () => {
    const v1 = [{ id: 'vim-a', vimId: 'k8s', vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://127.0.0.1:6443' }, accessInfo: { bearer_token: 't' } }];
    expect(normalizeVimConnectionInfo('r.json', v1)).toEqual({
      'vim-a': { vimId: 'k8s', vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://127.0.0.1:6443' }, accessInfo: { bearer_token: 't' } },
    });
    const v2 = { vim1: { vimId: 'k8s', vimType: 'ETSINFV.KUBERNETES.V_1' } };
    expect(normalizeVimConnectionInfo('r.json', v2)).toEqual(v2);
    expect(normalizeRequest('r.json', { flavourId: 'simple', vimConnectionInfo: v1 })).toMatchObject({ flavourId: 'simple', vimConnectionInfo: { 'vim-a': { vimId: 'k8s' } } });
  });

  it.each([
    // A v1 array entry with v2's `extra`.
    [[{ id: 'a', vimId: 'k8s', extra: { dummy: 1 } }], 'vimConnectionInfo[0].extra'],
    // A v2 map entry with v1's `id`.
    [{ vim1: { id: 'vim1', vimId: 'k8s' } }, 'vimConnectionInfo.vim1.id'],
  ])('refuses a request mixing the v1 and v2 forms (%j), naming both', (info, field) => {
    const err = refused(() => checkInstantiateRequest('r.json', { flavourId: 'simple', vimConnectionInfo: info }, base, vnfd, pkg));
    expect(err.field).toBe(field);
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
  function setup(vims: Array<[Vim, string | undefined]>, insecure = false) {
    const store = openStore(join(mkdtempSync(join(tmpdir(), 'vnfm-inline-ca-')), 'home'));
    for (const [vim, ca] of vims) store.vims.insert(vim, sealSecrets(keyring, { bearerToken: 'registered-token', ...(ca ? { caCert: ca } : {}) }));
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
    const { deps, checked, warnings } = setup([
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
    const { deps: d443 } = setup([[registered('edge', 'https://10.0.0.7:443', CLUSTER_CA), CLUSTER_CA]]);
    expect((await checkedInline(d443, await inline('https://10.0.0.7'))).secrets.caCert).toBe(CLUSTER_CA);
  });

  it('without one whose CA verifies it, is refused (exit 6) with the three ways out', async () => {
    const { deps } = setup([[registered('elsewhere', 'https://10.0.0.8:6443', CLUSTER_CA), CLUSTER_CA]]);
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
    const { deps: wrong } = setup([[registered('stale', 'https://10.0.0.7:6443', OTHER_CA), OTHER_CA]]);
    const stale = await checkedInline(wrong, await inline('https://10.0.0.7:6443')).catch((e: unknown) => e);
    expect((stale as VimCheckError).message).toMatch(/the CA of registered VIM "stale", which has the same endpoint, does not verify it either/);
  });

  it('with --insecure-inline-vims, is used without verification, a warning naming the endpoint each time', async () => {
    const { deps, checked, warnings } = setup([], true);
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
    const withCa = setup([[registered('edge', 'https://10.0.0.7:6443', CLUSTER_CA), CLUSTER_CA]], true);
    expect((await checkedInline(withCa.deps, await inline('https://10.0.0.7:6443'))).spec.verifyTls).toBe(true);
    expect(withCa.warnings).toEqual([]);
  });

  it('leaves alone an inline VIM with its own CA, or with ssl_ca_cert "None"', async () => {
    const { deps, warnings } = setup([[registered('edge', 'https://10.0.0.7:6443', OTHER_CA), OTHER_CA]], true);
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
