/**
 * vimConnectionInfo given to an instance that runs: Tacker v2 merges it
 * into the instance for MODIFY_INFO and CHANGE_EXT_CONN alike
 * (conductor/vnflcm_driver_v2.py _merge_vim_connection_info), and the
 * operation then runs on the VIM the merge gives. vnf-update (modify.ts) and
 * vnf-change-ext-conn (ext-conn.ts) both merge through here. An instance
 * runs on one VIM: the entry that replaces it is the one of its key (an
 * inline VIM's), else the first for a VIM of its kind (a registered VIM has
 * no key); other entries are not kept (Tacker too uses one of several).
 */
import { ValidationError } from '../errors.js';
import type { LcmDeps } from './engine.js';
import type { VimConnection, VimConnectionInfo, VnfInstance } from '../model/lcm.js';
import { plannerOf, plannerOfVimType } from './planners/index.js';
import { normalizeVimConnectionInfo, v1VimNotices } from './requests.js';
import {
  checkedInline,
  instanceVim as sharedInstanceVim,
  instanceVimFields,
  RECORDED_OPENSTACK_VIM_TYPE,
  recordedVim,
  resolveOpenStackVim,
  resolveVimConnection,
  vimLookup,
} from './vim-connection.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The VIM the instance records, secrets opened (registered by id, or inline with its sealed credentials), read by its planner. */
export async function instanceVim(deps: LcmDeps, instance: VnfInstance, source: string): Promise<VimConnection> {
  return sharedInstanceVim(deps, instance, source, (await plannerOf(deps, instance)).vims, false);
}

/**
 * A request's vimConnectionInfo as the v2 map (Tacker v1's array as Tacker
 * v1 reads it: see normalizeVimConnectionInfo). A key is never removed: an
 * entry given as null is refused, as Tacker's merge would drop it.
 */
export function requestVimConnectionInfo(source: string, raw: unknown): Record<string, VimConnectionInfo> {
  const form = 'the v2 map {"KEY": {"vimId": ..., "vimType": ...}} or the v1 array [{"id": ..., "vimId": ..., "vimType": ...}]';
  if (!Array.isArray(raw) && !isObject(raw)) throw new ValidationError(source, 'vimConnectionInfo', `must be ${form}`);
  if (isObject(raw)) {
    for (const [key, entry] of Object.entries(raw)) {
      if (entry === null) {
        throw new ValidationError(source, `vimConnectionInfo.${key}`, 'cannot be removed (as in Tacker, a key of vimConnectionInfo is never deleted)', {
          hint: 'give the entry that replaces it',
        });
      }
    }
  }
  return normalizeVimConnectionInfo(source, raw)!;
}

export interface MergedVim {
  /** The VIM the operation runs on: the one merged in, else the instance's. */
  vim: VimConnection;
  /** What the instance records of its VIM once the operation completes; absent when it stays on its VIM. */
  vimFields?: Pick<VnfInstance, 'vimId' | 'vimConnectionInfo'>;
  /** The request's vimConnectionInfo as the occurrence records it: the entry kept as the instance keeps it, the others without credentials. */
  recorded: Record<string, VimConnectionInfo>;
}

export interface MergeOptions {
  /** The request as given, for the notice on a v1 entry whose endpoint and credentials are not used. */
  body?: unknown;
  onNotice?: (message: string) => void;
  /** Called with the field of the entry that replaces the instance's VIM, before that VIM is looked up or tried: may refuse it. */
  replacing?: (field: string) => void;
}

/**
 * The instance's VIM with `given` merged in: the replacing entry is a
 * registered VIM by id or name (the default VIM without one), or one inline
 * whose credentials are tried first (exit 6 when refused) and kept sealed.
 */
export async function mergeVimConnectionInfo(
  deps: LcmDeps,
  instance: VnfInstance,
  source: string,
  given: Record<string, VimConnectionInfo>,
  opts: MergeOptions = {},
): Promise<MergedVim> {
  const planner = await plannerOf(deps, instance);
  const openstack = planner.name === 'openstack';
  // A registered VIM keeps no key (an entry recording its region aside); an inline one keeps the key of its entry.
  const currentKey = !instance.vimId && instance.vimConnectionInfo ? Object.keys(instance.vimConnectionInfo)[0] : undefined;
  const sameKind = (e: VimConnectionInfo) => !e.vimType || plannerOfVimType(e.vimType) === planner;
  const key = currentKey !== undefined ? (given[currentKey] ? currentKey : undefined) : Object.keys(given).find((k) => sameKind(given[k]!));
  const others = Object.keys(given).filter((k) => k !== key);
  for (const k of others) opts.onNotice?.(`vimConnectionInfo.${k} is not kept: an instance runs on one VIM, and this entry does not replace it`);
  // What is recorded of the entries not kept: never their credentials.
  const dropped = Object.fromEntries(others.map((k) => [k, { vimId: given[k]!.vimId, vimType: given[k]!.vimType }]));
  if (key === undefined) return { vim: await instanceVim(deps, instance, source), recorded: dropped };
  opts.replacing?.(`vimConnectionInfo.${key}`);
  for (const message of await v1VimNotices(vimLookup(deps), opts.body)) opts.onNotice?.(message);
  const entry = { [key]: given[key]! };
  const vim = openstack
    ? await resolveOpenStackVim(deps, source, entry, instance)
    : await checkedInline(deps, await resolveVimConnection(source, entry, vimLookup(deps), () => instanceVim(deps, instance, source)));
  const record = await recordedVim(deps, vim, entry, given[key]!.vimType ?? (openstack ? RECORDED_OPENSTACK_VIM_TYPE : 'kubernetes'));
  return { vim, vimFields: instanceVimFields(vim, record), recorded: { ...record, ...dropped } };
}

/** The instance with the VIM fields of a merge in place of its own. */
export function withVimFields(instance: VnfInstance, vimFields: MergedVim['vimFields']): VnfInstance {
  if (!vimFields) return instance;
  const { vimId: _v, vimConnectionInfo: _c, ...rest } = instance;
  return { ...rest, ...vimFields } as VnfInstance;
}
