/**
 * The `capi-credentials` built-in driver (seed 000, steps 6–8): once the
 * infra-driver has created a Cluster API workload cluster, wait for the
 * kubeconfig Secret its controllers write, then hand the credentials over —
 * POSTed to the operator's receiver, and/or registered as a Kubernetes VIM
 * in vnfm's own store. Terminate removes the VIMs it registered.
 */
import { ConflictError, ValidationError, VnfmError } from '../errors.js';
import type { ResourceRef } from '../infra/driver.js';
import { clustersOf } from '../model/clusters.js';
import type { LcmRequest, VnfInstance } from '../model/lcm.js';
import type { Vim } from '../model/vim.js';
import type { BuiltinDriver, ManagementServices, SealedValue } from './builtin.js';
import type { HookContext, HookOutcome, PrepareInput } from './index.js';
import { displayUrl, parseReceiver, sendCredentials } from './receiver.js';
import { additionalParams } from './request.js';
import { isSealed } from './sealed.js';
import { parseWorkloadKubeconfig } from './workload-credentials.js';

const NAME = 'capi-credentials';
export const RECEIVER_PARAM = 'vnfm_credentials_receiver';
export const REGISTER_VIM_PARAM = 'vnfm_register_vim';
/** Written into the VIM's spec.extra: which instance and Cluster a registered VIM belongs to. */
export const OWNER_EXTRA = 'vnfm-vnf-instance-id';
export const CLUSTER_EXTRA = 'cluster-api-cluster';

/** The receiver as kept in the recorded request and on the instance: the bearer token sealed. */
interface StoredReceiver {
  url: string;
  caCert?: string;
  bearerToken?: SealedValue;
}

interface RegisterVimParam {
  name: string;
  isDefault?: boolean;
}

interface Settings {
  receiver?: StoredReceiver;
  registerVim?: RegisterVimParam;
}

/** What the driver keeps on the instance (`metadata.mgmt["capi-credentials"]`). */
export interface CapiCredentialsRecord extends Settings {
  vims: { id: string; name: string; cluster: string }[];
}

function parseRegisterVim(source: string, value: unknown): RegisterVimParam {
  const field = `additionalParams.${REGISTER_VIM_PARAM}`;
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ValidationError(source, field, 'must be an object {"name": "VIM name", "isDefault": false}');
  const v = value as Record<string, unknown>;
  if (typeof v['name'] !== 'string' || v['name'].trim() === '' || v['name'].trim() !== v['name']) {
    throw new ValidationError(source, `${field}.name`, 'must be a VIM name (non-empty, no surrounding spaces)', { hint: '"name": "workload-1"' });
  }
  if (v['isDefault'] !== undefined && typeof v['isDefault'] !== 'boolean') throw new ValidationError(source, `${field}.isDefault`, 'must be true or false');
  return { name: v['name'], ...(v['isDefault'] === true ? { isDefault: true } : {}) };
}

/** The settings in a recorded request (prepared: the token already sealed). */
function settingsOfRequest(request: unknown): Settings | undefined {
  const ap = additionalParams(request);
  const r = ap[RECEIVER_PARAM] as StoredReceiver | undefined;
  const v = ap[REGISTER_VIM_PARAM] as RegisterVimParam | undefined;
  if (!r && !v) return undefined;
  return { ...(r ? { receiver: r } : {}), ...(v ? { registerVim: v } : {}) };
}

function recordOf(instance: VnfInstance | undefined): CapiCredentialsRecord | undefined {
  const mgmt = instance?.instantiatedVnfInfo?.metadata.mgmt;
  return (mgmt?.[NAME] as CapiCredentialsRecord | undefined) ?? undefined;
}

async function openToken(services: ManagementServices, token: SealedValue): Promise<string> {
  try {
    return await services.open(token);
  } catch (err) {
    throw new VnfmError(`the sealed ${RECEIVER_PARAM}.bearerToken cannot be opened with the current keyring`, {
      hint: 'the master key it was sealed with is gone (key rotation?): run the operation again with the token in the request',
      cause: err,
    });
  }
}

async function registerVim(
  services: ManagementServices,
  ctx: HookContext,
  name: string,
  isDefault: boolean,
  kubeconfig: string,
  origin: string,
  cluster: string,
  ours: Map<string, { id: string }>,
): Promise<Vim> {
  const registry = services.vims!;
  const extra = { [OWNER_EXTRA]: ctx.vnfInstanceId, [CLUSTER_EXTRA]: cluster };
  const existing = await registry.find(name);
  if (existing && existing.name === name) {
    if (!ours.has(existing.id) && existing.spec.extra?.[OWNER_EXTRA] !== ctx.vnfInstanceId) {
      throw new ConflictError(`a VIM named "${name}" is already registered (${existing.id}) and does not belong to vnf instance ${ctx.vnfInstanceId}`, {
        hint: `choose another additionalParams.${REGISTER_VIM_PARAM}.name, or delete that VIM (vnfm vim-delete ${name}), then retry`,
      });
    }
    ctx.report(`updating VIM ${name} with the credentials of Cluster ${cluster}`);
    return await registry.update(existing.id, { kubeconfig, origin, isDefault, extra });
  }
  ctx.report(`registering Cluster ${cluster} as VIM ${name}`);
  return registry.register({ name, description: `Cluster API workload cluster ${cluster} of vnf instance ${ctx.vnfInstanceId}`, isDefault, kubeconfig, origin, extra });
}

async function checkRemovable(services: ManagementServices, ctx: HookContext): Promise<void> {
  const registry = services.vims;
  const record = recordOf(ctx.instance);
  if (!registry || !record) return;
  for (const v of record.vims) {
    const users = (await registry.find(v.id)) ? await registry.usedBy(v.id) : [];
    if (users.length > 0) {
      throw new ConflictError(`VIM "${v.name}" (workload cluster ${v.cluster} of this instance) has VNF instances running on it: ${users.join(', ')}`, {
        hint: 'terminate those instances first (nothing was changed), then retry this terminate',
      });
    }
  }
}

async function removeVims(services: ManagementServices, ctx: HookContext): Promise<HookOutcome> {
  const registry = services.vims;
  const record = recordOf(ctx.instance);
  if (!registry || !record) return {};
  for (const v of record.vims) {
    if (!(await registry.find(v.id))) continue;
    await registry.remove(v.id);
    ctx.report(`VIM ${v.name} (workload cluster ${v.cluster}) removed`);
  }
  return { record: { [NAME]: null } };
}

export function createCapiCredentialsDriver(services: ManagementServices): BuiltinDriver {
  async function prepare(input: PrepareInput): Promise<LcmRequest> {
    const ap = additionalParams(input.request);
    if (ap[RECEIVER_PARAM] === undefined && ap[REGISTER_VIM_PARAM] === undefined) return input.request;
    const next: Record<string, unknown> = { ...ap };
    if (ap[RECEIVER_PARAM] !== undefined) {
      const receiver = parseReceiver(input.source, `additionalParams.${RECEIVER_PARAM}`, ap[RECEIVER_PARAM]);
      next[RECEIVER_PARAM] = {
        url: receiver.url,
        ...(receiver.caCert ? { caCert: receiver.caCert } : {}),
        // Recorded on the occurrence for retry: sealed, so the database alone never reveals it.
        ...(receiver.bearerToken ? { bearerToken: await services.seal(receiver.bearerToken) } : {}),
      };
    }
    if (ap[REGISTER_VIM_PARAM] !== undefined) {
      next[REGISTER_VIM_PARAM] = parseRegisterVim(input.source, ap[REGISTER_VIM_PARAM]);
      if (!services.vims) {
        throw new ValidationError(input.source, `additionalParams.${REGISTER_VIM_PARAM}`, 'cannot be used here: this vnfm has no VIM store to register into');
      }
    }
    return { ...input.request, additionalParams: next } as LcmRequest;
  }

  async function handOver(ctx: HookContext): Promise<HookOutcome> {
    const instance = ctx.result ?? ctx.instance;
    const prior = recordOf(ctx.instance);
    const settings: Settings = settingsOfRequest(ctx.request) ?? prior ?? {};
    const clusters = clustersOf(instance);
    if (clusters.length === 0) {
      ctx.report(`${ctx.hook}: no Cluster API Cluster (cluster.x-k8s.io) among the instance's resources: no credentials to hand over`);
      return {};
    }
    const token = settings.receiver?.bearerToken;
    if (token !== undefined && !isSealed(token)) throw new VnfmError(`the recorded ${RECEIVER_PARAM}.bearerToken is not sealed`, { hint: 'give the request again' });
    const bearer = token ? await openToken(services, token) : undefined;
    const vims = new Map((prior?.vims ?? []).map((v) => [v.id, v]));
    const reader = await services.secrets(ctx.vim);
    try {
      for (const cluster of clusters) {
        const ns = cluster.namespace!;
        const ref = { namespace: ns, name: `${cluster.name}-kubeconfig`, key: 'value' };
        const origin = `Secret ${ns}/${ref.name}`;
        ctx.report(`waiting for ${origin} (the kubeconfig of Cluster ${cluster.name})`);
        const kubeconfig = await reader.waitFor(ref, { signal: ctx.signal });
        const creds = parseWorkloadKubeconfig(kubeconfig, origin);
        ctx.report(`${origin} is there: workload cluster API server ${creds.server}`);
        if (settings.receiver) {
          const receiver = { url: settings.receiver.url, ...(settings.receiver.caCert ? { caCert: settings.receiver.caCert } : {}), ...(bearer ? { bearerToken: bearer } : {}) };
          await sendCredentials(
            receiver,
            { vnfInstanceId: ctx.vnfInstanceId, clusterName: cluster.name, namespace: ns, kubeconfig, ...creds },
            { ...services.receiver, signal: ctx.signal, onRetry: (m) => ctx.report(m) },
          );
          ctx.report(`credentials of Cluster ${cluster.name} sent to ${displayUrl(receiver.url)}`);
        }
        if (settings.registerVim) {
          const name = clusters.length > 1 ? `${settings.registerVim.name}-${cluster.name}` : settings.registerVim.name;
          const vim = await registerVim(services, ctx, name, settings.registerVim.isDefault === true, kubeconfig, origin, `${ns}/${cluster.name}`, vims);
          vims.set(vim.id, { id: vim.id, name: vim.name, cluster: `${ns}/${cluster.name}` });
        }
      }
    } finally {
      reader.close();
    }
    const record: CapiCredentialsRecord = { ...settings, vims: [...vims.values()] };
    return { record: { [NAME]: record } };
  }

  return {
    name: NAME,
    hooks: ['instantiate_end', 'change_current_package_end', 'heal_end', 'terminate_start', 'terminate_end'],
    prepare,
    async runHook(ctx) {
      switch (ctx.hook) {
        case 'terminate_start':
          await checkRemovable(services, ctx);
          return {};
        case 'terminate_end':
          return await removeVims(services, ctx);
        default:
          return handOver(ctx);
      }
    },
  };
}
