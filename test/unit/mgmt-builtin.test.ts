/**
 * The built-in management drivers: chosen by the artifact's file name,
 * package scripts refused before the operation without the operator's
 * consent, and capi-credentials' hooks with an in-memory Secret reader and
 * VIM registry.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConflictError, UsageError, ValidationError } from '../../src/errors.js';
import type { SecretKeyRef, SecretReader } from '../../src/infra/kubernetes/secrets.js';
import type { LcmRequest, VimConnection, VnfInstance } from '../../src/lcm/index.js';
import { builtinDriverName, createManagementDriver, type HookContext, type ManagementServices, type WorkloadVimRegistry } from '../../src/mgmt/index.js';
import type { Vim } from '../../src/vim/index.js';
import type { HookImplementation, LcmHook } from '../../src/vnfd/index.js';

const CAPI: HookImplementation = { implementation: 'capi-credentials', artifactFile: 'Scripts/capi_credentials.py', artifactType: 'tosca.artifacts.Implementation.Python' };
const SCRIPT: HookImplementation = { implementation: 'post-install', artifactFile: 'Scripts/post_install.py' };
const b64 = (s: string) => Buffer.from(s).toString('base64');
const KUBECONFIG = [
  'apiVersion: v1',
  'kind: Config',
  'current-context: admin@w1',
  'clusters:',
  '- name: w1',
  '  cluster:',
  '    server: https://127.0.0.1:7443',
  `    certificate-authority-data: ${b64('CA PEM')}`,
  'users:',
  '- name: admin',
  '  user:',
  '    token: tok-1',
  'contexts:',
  '- name: admin@w1',
  '  context: {cluster: w1, user: admin}',
  '',
].join('\n');

describe('builtinDriverName', () => {
  it.each([
    ['Scripts/capi_credentials.py', 'capi-credentials'],
    ['Files/mgmt/capi-credentials.sh', 'capi-credentials'],
    ['Scripts/CAPI_Credentials.PY', 'capi-credentials'],
    ['Scripts/post_install.py', undefined],
    ['Scripts/container_update_mgmt_v2.py', 'container-update-mgmt-v2'],
    ['Scripts/container_update_mgmt.py', 'container-update-mgmt'],
    [undefined, undefined],
  ])('%s → %s', (file, name) => {
    expect(builtinDriverName({ implementation: 'x', ...(file ? { artifactFile: file } : {}) })).toBe(name);
  });
});

class FakeSecrets implements SecretReader {
  values = new Map<string, string>();
  waited: SecretKeyRef[] = [];
  closed = 0;
  async read(ref: SecretKeyRef) {
    return this.values.get(`${ref.namespace}/${ref.name}/${ref.key}`);
  }
  async waitFor(ref: SecretKeyRef) {
    this.waited.push(ref);
    const v = this.values.get(`${ref.namespace}/${ref.name}/${ref.key}`);
    if (v === undefined) throw new Error(`test: ${ref.name} never appears`);
    return v;
  }
  close() {
    this.closed++;
  }
}

class FakeVims implements WorkloadVimRegistry {
  vims: Vim[] = [];
  users = new Map<string, string[]>();
  calls: string[] = [];
  async find(ref: string) {
    return this.vims.find((v) => v.id === ref || v.name === ref);
  }
  private make(id: string, name: string, extra: Record<string, string>, isDefault: boolean): Vim {
    return {
      id,
      name,
      description: '',
      isDefault,
      secretNames: ['bearerToken'],
      status: 'REACHABLE',
      createdAt: '',
      updatedAt: '',
      spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:7443', auth: { method: 'bearer-token' }, verifyTls: true, extra },
    };
  }
  async register(input: Parameters<WorkloadVimRegistry['register']>[0]) {
    this.calls.push(`register ${input.name} ${input.origin}`);
    const vim = this.make(`id-${input.name}`, input.name, input.extra, input.isDefault);
    this.vims.push(vim);
    return vim;
  }
  async update(id: string, input: Parameters<WorkloadVimRegistry['update']>[1]) {
    this.calls.push(`update ${id}`);
    const vim = (await this.find(id))!;
    vim.spec.extra = input.extra;
    return vim;
  }
  async usedBy(id: string) {
    return this.users.get(id) ?? [];
  }
  async remove(id: string) {
    this.calls.push(`remove ${id}`);
    this.vims = this.vims.filter((v) => v.id !== id);
  }
}

function setup() {
  const secrets = new FakeSecrets();
  const vims = new FakeVims();
  const services: ManagementServices = {
    secrets: async () => secrets,
    vims,
    seal: async (plain) => ({ sealed: `sealed(${plain})`, keyId: 'k1' }),
    open: async (v) => v.sealed.replace(/^sealed\((.*)\)$/, '$1'),
  };
  return { secrets, vims, driver: createManagementDriver(services) };
}

const vimConnection: VimConnection = {
  id: 'mgmt',
  name: 'mgmt',
  inline: false,
  spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth: { method: 'bearer-token' }, verifyTls: true },
  secrets: {},
};

function instance(
  resources: VnfInstance['instantiatedVnfInfo'] extends infer I ? (I extends { resources: infer R } ? R : never) : never,
  mgmt?: Record<string, unknown>,
): VnfInstance {
  return {
    id: 'inst-1',
    vnfInstanceDescription: '',
    vnfdId: 'd',
    vnfPkgId: 'p',
    vnfProvider: '',
    vnfProductName: '',
    vnfSoftwareVersion: '',
    vnfdVersion: '',
    instantiationState: 'INSTANTIATED',
    vimId: 'mgmt',
    createdAt: '',
    updatedAt: '',
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [],
      maxScaleLevels: [],
      vnfcResourceInfo: [],
      vnfcInfo: [],
      resources,
      metadata: { namespace: 'capi', 'lcm-kubernetes-def-files': [], vduReplicas: {}, ...(mgmt ? { mgmt } : {}) },
    },
  };
}

const CLUSTER = [
  { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', name: 'w1', namespace: 'capi' },
  { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' },
];

function ctx(hook: LcmHook, over: Partial<HookContext> = {}): HookContext & { reports: string[] } {
  const reports: string[] = [];
  return {
    hook,
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    request: {},
    implementation: CAPI,
    packageDir: '/pkg',
    signal: new AbortController().signal,
    report: (m) => reports.push(m),
    log: () => {},
    vim: vimConnection,
    instance: instance([]),
    acceptHostKeys: [],
    allowPackageScripts: false,
    reports,
    ...over,
  };
}

describe('the management driver registry', () => {
  it('asks consent for a package script before the operation; refused, names the hook, the artifact and the file', async () => {
    const { driver } = setup();
    const dir = mkdtempSync(join(tmpdir(), 'vnfm-builtin-'));
    mkdirSync(join(dir, 'Scripts'));
    writeFileSync(join(dir, 'Scripts/post_install.py'), 'print("configured")\n');
    const err = await driver.prepare!({
      operation: 'INSTANTIATE',
      hooks: ['instantiate_start', 'instantiate_end'],
      implementations: { instantiate_end: SCRIPT },
      request: { flavourId: 'simple' },
      source: 'inst.json',
      packageDir: dir,
      allowPackageScripts: async () => false,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe('inst.json: package scripts were not allowed: hook instantiate_end runs Scripts/post_install.py (artifact post-install)');
    expect((err as UsageError).hint).toBe('review the script, then run again with --allow-package-scripts');
  });

  it('ignores declared hooks of other operations, and hooks the driver does not act on (with a notice)', async () => {
    const { driver, secrets } = setup();
    const req: LcmRequest = { type: 'SCALE_OUT', aspectId: 'a' };
    expect(
      await driver.prepare!({
        operation: 'SCALE',
        hooks: ['scale_start', 'scale_end'],
        implementations: { instantiate_end: SCRIPT, scale_end: CAPI },
        request: req,
        source: 's',
        packageDir: '/pkg',
        allowPackageScripts: async () => false,
      }),
    ).toBe(req);
    const c = ctx('scale_end');
    await driver.runHook(c);
    expect(c.reports).toEqual(['scale_end: the capi-credentials driver has nothing to do at this hook']);
    await driver.runHook(ctx('instantiate_start', { implementation: undefined }));
    expect(secrets.waited).toEqual([]);
  });

  it('checks the parameters and seals the receiver token in the request it records', async () => {
    const { driver } = setup();
    const prepare = (ap: Record<string, unknown>) =>
      driver.prepare!({
        operation: 'INSTANTIATE',
        hooks: ['instantiate_start', 'instantiate_end'],
        implementations: { instantiate_end: CAPI },
        request: { flavourId: 'simple', additionalParams: ap },
        source: 'inst.json',
        packageDir: '/pkg',
        allowPackageScripts: async () => false,
      });
    const recorded = await prepare({
      namespace: 'capi',
      vnfm_credentials_receiver: { url: 'https://127.0.0.1:9443/c', bearerToken: 'secret-token' },
      vnfm_register_vim: { name: 'w1' },
    });
    expect((recorded as { additionalParams: unknown }).additionalParams).toEqual({
      namespace: 'capi',
      vnfm_credentials_receiver: { url: 'https://127.0.0.1:9443/c', bearerToken: { sealed: 'sealed(secret-token)', keyId: 'k1' } },
      vnfm_register_vim: { name: 'w1' },
    });
    await expect(prepare({ vnfm_register_vim: { name: '' } })).rejects.toThrow(ValidationError);
    await expect(prepare({ vnfm_register_vim: { name: 'w', isDefault: 'yes' } })).rejects.toThrow(/isDefault: must be true or false/);
    await expect(prepare({ vnfm_credentials_receiver: { url: 'http://x/' } })).rejects.toThrow(/https/);
  });
});

describe('capi-credentials', () => {
  it('instantiate_end waits for <cluster>-kubeconfig, registers the VIM and records it; terminate removes it', async () => {
    const { driver, secrets, vims } = setup();
    secrets.values.set('capi/w1-kubeconfig/value', KUBECONFIG);
    const request = { flavourId: 'simple', additionalParams: { vnfm_register_vim: { name: 'workload', isDefault: false } } };
    const c = ctx('instantiate_end', { request, result: instance(CLUSTER) });
    const outcome = await driver.runHook(c);
    expect(secrets.waited).toEqual([{ namespace: 'capi', name: 'w1-kubeconfig', key: 'value' }]);
    expect(secrets.closed).toBe(1);
    expect(vims.calls).toEqual(['register workload Secret capi/w1-kubeconfig']);
    expect(vims.vims[0]!.spec.extra).toEqual({ 'vnfm-vnf-instance-id': 'inst-1', 'cluster-api-cluster': 'capi/w1' });
    expect(outcome).toEqual({
      record: { 'capi-credentials': { registerVim: { name: 'workload', isDefault: false }, vims: [{ id: 'id-workload', name: 'workload', cluster: 'capi/w1' }] } },
    });
    expect(c.reports.join('\n')).not.toContain('tok-1');

    // A retry (or heal_end) updates the VIM it registered instead of failing on the name.
    const stored = instance(CLUSTER, (outcome as { record: Record<string, unknown> }).record);
    await driver.runHook(ctx('heal_end', { operation: 'HEAL', request: {}, instance: stored, result: stored }));
    expect(vims.calls.at(-1)).toBe('update id-workload');

    // Terminate refuses to start while a CNF runs on that VIM, then removes it.
    vims.users.set('id-workload', ['web']);
    await expect(driver.runHook(ctx('terminate_start', { operation: 'TERMINATE', instance: stored }))).rejects.toThrow(ConflictError);
    vims.users.clear();
    await driver.runHook(ctx('terminate_start', { operation: 'TERMINATE', instance: stored }));
    const end = await driver.runHook(ctx('terminate_end', { operation: 'TERMINATE', instance: stored }));
    expect(vims.calls.at(-1)).toBe('remove id-workload');
    expect(end).toEqual({ record: { 'capi-credentials': null } });
  });

  it('refuses to take over a VIM of the same name that someone else registered', async () => {
    const { driver, secrets, vims } = setup();
    secrets.values.set('capi/w1-kubeconfig/value', KUBECONFIG);
    await vims.register({ name: 'workload', description: '', isDefault: false, kubeconfig: '', origin: 'by hand', extra: {} });
    const request = { flavourId: 'simple', additionalParams: { vnfm_register_vim: { name: 'workload' } } };
    await expect(driver.runHook(ctx('instantiate_end', { request, result: instance(CLUSTER) }))).rejects.toThrow(/already registered .* does not belong to vnf instance inst-1/);
  });

  it('reports and does nothing when the instance has no Cluster', async () => {
    const { driver, secrets } = setup();
    const c = ctx('instantiate_end', { result: instance([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'x' }]) });
    expect(await driver.runHook(c)).toEqual({});
    expect(c.reports[0]).toMatch(/no Cluster API Cluster/);
    expect(secrets.waited).toEqual([]);
  });
});
