/**
 * The planners, one per VIM type, and how an operation finds its own: by
 * the type of the VIM the instance runs on, else of the VIM the recorded or
 * given request names, else (a first instantiate naming none) of the
 * default VIM. The Kubernetes planner takes what no other claims.
 *
 * Adding a planner (Helm, say) is one file, planners/helm.ts, exporting a
 * `Planner` (planner.ts): its `registeredType` and `vimTypes` (move the
 * vimType it takes over, `etsinfv.helm.v_3`, out of KUBERNETES_VIM_TYPES),
 * a VimReader for its VIMs (kubernetesVims when they are Kubernetes
 * clusters), `connect` for its driver (from LcmDeps, where a new driver
 * factory is one optional member), the five plans and the rollback; then
 * one line in PLANNERS below, before the Kubernetes planner when it claims
 * some of the same VIMs. The engine, the use cases, retry, rollback,
 * vnf-update and change-ext-conn find it through `plannerOf`; what
 * vnf-update does at its VIMs is its `modify` (absent: records only), and
 * change-ext-conn its `changeExtConn` (absent: refused with its
 * `extConnRefusal`).
 */
import type { LcmDeps } from '../engine.js';
import type { LcmOpOcc, LcmOperation, VimConnectionInfo, VnfInstance } from '../../model/lcm.js';
import { claimsHelm, helmPlanner } from './helm.js';
import { kubernetesPlanner } from './kubernetes.js';
import { openStackPlanner } from './openstack.js';
import type { Planner, PlanOperation } from './planner.js';

export type { Planner, PlanOperation } from './planner.js';

/** Every planner, the one that takes what no other claims last. */
const PLANNERS: readonly Planner[] = [openStackPlanner as Planner, kubernetesPlanner as Planner];
const FALLBACK: Planner = kubernetesPlanner as Planner;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The planner of registered VIMs of this type. */
function byRegisteredType(type: string | undefined): Planner {
  return PLANNERS.find((p) => p.registeredType === type) ?? FALLBACK;
}

/** The planner of a vimConnectionInfo vimType (any case). */
export function plannerOfVimType(type: string): Planner {
  const lower = type.toLowerCase();
  return PLANNERS.find((p) => p.vimTypes.has(lower)) ?? FALLBACK;
}

/** The planner an operation on the instance goes to, from its VIM (or, for an instantiate, the request's). */
export async function plannerOf(deps: LcmDeps, instance: VnfInstance, body?: unknown, recorded?: LcmOpOcc): Promise<Planner> {
  // A Helm VIM is a Kubernetes VIM: the Helm planner claims its operations by the instance and the request (helm.ts).
  if (await claimsHelm(deps, instance, body, recorded)) return helmPlanner as Planner;
  const registered = async (ref: string) => byRegisteredType((await deps.store.vims.find(ref))?.spec.type);
  if (instance.vimId) return registered(instance.vimId);
  const fromInfo = async (info: Record<string, VimConnectionInfo> | undefined): Promise<Planner | undefined> => {
    const entry = Object.values(info ?? {})[0];
    if (!entry) return undefined;
    if (entry.vimType) return plannerOfVimType(entry.vimType);
    if (entry.vimId) return registered(entry.vimId);
    return undefined;
  };
  const known =
    (await fromInfo(instance.vimConnectionInfo)) ??
    (await fromInfo((recorded?.operationParams as { vimConnectionInfo?: Record<string, VimConnectionInfo> } | undefined)?.vimConnectionInfo)) ??
    (await fromInfo(isObject(body) && isObject(body['vimConnectionInfo']) ? (body['vimConnectionInfo'] as Record<string, VimConnectionInfo>) : undefined));
  if (known) return known;
  if (instance.instantiationState === 'NOT_INSTANTIATED' && !recorded) return byRegisteredType((await deps.store.vims.findDefault())?.spec.type);
  return FALLBACK;
}

/** The planner's plan for one operation. */
export function planOf(planner: Planner, operation: LcmOperation): PlanOperation {
  switch (operation) {
    case 'INSTANTIATE':
      return planner.instantiate;
    case 'SCALE':
      return planner.scale;
    case 'HEAL':
      return planner.heal;
    case 'TERMINATE':
      return planner.terminate;
    case 'CHANGE_VNFPKG':
      return planner.changePackage;
  }
}
