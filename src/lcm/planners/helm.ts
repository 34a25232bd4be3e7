/**
 * The Helm planner: a Kubernetes VIM used through Helm (Tacker's Helm
 * driver). Which operations are its own is decided here, cheaply; its plans
 * (helm-plans.ts) and the Helm seam are loaded when an operation needs them.
 */
import type { HelmChartTool, HelmClient } from '../../infra/helm/contract.js';
import type { KubernetesInfraDriver } from '../../infra/kubernetes/driver-contract.js';
import { ValidationError } from '../../errors.js';
import { isMapping } from '../../yaml.js';
import type { LcmDeps } from '../engine.js';
import type { LcmOpOcc, VimConnection, VimConnectionInfo, VnfInstance } from '../../model/lcm.js';
import { kubernetesVims } from '../vim-connection.js';
import { KUBERNETES_EXT_CONN } from './kubernetes.js';
import type { Planner } from './planner.js';
import { describeRelease, liveReleaseScale } from './kubernetes-live.js';
import { isHelmInstance } from './helm-deployment.js';

/** What the Helm planner drives: Helm for the release, the Kubernetes driver to watch its objects. */
export interface HelmDrivers {
  helm: HelmClient;
  kube: KubernetesInfraDriver;
}

/** Where the lcm dependencies give Helm: a client bound to a VIM, and the offline chart tool. */
export interface HelmServices {
  client(vim: VimConnection): HelmClient | Promise<HelmClient>;
  chartTool(): HelmChartTool | Promise<HelmChartTool>;
}

/** The VIM types that mean Helm (lower case), beside a Kubernetes VIM with extra.use_helm. */
export const HELM_VIM_TYPES: ReadonlySet<string> = new Set(['etsinfv.helm.v_3']);

/** Tacker's booleans in additionalParams and extra: true, "true", "True". */
export const truthy = (v: unknown): boolean => v === true || (typeof v === 'string' && v.toLowerCase() === 'true');

/** Whether a (registered or inline) Kubernetes VIM is one used through Helm: Tacker's extra.use_helm. */
export function vimUsesHelm(vim: Pick<VimConnection, 'spec'>): boolean {
  return truthy(vim.spec.extra?.['use_helm']);
}

/**
 * Whether a request asks for a Helm deployment: its vimConnectionInfo has
 * vimType ETSINFV.HELM.V_3, its VIM has extra.use_helm, or its
 * additionalParams carry v2's helm_chart_path or v1's use_helm.
 */
export function asksForHelm(params: Record<string, unknown> | undefined, vimType: string | undefined, vim?: Pick<VimConnection, 'spec'>): boolean {
  if (vimType && HELM_VIM_TYPES.has(vimType.toLowerCase())) return true;
  if (vim && vimUsesHelm(vim)) return true;
  if (!params) return false;
  return params['helm_chart_path'] !== undefined || truthy(params['use_helm']) || params['using_helm_install_param'] !== undefined;
}

/**
 * Whether an operation is the Helm planner's: the instance runs Helm
 * releases, or the instantiate (new, retried or rolled back) asks for one.
 */
export async function claimsHelm(deps: LcmDeps, instance: VnfInstance, body?: unknown, recorded?: LcmOpOcc): Promise<boolean> {
  if (isHelmInstance(instance.instantiatedVnfInfo)) return true;
  if (instance.instantiationState === 'INSTANTIATED') return false;
  if (recorded && recorded.operation !== 'INSTANTIATE') return false;
  const request = recorded ? recorded.operationParams : body;
  if (!isMapping(request)) return false;
  const info = isMapping(request['vimConnectionInfo']) ? (request['vimConnectionInfo'] as Record<string, VimConnectionInfo>) : {};
  const entry = Object.values(info)[0];
  const registered = entry?.vimId ? await deps.store.vims.find(entry.vimId) : entry ? undefined : await deps.store.vims.findDefault();
  const vim = registered ? { spec: registered.spec } : entry?.extra ? { spec: { extra: entry.extra } as VimConnection['spec'] } : undefined;
  return asksForHelm(isMapping(request['additionalParams']) ? request['additionalParams'] : undefined, entry?.vimType, vim);
}

const plans = () => import('./helm-plans.js').then((m) => m.helmPlans);

export const helmPlanner: Planner<HelmDrivers> = {
  name: 'helm',
  registeredType: 'kubernetes',
  vimTypes: HELM_VIM_TYPES,
  vims: kubernetesVims,
  connect: async (deps, vim) => (await plans()).connect(deps, vim),
  instantiate: async (...args) => (await plans()).instantiate(...args),
  scale: async (...args) => (await plans()).scale(...args),
  heal: async (...args) => (await plans()).heal(...args),
  terminate: async (...args) => (await plans()).terminate(...args),
  changePackage: async (...args) => (await plans()).changePackage(...args),
  rollback: async (...args) => (await plans()).rollback(...args),
  // A release's objects are recorded on the instance: no call to helm is needed to read them.
  describe: describeRelease,
  liveScale: liveReleaseScale,
  modify: {
    async packageChange(_deps, input) {
      throw new ValidationError(
        input.source,
        'vnfdId',
        'moves a Helm VNF to another package, which vnf-update does not do (its releases come from the charts of the package they were installed from)',
        {
          hint: `upgrade the releases to the new package's charts with: vnfm vnf-change-package ${input.instance.vnfInstanceName ?? input.instance.id} FILE`,
        },
      );
    },
  },
  extConnRefusal: KUBERNETES_EXT_CONN,
};
