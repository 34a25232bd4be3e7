import type { Context } from '../context.js';
import type { KubeAccess, KubeTransport } from '../../infra/kubernetes/index.js';
import type { LcmDeps, VimConnection } from '../../lcm/index.js';
import type { KeystoneCredentials } from '../../infra/openstack/index.js';
import type { ManagementDriver, ManagementServices, ScriptIsolation, WorkloadVimRegistry } from '../../mgmt/index.js';
import type { SecretReader } from '../../infra/kubernetes/secrets.js';
import type { Store } from '../../store/index.js';
import type { HelmServices } from '../../lcm/planners/helm.js';
import type { VimDeps } from '../../vim/index.js';
import { keystoneCredentialsOf as keystoneCredentialsFor, kubeAccessOf as kubeAccessFor } from '../../vim/access.js';
import { VnfmError } from '../../errors.js';

/**
 * Wires the lifecycle use cases to the store, the keyring (opened only when a
 * registered VIM's secrets are needed) and the Kubernetes infra-driver
 * (loaded only when an operation reaches the VIM), or the OpenStack one. `close` drops the
 * drivers' idle connections.
 */
export async function lcmDeps(ctx: Context): Promise<{ deps: LcmDeps; close(): void }> {
  const store = await ctx.store();
  const drivers: { close(): void }[] = [];
  // A Kubernetes VIM is checked before the operation, then driven: the first driver made with the same
  // access goes on over the check's connection (one TLS context and handshake on both ends, not two).
  const checked = new Map<string, KubeTransport>();
  const checkTransport = async (access: KubeAccess) => {
    const { createKubeTransport } = await import('../../infra/kubernetes/kube-api.js');
    const transport = createKubeTransport(access);
    drivers.push(transport);
    checked.set(JSON.stringify(access), transport);
    return transport;
  };
  const adoptTransport = (access: KubeAccess) => {
    const key = JSON.stringify(access);
    const transport = checked.get(key);
    checked.delete(key);
    return transport;
  };
  const secretReader = async (vim: VimConnection) => {
    const { createSecretReader } = await import('../../infra/kubernetes/secrets.js');
    return createSecretReader(await kubeAccessOf(vim));
  };
  const deps: LcmDeps = {
    store,
    home: ctx.home,
    now: () => ctx.now(),
    async openVimSecrets(vim) {
      const { openSecrets } = await import('../../vim/index.js');
      return await openSecrets(store.vims, await ctx.keyring(), vim);
    },
    async kubernetesDriver(vim) {
      const { createKubernetesDriver } = await import('../../infra/kubernetes/index.js');
      const access = await kubeAccessOf(vim);
      const transport = adoptTransport(access);
      const driver = createKubernetesDriver(access, { ...(deps.sleep ? { retry: { sleep: deps.sleep } } : {}), ...(transport ? { transport } : {}) });
      drivers.push(driver);
      return driver;
    },
    async openstackDriver(vim) {
      const { createOpenStackDriver } = await import('../../infra/openstack/index.js');
      const extra = vim.spec.extra ?? {};
      const iface = extra['interface'];
      const driver = createOpenStackDriver(keystoneCredentialsOf(vim), {
        ...(vim.spec.regionName ? { region: vim.spec.regionName } : {}),
        ...(iface === 'public' || iface === 'internal' || iface === 'admin' ? { interface: iface } : {}),
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
      });
      drivers.push(driver);
      return driver;
    },
    secretReader,
    async seal(plain) {
      const { token, keyId } = (await ctx.keyring()).encrypt(plain);
      return { sealed: token, keyId };
    },
    async open(value) {
      return (await ctx.keyring()).decrypt(value.sealed, value.keyId);
    },
    async checkInlineVim(vim) {
      const { checkVim } = await import('../../vim/check.js');
      // A Kubernetes VIM is asked over a connection the driver then takes over.
      await checkVim(vim.spec, vim.secrets, { kubeTransport: checkTransport });
    },
  };
  // Helm (planners/helm.ts) only when an operation on a Helm CNF needs it: helm from VNFM_HELM or PATH.
  const helm: HelmServices = {
    async client(vim) {
      const { createHelmClient } = await import('../../infra/helm/index.js');
      return createHelmClient({ access: await kubeAccessOf(vim), env: ctx.env });
    },
    async chartTool() {
      const { createHelmChartTool } = await import('../../infra/helm/index.js');
      return createHelmChartTool({ env: ctx.env });
    },
  };
  Object.assign(deps, { helm });
  // The management drivers (and what they load) only when an operation reaches a hook.
  let mgmt: Promise<ManagementDriver> | undefined;
  const driver = () =>
    (mgmt ??= import('../../mgmt/index.js').then(({ createManagementDriver, resolveScriptIsolation }) => {
      let isolation: ScriptIsolation | undefined;
      // Decided once per command, when an operation first needs it: vnfm as root runs scripts as another user.
      const scriptIsolation = () => (isolation ??= resolveScriptIsolation({ uid: process.getuid?.(), user: ctx.env['VNFM_SCRIPT_USER'], hide: [ctx.home], path: ctx.env['PATH'] }));
      return createManagementDriver({ ...managementServices(ctx, store, secretReader), scriptIsolation });
    }));
  // A hook the VNFD's flavour does not implement asks nothing of the drivers (nor does an operation
  // none of whose hooks it implements): their chunk of the bundle is not loaded for it.
  deps.mgmt = {
    async prepare(input) {
      if (!input.hooks.some((h) => input.implementations[h])) return input.request;
      const d = await driver();
      return d.prepare ? d.prepare(input) : input.request;
    },
    async runHook(hookCtx) {
      if (!hookCtx.implementation) return;
      return (await driver()).runHook(hookCtx);
    },
    async runUserData(run) {
      const d = await driver();
      if (!d.runUserData) throw new VnfmError(`user-data class ${run.className} in ${run.file}: the management drivers run no user-data class`);
      return d.runUserData(run);
    },
  };
  return { deps, close: () => drivers.splice(0).forEach((d) => d.close()) };
}

/** The API server access of a VIM; an OIDC VIM's token is fetched now, in memory. */
/**
 * What the built-in management drivers reach: Secrets on the instance's VIM,
 * the keyring (to seal the secrets a request carries for later hooks), the
 * VIM use cases (capi-credentials registers workload clusters as VIMs), SSH
 * to the instance's servers and the host keys pinned for them.
 */
function managementServices(ctx: Context, store: Store, secrets: (vim: VimConnection) => Promise<SecretReader>): ManagementServices {
  const vimDeps = async (): Promise<VimDeps> => {
    const [{ checkVim }, keyring] = await Promise.all([import('../../vim/check.js'), ctx.keyring()]);
    return { vims: store.vims, keyring: () => keyring, check: checkVim, now: () => ctx.now() };
  };
  const configOf = async (kubeconfig: string, origin: string, extra: Record<string, string>) => {
    const { parseKubeconfigText } = await import('../../vim/kubeconfig.js');
    const config = parseKubeconfigText(kubeconfig, origin);
    config.spec.extra = { ...config.spec.extra, ...extra };
    return config;
  };
  const vims: WorkloadVimRegistry = {
    find: async (ref) => await store.vims.find(ref),
    async register(input) {
      const { registerVim } = await import('../../vim/register.js');
      const source = { kind: 'config' as const, config: await configOf(input.kubeconfig, input.origin, input.extra) };
      return registerVim(await vimDeps(), { name: input.name, description: input.description, isDefault: input.isDefault, source });
    },
    async update(id, input) {
      const { updateVim } = await import('../../vim/register.js');
      const source = { kind: 'config' as const, config: await configOf(input.kubeconfig, input.origin, input.extra) };
      return updateVim(await vimDeps(), { ref: id, source, ...(input.isDefault ? { isDefault: true } : {}) });
    },
    usedBy: async (id) => (await store.instances.list()).filter((i) => i.vimId === id).map((i) => i.vnfInstanceName ?? i.id),
    remove: async (id) => await store.vims.deleteAll([id]),
  };
  return {
    secrets,
    vims,
    // src/mgmt/ssh loads the SSH library (a chunk of the bundle) only when a driver connects.
    async ssh(target, opts) {
      const { connectSsh } = await import('../../mgmt/ssh/index.js');
      return connectSsh(target, opts);
    },
    hostKeys: store.hostKeys,
    async seal(plain) {
      const { token, keyId } = (await ctx.keyring()).encrypt(plain);
      return { sealed: token, keyId };
    },
    async open(value) {
      return (await ctx.keyring()).decrypt(value.sealed, value.keyId);
    },
  };
}

/** Keystone v3 credentials of an OpenStack VIM, as the VIM check reaches it. */
export function keystoneCredentialsOf(vim: VimConnection): KeystoneCredentials {
  return keystoneCredentialsFor(vim.spec, vim.secrets);
}

function kubeAccessOf(vim: VimConnection): Promise<KubeAccess> {
  return kubeAccessFor(vim.spec, vim.secrets);
}
