/**
 * Master key rotation over the real store (SQLite on a temp VNFM_HOME) and
 * the real keyring: every kind of sealed secret is rotated and opens with
 * the new key alone; a writer that sealed before a rotation committed has
 * its secret sealed again under the new key; rotations and operations
 * exclude each other through the store's lock.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateFernetKey, loadKeyring, resealToken, rotateMasterKey, type Keyring } from '../../src/crypto/index.js';
import { ConflictError, SecretKeyError } from '../../src/errors.js';
import type { LcmOpOcc, LcmRequest, PriorState, VnfInstance } from '../../src/lcm/index.js';
import { createManagementDriver, openSealed, type ManagementServices } from '../../src/mgmt/index.js';
import { ROTATION_LOCK, openStore, type Store } from '../../src/store/index.js';
import { openSecrets, sealSecrets, type Vim, type VimSecrets } from '../../src/vim/index.js';
import type { HookImplementation, LcmHook } from '../../src/vnfd/index.js';
import { packageRecord } from '../support/store-records.js';

const NOW = '2026-01-01T00:00:00.000Z';
const CA = '-----BEGIN CERTIFICATE-----\nMIIBroot\n-----END CERTIFICATE-----\n';

function newHome(): string {
  return join(mkdtempSync(join(tmpdir(), 'vnfm-rotation-')), 'home');
}

/** A store wired as the cli wires it: writers seal again under the active key with the keys at hand. */
function openWired(home: string, env: Record<string, string | undefined>, held: () => Keyring | undefined): Store {
  const onDisk = (): Keyring[] => {
    try {
      return [loadKeyring({ home, env, createIfMissing: false })];
    } catch {
      return [];
    }
  };
  return openStore(home, {
    resealer: (token, from, to) => {
      const mine = held();
      return resealToken([...(mine ? [mine] : []), ...onDisk()], token, from, to);
    },
  });
}

function vim(id: string, secrets: VimSecrets, auth: Vim['spec']['auth']): Vim {
  return {
    id,
    name: id,
    description: '',
    isDefault: false,
    status: 'PENDING',
    createdAt: NOW,
    updatedAt: NOW,
    spec: { type: 'kubernetes', authUrl: 'https://127.0.0.1:6443', auth, verifyTls: true },
    secretNames: Object.keys(secrets) as (keyof VimSecrets)[],
  };
}

function packageDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vnfm-rotation-pkg-'));
  mkdirSync(join(dir, 'Scripts'));
  mkdirSync(join(dir, 'Files', 'registries'), { recursive: true });
  writeFileSync(join(dir, 'Scripts', 'install_k8s_cluster.sh'), '#!/bin/bash\necho install\n');
  writeFileSync(join(dir, 'Files', 'registries', 'ca.crt'), CA);
  return dir;
}

async function seedPackage(store: Store): Promise<void> {
  await store.packages.insert(packageRecord());
}

const K8S_MGMT: HookImplementation = { implementation: 'mgmt-drivers-kubernetes', artifactFile: 'Scripts/kubernetes_mgmt.py' };
const CAPI: HookImplementation = { implementation: 'capi', artifactFile: 'Scripts/capi_credentials.py' };
const REGISTRY: HookImplementation = { implementation: 'registry', artifactFile: 'Scripts/private_registry_mgmt.py' };

/** The instantiate request as the management drivers' prepare records it: every secret sealed with `keyring`. */
async function preparedRequest(keyring: Keyring, dir: string): Promise<LcmRequest> {
  const services = {
    seal: async (plain: string) => {
      const { token, keyId } = keyring.encrypt(plain);
      return { sealed: token, keyId };
    },
    open: async () => {
      throw new Error('not used');
    },
  } as unknown as ManagementServices;
  const hooks: LcmHook[] = ['instantiate_start', 'instantiate_end', 'terminate_start'];
  const request: LcmRequest = {
    flavourId: 'simple',
    additionalParams: {
      k8s_cluster_installation_param: {
        script_path: 'Scripts/install_k8s_cluster.sh',
        master_node: {
          aspect_id: 'master_instance',
          ssh_cp_name: 'm_CP1',
          nic_cp_name: 'm_CP1',
          username: 'ubuntu',
          password: 'ssh-master-secret',
          pod_cidr: '192.168.3.0/24',
          cluster_cidr: '10.199.187.0/24',
          cluster_cp_name: 'm_CP1',
        },
        worker_node: { aspect_id: 'worker_instance', ssh_cp_name: 'w_CP2', nic_cp_name: 'w_CP2', username: 'ubuntu', password: 'ssh-worker-secret' },
        private_registry_connection_info: [
          { connection_type: 1, server: 'registry.example.com', username: 'u', password: 'registry-secret', certificate_path: 'Files/registries/ca.crt' },
        ],
      },
      private_registry_installation_param: { ssh_cp_name: 'r_CP1', ssh_username: 'ubuntu', ssh_password: 'registry-host-ssh-secret' },
      vnfm_credentials_receiver: { url: 'https://127.0.0.1:9443/c', bearerToken: 'receiver-token-secret' },
    },
  } as LcmRequest;
  // Each built-in driver named by a hook of the operation prepares (seals) its own parameters.
  return createManagementDriver(services).prepare!({
    operation: 'INSTANTIATE',
    hooks,
    request,
    source: 'inst.json',
    packageDir: dir,
    allowPackageScripts: async () => false,
    implementations: { instantiate_start: REGISTRY, instantiate_end: K8S_MGMT, terminate_start: CAPI },
  });
}

const PLAIN_IN_REQUEST = ['ssh-master-secret', 'ssh-worker-secret', 'registry-secret', 'registry-host-ssh-secret', 'receiver-token-secret'];

function instanceWith(request: LcmRequest, keyring: Keyring): VnfInstance {
  const ap = (request as { additionalParams: Record<string, unknown> }).additionalParams;
  const inline = keyring.encrypt('inline-bearer-token-secret');
  return {
    id: 'inst-1',
    vnfInstanceDescription: '',
    vnfdId: 'vnfd-1',
    vnfPkgId: 'p1',
    vnfProvider: 'ACME',
    vnfProductName: 'cnf',
    vnfSoftwareVersion: '1.0',
    vnfdVersion: '1.0',
    instantiationState: 'INSTANTIATED',
    createdAt: NOW,
    updatedAt: NOW,
    // Inline VIM credentials, were they kept with the instance: found wherever a sealed value rests.
    vimConnectionInfo: {
      vim1: { vimType: 'kubernetes', interfaceInfo: { endpoint: 'https://127.0.0.1:6443' }, accessInfo: { bearer_token: { sealed: inline.token, keyId: inline.keyId } } },
    } as VnfInstance['vimConnectionInfo'],
    instantiatedVnfInfo: {
      flavourId: 'simple',
      vnfState: 'STARTED',
      scaleStatus: [],
      maxScaleLevels: [],
      vnfcResourceInfo: [],
      vnfcInfo: [],
      resources: [],
      metadata: {
        namespace: 'default',
        'lcm-kubernetes-def-files': [],
        vduReplicas: {},
        // What the drivers keep with the instance for later operations (heal, scale).
        mgmt: {
          'kubernetes-mgmt': { params: ap['k8s_cluster_installation_param'] },
          'private-registry-mgmt': ap['private_registry_installation_param'],
          'capi-credentials': { receiver: ap['vnfm_credentials_receiver'] },
        },
      },
    },
  };
}

function opOcc(request: LcmRequest): LcmOpOcc {
  return {
    id: 'op-1',
    vnfInstanceId: 'inst-1',
    operation: 'INSTANTIATE',
    operationState: 'COMPLETED',
    stateEnteredTime: NOW,
    startTime: NOW,
    operationParams: request,
    journal: [],
    isAutomaticInvocation: false,
  };
}

/** Every plain secret behind the store's sealed values, opened with `keyring` alone. */
async function openEverything(store: Store, keyring: Keyring): Promise<string[]> {
  const open = async (v: { sealed: string; keyId: string }) => keyring.decrypt(v.sealed, v.keyId);
  const texts = [
    JSON.stringify(await openSealed((await store.opOccs.get('op-1')).operationParams, open)),
    JSON.stringify(await openSealed(await store.opOccs.priorState('op-1'), open)),
    JSON.stringify(await openSealed(await store.instances.get('inst-1'), open)),
    ...(await Promise.all((await store.vims.list()).map(async (v) => JSON.stringify(await openSecrets(store.vims, keyring, v))))),
  ];
  return texts;
}

describe('master key rotation over the store', () => {
  it('rotates every kind of sealed secret (VIM password, bearer token, CA, SSH and registry passwords, receiver token, inline VIM credentials) and opens them all with the new key alone', async () => {
    const home = newHome();
    const before = loadKeyring({ home, env: {}, createIfMissing: true });
    const store = openWired(home, {}, () => before);
    try {
      await seedPackage(store);
      await store.vims.insert(
        vim('basic', { password: 'vim-password-secret', caCert: CA }, { method: 'basic', username: 'admin' }),
        sealSecrets(before, { password: 'vim-password-secret', caCert: CA }),
      );
      await store.vims.insert(vim('token', { bearerToken: 'vim-bearer-secret' }, { method: 'bearer-token' }), sealSecrets(before, { bearerToken: 'vim-bearer-secret' }));
      const request = await preparedRequest(before, packageDir());
      for (const plain of PLAIN_IN_REQUEST) expect(JSON.stringify(request)).not.toContain(plain);
      const instance = instanceWith(request, before);
      await store.instances.insert(instance);
      const prior: PriorState = { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'INSTANTIATED', instantiatedVnfInfo: instance.instantiatedVnfInfo! };
      await store.opOccs.insert(opOcc(request), prior);

      const stored = await store.secrets.listSecrets();
      // 2 VIMs; 5 in the request; 5 in the instance's records + 1 inline; 5 in the prior state.
      expect(stored).toHaveLength(2 + 5 + 6 + 5);
      expect(new Set(stored.map((s) => s.keyId))).toEqual(new Set([before.primaryKeyId]));

      const result = await rotateMasterKey({ home, env: {}, secrets: store.secrets });
      expect(result.rotated).toBe(stored.length);
      expect(result.unreadable).toEqual([]);
      const after = loadKeyring({ home, env: {}, createIfMissing: false });
      expect(after.keyIds).toEqual([result.keyId]);
      expect(readFileSync(join(home, 'master.key'), 'utf8').trim().split('\n')).toHaveLength(1);
      expect(await store.secrets.activeKeyId()).toBe(result.keyId);

      const opened = (await openEverything(store, after)).join('\n');
      for (const plain of [...PLAIN_IN_REQUEST, 'inline-bearer-token-secret', 'vim-password-secret', 'vim-bearer-secret', 'MIIBroot']) {
        expect(opened).toContain(plain);
      }
    } finally {
      await store.close();
    }
  });

  it('seals again under the new key a secret a writer sealed with the old one before the rotation committed', async () => {
    const home = newHome();
    const old = loadKeyring({ home, env: {}, createIfMissing: true });
    const writer = openWired(home, {}, () => old);
    const rotator = openStore(home);
    try {
      await writer.vims.insert(vim('a', { bearerToken: 'tok-a' }, { method: 'bearer-token' }), sealSecrets(old, { bearerToken: 'tok-a' }));
      // The writer seals now, with the keys it loaded...
      const sealedEarly = sealSecrets(old, { bearerToken: 'tok-b' });
      // ...a rotation in another process commits and drops the old key...
      const result = await rotateMasterKey({ home, env: {}, secrets: rotator.secrets });
      expect(loadKeyring({ home, env: {}, createIfMissing: false }).keyIds).toEqual([result.keyId]);
      // ...and the writer's write lands after it.
      await writer.vims.insert(vim('b', { bearerToken: 'tok-b' }, { method: 'bearer-token' }), sealedEarly);
      const onDisk = loadKeyring({ home, env: {}, createIfMissing: false });
      expect((await writer.vims.sealedSecrets('b'))!.keyId).toBe(result.keyId);
      expect(await Promise.all((await writer.vims.list()).map(async (v) => (await openSecrets(writer.vims, onDisk, v)).bearerToken))).toEqual(['tok-a', 'tok-b']);
    } finally {
      await writer.close();
      await rotator.close();
    }
  });

  it('refuses, writing nothing, a writer whose VNFM_MASTER_KEY lacks the key the store rotated to', async () => {
    const home = newHome();
    const oldKey = generateFernetKey();
    const newKey = generateFernetKey();
    const old = loadKeyring({ home, env: { VNFM_MASTER_KEY: oldKey }, createIfMissing: true });
    const writer = openWired(home, { VNFM_MASTER_KEY: oldKey }, () => old);
    const rotator = openStore(home);
    try {
      await writer.vims.insert(vim('a', { bearerToken: 'tok-a' }, { method: 'bearer-token' }), sealSecrets(old, { bearerToken: 'tok-a' }));
      await rotateMasterKey({ home, env: { VNFM_MASTER_KEY: `${newKey},${oldKey}` }, secrets: rotator.secrets });
      await expect(writer.vims.insert(vim('b', { bearerToken: 'tok-b' }, { method: 'bearer-token' }), sealSecrets(old, { bearerToken: 'tok-b' }))).rejects.toThrow(SecretKeyError);
      expect((await writer.vims.list()).map((v) => v.name)).toEqual(['a']);
    } finally {
      await writer.close();
      await rotator.close();
    }
  });

  it('seals again under the new key the sealed values an operation writes after a rotation committed', async () => {
    const home = newHome();
    const old = loadKeyring({ home, env: {}, createIfMissing: true });
    const writer = openWired(home, {}, () => old);
    const rotator = openStore(home);
    try {
      await seedPackage(writer);
      const request = await preparedRequest(old, packageDir());
      await rotateMasterKey({ home, env: {}, secrets: rotator.secrets });
      const instance = instanceWith(request, old);
      await writer.instances.insert(instance);
      await writer.opOccs.insert(opOcc(request), { vnfPkgId: 'p1', vnfdId: 'vnfd-1', instantiationState: 'INSTANTIATED', instantiatedVnfInfo: instance.instantiatedVnfInfo! });
      const onDisk = loadKeyring({ home, env: {}, createIfMissing: false });
      expect(onDisk.keyIds).toHaveLength(1);
      const opened = (await openEverything(writer, onDisk)).join('\n');
      for (const plain of [...PLAIN_IN_REQUEST, 'inline-bearer-token-secret']) expect(opened).toContain(plain);
    } finally {
      await writer.close();
      await rotator.close();
    }
  });

  it('takes the rotation lock once: a second holder is refused while the first runs, a dead holder is taken over, and operations wait for it', async () => {
    const home = newHome();
    const store = openStore(home, { isHolderAlive: (h) => h.pid !== 999_999 });
    try {
      const first = { pid: 4242, hostName: 'h', startTime: '1' };
      expect(await store.secrets.acquireLock(ROTATION_LOCK, first, NOW, () => true)).toEqual({});
      const refused = await store.secrets.acquireLock(ROTATION_LOCK, { pid: 4343 }, NOW, () => true).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as Error).message).toBe(`a master key rotation is in progress by pid 4242 on h since ${NOW}`);
      await expect(store.secrets.assertNoRotation()).rejects.toThrow(/master key rotation is in progress by pid 4242/);
      await store.secrets.releaseLock(ROTATION_LOCK, first);
      expect(await store.secrets.lockHolder(ROTATION_LOCK)).toBeUndefined();
      await store.secrets.assertNoRotation();

      await store.secrets.acquireLock(ROTATION_LOCK, { pid: 999_999 }, NOW, () => true);
      // Its holder no longer runs: operations go on, and the next rotation takes the lock over.
      await store.secrets.assertNoRotation();
      const taken = await store.secrets.acquireLock(ROTATION_LOCK, first, NOW, (h) => h.pid !== 999_999);
      expect(taken.staleHolder).toMatchObject({ pid: 999_999 });
    } finally {
      await store.close();
    }
  });
});
