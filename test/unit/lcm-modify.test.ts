/**
 * Modify VNF information (MODIFY_INFO) with a real store, the basic-cnf
 * sample and variants of it onboarded, and an in-memory infra-driver:
 * records changed without touching the VIM, the container update of a new
 * vnfdId, Tacker's refusals, retry and rollback, and store migration 7.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { onboardPackage } from '../../src/csar/index.js';
import { ConflictError, ExitCode, UsageError, ValidationError, VimCheckError } from '../../src/errors.js';
import { createVnf, getVnf, instantiateVnf, listOpOccs, modifyVnfInfo, retryOpOcc, rollbackOpOcc, changeExtConn, type LcmDeps, type VnfInstance } from '../../src/lcm/index.js';
import { jsonMergePatch } from '../../src/lcm/modify.js';
import type { HookContext } from '../../src/mgmt/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { openDatabase } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations/index.js';
import type { Vim } from '../../src/vim/index.js';
import { FakeInfraDriver } from '../support/fake-infra-driver.js';
import { packageVariant } from '../support/package-variant.js';

const SAMPLE = resolve(import.meta.dirname, '../../csar-samples/basic-cnf');
const request = (name: string) => JSON.parse(readFileSync(join(SAMPLE, 'requests', name), 'utf8')) as Record<string, unknown>;
const V1 = '1191aa45-a57a-4232-8201-6a7a66d41e38';
const V11 = '5d1c1d43-0c55-4c39-9a4e-0b9c3c1f1a11';
const OTHER = '8a0c1b65-45a6-4fcb-b6a8-73d3fe0e0c22';
const OLD_IMAGE = 'docker.io/library/nginx:1.26-alpine';
const NEW_IMAGE = 'docker.io/library/nginx:1.27-alpine';

let home: string;
let store: Store;
let driver: FakeInfraDriver;
let deps: LcmDeps;
let hooks: HookContext[];
let v11Dir: string;

function vim(over: Partial<Vim> = {}): Vim {
  return {
    id: 'vim-k8s',
    name: 'k8s',
    description: '',
    isDefault: true,
    spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', projectName: 'vnf-ns', auth: { method: 'bearer-token' }, verifyTls: false },
    secretNames: [],
    status: 'REACHABLE',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

beforeEach(async () => {
  home = join(mkdtempSync(join(tmpdir(), 'vnfm-modify-')), 'home');
  store = openStore(home);
  const pkgDeps = { packages: store.packages, home, now: () => new Date() };
  await onboardPackage(pkgDeps, { path: join(SAMPLE, 'package') });
  v11Dir = packageVariant(join(SAMPLE, 'package'), { fromVnfdId: V1, vnfdId: V11, softwareVersion: '1.1', replace: [[OLD_IMAGE, NEW_IMAGE]] });
  await onboardPackage(pkgDeps, { path: v11Dir });
  await onboardPackage(pkgDeps, { path: packageVariant(join(SAMPLE, 'package'), { fromVnfdId: V1, vnfdId: OTHER, provider: 'another vendor' }) });
  await store.vims.insert(vim(), undefined);
  await store.vims.insert(vim({ id: 'vim-k8s-2', name: 'k8s-2', isDefault: false }), undefined);
  driver = new FakeInfraDriver();
  hooks = [];
  deps = {
    store,
    home,
    now: () => new Date(),
    openVimSecrets: async () => ({ bearerToken: 'token' }),
    kubernetesDriver: () => driver,
    mgmt: { runHook: async (ctx: HookContext) => void hooks.push(ctx) },
  };
});

afterEach(async () => await store.close());

async function instantiated(): Promise<VnfInstance> {
  const vnf = await createVnf(deps, { vnfdId: V1, name: 'web', description: 'front' });
  await instantiateVnf(deps, vnf.id, request('instantiate.json'));
  driver.calls.length = 0;
  hooks.length = 0;
  return await getVnf(deps, vnf.id);
}

/** The image of the vdu1 Deployment's web container in the last changePackage call. */
function appliedImage(): string | undefined {
  const call = [...driver.calls].reverse().find((c) => c.method === 'changePackage');
  const objects = (call?.input as { objects: { kind: string; metadata: { name: string }; spec: { template: { spec: { containers: { name: string; image: string }[] } } } }[] })
    .objects;
  return objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vdu1')?.spec.template.spec.containers.find((c) => c.name === 'web')?.image;
}

describe('vnf-update: records only', () => {
  it('renames, redescribes and merge-patches metadata and extensions of an instantiated VNF: MODIFY_INFO COMPLETED, hooks around, the VIM untouched', async () => {
    const vnf = await instantiated();
    await modifyVnfInfo(deps, vnf.id, { vnfInstanceName: 'web-2', metadata: { tier: 'front', keep: 1 }, extensions: { a: { b: 1 } } });
    const r = await modifyVnfInfo(deps, 'web-2', { vnfInstanceDescription: 'renamed', metadata: { tier: null, zone: 'z1' }, extensions: { a: { c: 2 } } });
    expect(r.opOcc).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    expect(r.vnfInstance).toMatchObject({
      vnfInstanceName: 'web-2',
      vnfInstanceDescription: 'renamed',
      metadata: { keep: 1, zone: 'z1' },
      extensions: { a: { b: 1, c: 2 } },
      vnfdId: V1,
    });
    expect(r.vnfInstance.metadata).not.toHaveProperty('tier');
    expect(driver.calls.filter((c) => c.method !== 'listVnfcs')).toEqual([]);
    expect(hooks.map((h) => h.hook)).toEqual(['modify_information_start', 'modify_information_end', 'modify_information_start', 'modify_information_end']);
    expect((await listOpOccs(deps, { vnf: vnf.id })).map((o) => o.operation)).toContain('MODIFY_INFO');
    // Kept in the store, not only returned.
    expect((await getVnf(deps, vnf.id)).extensions).toEqual({ a: { b: 1, c: 2 } });
  });

  it('a NOT_INSTANTIATED instance: recorded COMPLETED, no hook; vimConnectionInfo refused as Tacker refuses it', async () => {
    const vnf = await createVnf(deps, { vnfdId: V1, name: 'idle' });
    const r = await modifyVnfInfo(deps, vnf.id, { vnfInstanceName: 'idle-2', metadata: { owner: 'ops' } });
    expect(r.opOcc).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    expect(await getVnf(deps, vnf.id)).toMatchObject({ vnfInstanceName: 'idle-2', metadata: { owner: 'ops' } });
    expect(hooks).toEqual([]);
    const refused = modifyVnfInfo(deps, vnf.id, { vimConnectionInfo: { vim1: { vimId: 'k8s', vimType: 'kubernetes' } } });
    await expect(refused).rejects.toThrow(/vimConnectionInfo cannot be modified while vnf instance \S+ is NOT_INSTANTIATED/);
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    // A NOT_INSTANTIATED instance may move to another version of its package.
    const moved = await modifyVnfInfo(deps, vnf.id, { vnfdId: V11 });
    expect(moved.vnfInstance).toMatchObject({ vnfdId: V11, vnfSoftwareVersion: '1.1' });
    expect((await store.packages.get(V1)).usageState).toBe('NOT_IN_USE');
    expect((await store.packages.get(V11)).usageState).toBe('IN_USE');
  });

  it('vimConnectionInfo naming another registered VIM moves the instance to it (v1 array form too)', async () => {
    const vnf = await instantiated();
    const r = await modifyVnfInfo(deps, vnf.id, { vimConnectionInfo: [{ id: 'vim1', vimId: 'k8s-2', vimType: 'ETSINFV.KUBERNETES.V_1' }] });
    expect(r.vnfInstance.vimId).toBe('vim-k8s-2');
    expect(r.opOcc.operationParams).toEqual({ vimConnectionInfo: { vim1: { vimId: 'vim-k8s-2', vimType: 'ETSINFV.KUBERNETES.V_1' } } });
  });
});

describe('vnf-update: inline VIM credentials', () => {
  it('are tried first (refused: exit 6, nothing recorded), then kept sealed with the instance and used by the next operation', async () => {
    const sealedBy: string[] = [];
    const checked: string[] = [];
    deps.seal = async (plain) => {
      sealedBy.push(plain);
      return { sealed: Buffer.from(plain).toString('base64'), keyId: 'k1' };
    };
    deps.open = async (v) => Buffer.from(v.sealed, 'base64').toString();
    deps.checkInlineVim = async (v) => {
      checked.push(v.secrets.bearerToken ?? '');
      if (v.inline && v.secrets.bearerToken !== 'good-token') throw new VimCheckError('the cluster refused the credentials (401)');
    };
    const vnf = await instantiated();
    checked.length = 0;
    const inline = (token: string) => ({
      vimConnectionInfo: {
        vim1: { vimType: 'ETSINFV.KUBERNETES.V_1', interfaceInfo: { endpoint: 'https://127.0.0.1:6443', ssl_ca_cert: 'None' }, accessInfo: { bearer_token: token } },
      },
    });
    const err = await modifyVnfInfo(deps, vnf.id, inline('bad-token')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VimCheckError);
    expect(await listOpOccs(deps, { vnf: vnf.id })).toHaveLength(1);
    expect((await getVnf(deps, vnf.id)).vimId).toBe('vim-k8s');
    const r = await modifyVnfInfo(deps, vnf.id, inline('good-token'));
    expect(r.opOcc.operationState).toBe('COMPLETED');
    expect(r.vnfInstance.vimId).toBeUndefined();
    expect(sealedBy).toContain('good-token');
    const stored = JSON.stringify([await getVnf(deps, vnf.id), await listOpOccs(deps, { vnf: vnf.id })]);
    expect(stored).not.toContain('good-token');
    expect(stored).not.toContain('bad-token');
    // The next operation reaches the VIM with the kept credentials.
    const reached: (string | undefined)[] = [];
    deps.kubernetesDriver = (v) => (reached.push(v.secrets.bearerToken), driver);
    await modifyVnfInfo(deps, vnf.id, { vnfdId: V11 });
    expect(reached).toEqual(['good-token']);
    expect(appliedImage()).toBe(NEW_IMAGE);
    expect(checked).toEqual(['bad-token', 'good-token']);
  });
});

describe('vnf-update: a new vnfdId (container update)', () => {
  it("the Deployments take the new package's images, the instance records the new package, the hooks run", async () => {
    const vnf = await instantiated();
    const before = await getVnf(deps, vnf.id);
    const r = await modifyVnfInfo(deps, vnf.id, { vnfdId: V11, vnfInstanceName: 'web-v11' });
    expect(r.opOcc).toMatchObject({ operation: 'MODIFY_INFO', operationState: 'COMPLETED' });
    expect(appliedImage()).toBe(NEW_IMAGE);
    expect(r.vnfInstance).toMatchObject({ vnfdId: V11, vnfPkgId: (await store.packages.get(V11)).id, vnfSoftwareVersion: '1.1', vnfInstanceName: 'web-v11' });
    // The same files, namespace and resources: only images changed.
    expect(r.vnfInstance.instantiatedVnfInfo?.metadata).toMatchObject({
      namespace: before.instantiatedVnfInfo!.metadata.namespace,
      'lcm-kubernetes-def-files': before.instantiatedVnfInfo!.metadata['lcm-kubernetes-def-files'],
    });
    // The flavour implements neither hook: nothing is unpacked for them (a hook with an implementation gets both packages unpacked).
    expect(hooks.map((h) => [h.hook, h.packageDir, h.newPackageDir])).toEqual([
      ['modify_information_start', '', undefined],
      ['modify_information_end', '', undefined],
    ]);
    expect((await store.packages.get(V1)).usageState).toBe('NOT_IN_USE');
  });

  it("keeps what the request does not change, as Tacker v2's modify_info_process does on a vnfdId change", async () => {
    // Tacker: provider, product and versions come from the new package; the new VNFD's own
    // vnfConfigurableProperties, metadata and extensions (always empty in Tacker) are merged onto the
    // instance's, which therefore stay; then the request's merge patches apply; name and description
    // change only when the request gives them.
    const vnf = await instantiated();
    await modifyVnfInfo(deps, vnf.id, { metadata: { owner: 'team-a', tier: 'edge' }, extensions: { slot: 3 }, vnfConfigurableProperties: { isAutoscaleEnabled: false } });
    const r = await modifyVnfInfo(deps, vnf.id, { vnfdId: V11, metadata: { tier: null, configmap_secret_paths: [] } });
    expect(r.opOcc.operationState).toBe('COMPLETED');
    expect(r.vnfInstance).toMatchObject({
      vnfdId: V11,
      vnfProvider: (await store.packages.get(V11)).vnfProvider,
      vnfProductName: (await store.packages.get(V11)).vnfProductName,
      vnfSoftwareVersion: '1.1',
      vnfInstanceName: 'web',
      vnfInstanceDescription: 'front',
      extensions: { slot: 3 },
      vnfConfigurableProperties: { isAutoscaleEnabled: false },
    });
    expect(r.vnfInstance.metadata).toEqual({ owner: 'team-a', configmap_secret_paths: [] });
    expect(await getVnf(deps, vnf.id)).toMatchObject({ vnfdId: V11, metadata: { owner: 'team-a' }, extensions: { slot: 3 } });
  });

  it('a package of another provider, a DISABLED or unknown one: refused (exit 2), nothing recorded, nothing applied', async () => {
    const vnf = await instantiated();
    const refused = modifyVnfInfo(deps, vnf.id, { vnfdId: OTHER });
    await expect(refused).rejects.toThrow(ValidationError);
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: OTHER })).rejects.toThrow(/"another vendor" \/ "Basic CNF".*same vnfProvider and vnfProductName/);
    await store.packages.setStates((await store.packages.get(V11)).id, { operationalState: 'DISABLED' }, new Date().toISOString());
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: V11 })).rejects.toThrow(/not ENABLED/);
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: 'nope' })).rejects.toThrow(/no onboarded package has vnfdId/);
    expect((await listOpOccs(deps, { vnf: vnf.id })).map((o) => o.operation)).toEqual(['INSTANTIATE']);
    expect((await getVnf(deps, vnf.id)).vnfdId).toBe(V1);
    expect(driver.calls).toEqual([]);
    expect(hooks).toEqual([]);
  });

  it('a driver failure is FAILED_TEMP; retry completes; a rollback puts the old images back and records nothing', async () => {
    const vnf = await instantiated();
    driver.failOnce('changePackage', new Error('rollout stuck'));
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: V11 })).rejects.toThrow(/MODIFY_INFO of vnf instance .* failed: rollout stuck; occurrence .* is FAILED_TEMP/);
    const failed = (await listOpOccs(deps, { vnf: vnf.id })).find((o) => o.operation === ('MODIFY_INFO' as string))!;
    expect(failed.operationState).toBe('FAILED_TEMP');
    expect((await getVnf(deps, vnf.id)).vnfdId).toBe(V1);
    const retried = await retryOpOcc(deps, failed.id);
    expect(retried.opOcc.operationState).toBe('COMPLETED');
    expect(retried.vnfInstance.vnfdId).toBe(V11);

    const other = await createVnf(deps, { vnfdId: V1, name: 'web-b' });
    await instantiateVnf(deps, other.id, {
      ...request('instantiate.json'),
      additionalParams: { ...(request('instantiate.json')['additionalParams'] as object), namespace: 'other-ns' },
    });
    driver.failOnce('changePackage', new Error('rollout stuck'));
    await expect(modifyVnfInfo(deps, other.id, { vnfdId: V11, vnfInstanceName: 'never' })).rejects.toThrow(/FAILED_TEMP/);
    const op = (await listOpOccs(deps, { vnf: other.id })).find((o) => o.operationState === 'FAILED_TEMP')!;
    const back = await rollbackOpOcc(deps, op.id);
    expect(back.opOcc.operationState).toBe('ROLLED_BACK');
    expect(appliedImage()).toBe(OLD_IMAGE);
    expect(await getVnf(deps, other.id)).toMatchObject({ vnfdId: V1, vnfInstanceName: 'web-b' });
  });
});

describe('vnf-update: ConfigMaps and Secrets (metadata.configmap_secret_paths)', () => {
  const CONFIG2 = 'Files/kubernetes/configmap_2.yaml';
  const V12 = '7e5f2a90-1b2c-4d3e-8f40-5a6b7c8d9e12';

  beforeEach(async () => {
    const config = readFileSync(join(SAMPLE, 'package', 'Files/kubernetes/configmap.yaml'), 'utf8').replace('version 1.0 is running', 'version 1.2 is running');
    const dir = packageVariant(join(SAMPLE, 'package'), { fromVnfdId: V1, vnfdId: V12, softwareVersion: '1.2', add: [[CONFIG2, config]] });
    await onboardPackage({ packages: store.packages, home, now: () => new Date() }, { path: dir });
  });

  it('the listed file replaces the deployed one with the same ConfigMap; the Deployment using it restarts; the instance records the file', async () => {
    const vnf = await instantiated();
    const r = await modifyVnfInfo(deps, vnf.id, { vnfdId: V12, metadata: { configmap_secret_paths: [CONFIG2] } });
    expect(r.opOcc.operationState).toBe('COMPLETED');
    const call = [...driver.calls].reverse().find((c) => c.method === 'changePackage')!;
    const objects = (
      call.input as {
        objects: { kind: string; metadata: { name: string }; data?: Record<string, string>; spec?: { template: { metadata?: { annotations?: Record<string, string> } } } }[];
      }
    ).objects;
    expect(objects.find((o) => o.kind === 'ConfigMap')?.data?.['index.html']).toMatch(/version 1.2 is running/);
    expect(objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'vdu1')?.spec?.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt']).toMatch(
      /^\d{4}-\d{2}-\d{2}T/,
    );
    expect(r.vnfInstance.instantiatedVnfInfo!.metadata['lcm-kubernetes-def-files']).toContain(CONFIG2);
    expect(r.vnfInstance.instantiatedVnfInfo!.metadata['lcm-kubernetes-def-files']).not.toContain('Files/kubernetes/configmap.yaml');
  });

  it('a listed file the new package lacks, or one with no deployed ConfigMap: refused, nothing recorded', async () => {
    const vnf = await instantiated();
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: V12, metadata: { configmap_secret_paths: ['Files/nope.yaml'] } })).rejects.toThrow(
      /configmap_secret_paths: the new package has no file/,
    );
    await expect(modifyVnfInfo(deps, vnf.id, { vnfdId: V12, metadata: { configmap_secret_paths: ['Files/kubernetes/service.yaml'] } })).rejects.toThrow(
      /defines no ConfigMap or Secret the instance deployed/,
    );
    expect(await listOpOccs(deps, { vnf: vnf.id })).toHaveLength(1);
  });
});

describe("vnf-update: Tacker's functional-test bodies", () => {
  it('the all-attributes body (update_vnf_max shape): a second VIM inline is not kept nor its password recorded, VNFC properties set', async () => {
    const vnf = await instantiated();
    const vnfcId = vnf.instantiatedVnfInfo!.vnfcInfo[0]!.id;
    const notices: string[] = [];
    const r = await modifyVnfInfo(
      deps,
      vnf.id,
      {
        // Tacker's body says "new name": vnfm's instance names take no space (vnf-create's rules, the same for every path).
        vnfInstanceName: 'new-name',
        vnfInstanceDescription: 'new description',
        vnfdId: V11,
        vnfConfigurableProperties: { 'dummy-key': 'dummy-value' },
        metadata: { 'dummy-key': 'dummy-value' },
        extensions: { 'dummy-key': 'dummy-value' },
        vimConnectionInfo: {
          vim2: {
            vimId: 'ac2d2ece-5e49-4b15-b92d-b681e9c096d8',
            vimType: 'ETSINFV.OPENSTACK_KEYSTONE.V_3',
            interfaceInfo: { endpoint: 'http://127.0.0.1/identity/v3' },
            accessInfo: { username: 'dummy_user', region: 'RegionOne', password: 'dummy-password', project: 'dummy_project', projectDomain: 'Default', userDomain: 'Default' },
            extra: { 'dummy-key': 'dummy-value' },
          },
        },
        vnfcInfoModifications: [{ id: vnfcId, vnfcConfigurableProperties: { 'dummy-key': 'dummy-value' } }],
      },
      { onEvent: (e) => void (e.type === 'notice' && notices.push(e.message)) },
    );
    expect(r.opOcc.operationState).toBe('COMPLETED');
    expect(r.vnfInstance).toMatchObject({
      vnfInstanceName: 'new-name',
      vnfInstanceDescription: 'new description',
      vnfdId: V11,
      vimId: 'vim-k8s',
      vnfConfigurableProperties: { 'dummy-key': 'dummy-value' },
    });
    expect(notices.join('\n')).toMatch(/vimConnectionInfo.vim2 is not kept/);
    expect(JSON.stringify(await listOpOccs(deps, { vnf: vnf.id }))).not.toContain('dummy-password');
    expect(JSON.stringify(await getVnf(deps, vnf.id))).not.toContain('dummy-password');
    // The pods were replaced by the image change; the VNFC property stays where the id still exists, and the request named one that existed.
    expect(appliedImage()).toBe(NEW_IMAGE);
  });

  it('the minimal body (update_vnf_min shape), and a VNFC id the instance lacks refused', async () => {
    const vnf = await instantiated();
    const vnfcId = vnf.instantiatedVnfInfo!.vnfcInfo[0]!.id;
    const r = await modifyVnfInfo(deps, vnf.id, { vnfcInfoModifications: [{ id: vnfcId, vnfcConfigurableProperties: { k: 'v' } }] });
    expect(r.vnfInstance.instantiatedVnfInfo!.vnfcInfo.find((v) => v.id === vnfcId)?.vnfcConfigurableProperties).toEqual({ k: 'v' });
    await expect(modifyVnfInfo(deps, vnf.id, { vnfcInfoModifications: [{ id: 'VDU1-nope', vnfcConfigurableProperties: {} }] })).rejects.toThrow(
      /vnfcInfoModifications\[0\].id: the instance has no VNFC/,
    );
  });
});

describe('vnf-update: bad requests', () => {
  it.each([
    [{ vnfInstanceNam: 'typo' }, /vnfInstanceNam: is not a field of a VnfInfoModificationRequest/],
    [{ vnfInstanceName: 7 }, /vnfInstanceName: must be a string/],
    [{ metadata: ['a'] }, /metadata: must be an object/],
    [{ vnfdId: '' }, /vnfdId: must be a non-empty string/],
    [{ vimConnectionInfo: { vim1: { id: 'x', vimId: 'k8s' } } }, /mixes the v1 and v2 forms/],
    [{ vimConnectionInfo: { vim1: null } }, /vimConnectionInfo.vim1: cannot be removed/],
    ['not an object', /is not a JSON object/],
  ])('%j is refused with exit 2, nothing recorded', async (body, message) => {
    const vnf = await instantiated();
    const err = await modifyVnfInfo(deps, vnf.id, body, { source: 'update.json' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(ExitCode.usage);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toMatch(/^update\.json/);
    expect(await listOpOccs(deps, { vnf: vnf.id })).toHaveLength(1);
  });

  it('change-ext-conn: refused for a Kubernetes VNF, as Tacker refuses it', async () => {
    const vnf = await instantiated();
    await expect(changeExtConn(deps, vnf.id, { extVirtualLinks: [] })).rejects.toThrow(/not supported for Kubernetes VNFs/);
    expect(await listOpOccs(deps, { vnf: vnf.id })).toHaveLength(1);
  });

  it('jsonMergePatch follows RFC 7396', () => {
    expect(jsonMergePatch({ a: 'b', c: { d: 'e', f: 'g' } }, { a: 'z', c: { f: null } })).toEqual({ a: 'z', c: { d: 'e' } });
    expect(jsonMergePatch({ a: [1] }, { a: [2] })).toEqual({ a: [2] });
    expect(jsonMergePatch({ a: 1 }, 'x')).toBe('x');
  });
});

describe('vnf-update: the name rules and uniqueness of vnf-create', () => {
  const occurrencesOf = async (id: string) => (await listOpOccs(deps, { vnf: id })).length;

  it.each([
    ['a control character', 'web\x1b[2J'],
    ['a newline', 'web\nname'],
    ['a bidi override', 'web\u202egnp'],
    ['a space', 'web 2'],
    ['shell syntax', 'zz$(touch PWNED)'],
    ['an empty name', ''],
    ['129 characters', 'w'.repeat(129)],
  ])('%s: refused (exit 2) naming the field, nothing recorded, on an instantiated and a NOT_INSTANTIATED instance', async (_, name) => {
    const web = await instantiated();
    const idle = await createVnf(deps, { vnfdId: V1, name: 'idle' });
    for (const vnf of [web, idle]) {
      const before = await occurrencesOf(vnf.id);
      const err = await modifyVnfInfo(deps, vnf.id, { vnfInstanceName: name }, { source: 'rename.json' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).exitCode).toBe(ExitCode.usage);
      expect((err as Error).message).toMatch(/^rename\.json: vnfInstanceName: .* is not a usable instance name/);
      expect(await occurrencesOf(vnf.id)).toBe(before);
      expect((await getVnf(deps, vnf.id)).vnfInstanceName).toBe(vnf.vnfInstanceName);
    }
  });

  it("another instance's name: refused (exit 4), nothing recorded, and vnf-show by either name still finds one instance", async () => {
    const web = await instantiated();
    const idle = await createVnf(deps, { vnfdId: V1, name: 'idle' });
    for (const [vnf, taken] of [
      [web, 'idle'],
      [idle, 'web'],
      [web, idle.id],
    ] as const) {
      const before = await occurrencesOf(vnf.id);
      const err = await modifyVnfInfo(deps, vnf.id, { vnfInstanceName: taken }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConflictError);
      expect((err as ConflictError).exitCode).toBe(ExitCode.conflict);
      expect(await occurrencesOf(vnf.id)).toBe(before);
    }
    expect((await getVnf(deps, 'web')).id).toBe(web.id);
    expect((await getVnf(deps, 'idle')).id).toBe(idle.id);
    // Its own name again is no change.
    expect((await modifyVnfInfo(deps, web.id, { vnfInstanceName: 'web' })).opOcc.operationState).toBe('COMPLETED');
  });

  it('the write checks the name again in its own transaction: another client that took it after the check still wins', async () => {
    const idle = await createVnf(deps, { vnfdId: V1, name: 'idle' });
    // Another client of the same store takes the name between this one's check and its write.
    const other = openStore(home);
    try {
      await store.instances.assertNameFree('busy', idle.id);
      await createVnf({ ...deps, store: other }, { vnfdId: V1, name: 'busy' });
      await expect(store.instances.update({ ...(await getVnf(deps, idle.id)), vnfInstanceName: 'busy' }, { checkName: true })).rejects.toThrow(ConflictError);
      await expect(store.instances.insert({ ...(await getVnf(deps, idle.id)), id: 'another-id', vnfInstanceName: 'busy' }, { checkName: true })).rejects.toThrow(ConflictError);
      await expect(store.instances.update({ ...(await getVnf(deps, idle.id)), vnfInstanceName: 'bad name' }, { checkName: true })).rejects.toThrow(UsageError);
    } finally {
      await other.close();
    }
    expect((await getVnf(deps, idle.id)).vnfInstanceName).toBe('idle');
    expect((await store.instances.list()).filter((i) => i.vnfInstanceName === 'busy')).toHaveLength(1);
  });

  it("a name a hook gives (a Tacker script's vnf_instance) is kept only when usable and free; the occurrence completes either way", async () => {
    const web = await instantiated();
    await createVnf(deps, { vnfdId: V1, name: 'idle' });
    const notices: string[] = [];
    for (const [given, kept] of [
      ['web\x1b]52;c;cHduZWQ=\x07', 'web'],
      ['idle', 'web'],
      ['web-from-script', 'web-from-script'],
    ] as const) {
      deps.mgmt = { runHook: async (ctx: HookContext) => (ctx.hook === 'modify_information_end' ? { instanceFields: { vnfInstanceName: given } } : undefined) };
      const r = await modifyVnfInfo(deps, web.id, { vnfInstanceDescription: given }, { onEvent: (e) => void (e.type === 'notice' && notices.push(e.message)) });
      expect(r.opOcc.operationState).toBe('COMPLETED');
      expect((await getVnf(deps, web.id)).vnfInstanceName).toBe(kept);
    }
    expect(notices).toEqual([
      'the name "web\\u001b]52;c;cHduZWQ=\\u0007" a hook gave the instance was not taken: it is not a usable instance name',
      'the name "idle" a hook gave the instance was not taken: another instance has it',
    ]);
  });
});

describe('store migration 7', () => {
  it('keeps occurrences and locks while lcm_op_occs gains MODIFY_INFO, and vnf_instances its metadata columns', async () => {
    const h = join(mkdtempSync(join(tmpdir(), 'vnfm-mig7-')), 'home');
    const db6 = openDatabase(h, { migrations: migrations.filter((m) => m.version <= 6) });
    db6.exec(`
      INSERT INTO vnf_packages (id, name, vnfd_id, onboarding_state, operational_state, usage_state, checksum_algorithm, checksum_hash, size_bytes, created_at, updated_at)
        VALUES ('p1', 'p', 'd1', 'ONBOARDED', 'ENABLED', 'IN_USE', 'SHA-256', 'x', 1, 't', 't');
      INSERT INTO vnf_instances (id, vnfd_id, vnf_pkg_id, instantiation_state, created_at, updated_at) VALUES ('i1', 'd1', 'p1', 'NOT_INSTANTIATED', 't', 't');
      INSERT INTO lcm_op_occs (id, vnf_instance_id, operation, operation_state, state_entered_time, start_time) VALUES ('o1', 'i1', 'SCALE', 'PROCESSING', 't', 't');
      INSERT INTO vnf_locks (vnf_instance_id, op_id, pid, acquired_at, host_name) VALUES ('i1', 'o1', 42, 't', 'h');
    `);
    expect(() =>
      db6.exec(
        "INSERT INTO lcm_op_occs (id, vnf_instance_id, operation, operation_state, state_entered_time, start_time) VALUES ('o2', 'i1', 'MODIFY_INFO', 'COMPLETED', 't', 't')",
      ),
    ).toThrow(/CHECK/);
    db6.close();
    const db7 = openDatabase(h, { migrations: migrations.filter((m) => m.version <= 7) });
    expect(db7.pragma('user_version', { simple: true })).toBe(7);
    expect(db7.prepare('SELECT op_id, pid, host_name FROM vnf_locks').all()).toEqual([{ op_id: 'o1', pid: 42, host_name: 'h' }]);
    expect(db7.prepare('SELECT id, operation FROM lcm_op_occs').all()).toEqual([{ id: 'o1', operation: 'SCALE' }]);
    db7.exec("INSERT INTO lcm_op_occs (id, vnf_instance_id, operation, operation_state, state_entered_time, start_time) VALUES ('o2', 'i1', 'MODIFY_INFO', 'COMPLETED', 't', 't')");
    expect(db7.pragma('foreign_key_check')).toEqual([]);
    // The lock still cascades with its occurrence.
    db7.exec("DELETE FROM lcm_op_occs WHERE id = 'o1'");
    expect(db7.prepare('SELECT count(*) AS n FROM vnf_locks').get()).toEqual({ n: 0 });
    db7.close();
  });
});
