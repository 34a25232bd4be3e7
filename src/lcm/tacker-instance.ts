/**
 * Tacker's own description of a VNF instance, as vnf-adopt reads it: the
 * JSON of `openstack vnflcm show ID -f json` (its display names: "ID",
 * "VNFD ID", "Instantiated Vnf Info", "VIM Connection Info"…) or of the API
 * (`GET /vnflcm/v2/vnf_instances/ID`, v1 alike: id, vnfdId,
 * instantiatedVnfInfo, vimConnectionInfo…), one instance or a list of them.
 *
 * Where each API version keeps what adoption needs:
 * - v2 (tacker/sol_refactored): vimConnectionInfo is a map of entries with
 *   vimId and vimType; instantiatedVnfInfo.metadata holds `namespace` and
 *   `lcm-kubernetes-def-files` (infra_drivers/kubernetes/kubernetes.py) and,
 *   for OpenStack, the stack is named `vnf-<instance id>` (heat_utils.get_stack_name)
 *   unless metadata.stack_id says otherwise.
 * - v1 (tacker/vnflcm, vnfm/infra_drivers): vimConnectionInfo is a list;
 *   the instantiate request's additionalParams are kept in
 *   instantiatedVnfInfo.additionalParams; the namespace in the instance's
 *   metadata (vnf_metadata) or those additionalParams; an OpenStack VNF's
 *   stack id is instantiatedVnfInfo.instanceId.
 */
import { ValidationError } from '../errors.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** tackerclient's display names (`openstack vnflcm show -f json`) and the API's names they stand for. */
const DISPLAY_NAMES: Record<string, string> = {
  ID: 'id',
  'VNF Instance Name': 'vnfInstanceName',
  'VNF Instance Description': 'vnfInstanceDescription',
  'VNFD ID': 'vnfdId',
  'VNF Provider': 'vnfProvider',
  'VNF Product Name': 'vnfProductName',
  'VNF Software Version': 'vnfSoftwareVersion',
  'VNFD Version': 'vnfdVersion',
  'Instantiation State': 'instantiationState',
  'Instantiated Vnf Info': 'instantiatedVnfInfo',
  'VIM Connection Info': 'vimConnectionInfo',
  Links: '_links',
};

/** What vnf-adopt takes from one Tacker instance. */
export interface TackerInstance {
  /** Where in the file it was: `FILE` or `FILE[2]`, for messages. */
  source: string;
  api: 'v1' | 'v2';
  id: string;
  vnfInstanceName?: string;
  vnfInstanceDescription: string;
  vnfdId: string;
  instantiationState: string;
  /** Tacker's VIM id (or name) of the instance, and its vimType as Tacker recorded it. */
  vimId?: string;
  vimType?: string;
  flavourId?: string;
  instantiationLevelId?: string;
  vnfState?: 'STARTED' | 'STOPPED';
  scaleStatus: { aspectId: string; scaleLevel: number }[];
  /** Kubernetes: the namespace and definition files as Tacker recorded them. */
  namespace?: string;
  defFiles?: string[];
  /** OpenStack: the stack's id (v1, or v2's metadata.stack_id). */
  stackId?: string;
  /** The instantiate request's additionalParams (v1 keeps them; v2 only some in metadata). */
  additionalParams: Json;
  /** The instantiatedVnfInfo.metadata Tacker v2 keeps (for OpenStack: the nfv parameter's source, stack id). */
  infoMetadata: Json;
}

/** The instances a file holds: one (an object), or several (an array, or an object with a list under vnfInstances). */
export function readTackerInstances(file: string, doc: unknown): TackerInstance[] {
  const list = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc['vnfInstances']) ? (doc['vnfInstances'] as unknown[]) : undefined;
  if (list?.length === 0) throw new ValidationError(file, undefined, 'lists no VNF instance', { hint: 'export them with: openstack vnflcm show ID -f json > FILE' });
  return list ? list.map((item, i) => readTackerInstance(`${file}[${i}]`, item)) : [readTackerInstance(file, doc)];
}

function readTackerInstance(source: string, raw: unknown): TackerInstance {
  if (!isObject(raw)) throw new ValidationError(source, undefined, 'is not a VNF instance (a JSON object)', { hint: 'export it with: openstack vnflcm show ID -f json > FILE' });
  const doc: Json = {};
  for (const [k, v] of Object.entries(raw)) doc[DISPLAY_NAMES[k] ?? k] = v;
  const str = (field: string, required = true): string | undefined => {
    const v = doc[field];
    if (v === undefined || v === null || v === '') {
      if (required) throw new ValidationError(source, field, 'is missing: this is not a Tacker VNF instance', { hint: 'export it with: openstack vnflcm show ID -f json > FILE' });
      return undefined;
    }
    if (typeof v !== 'string') throw new ValidationError(source, field, 'must be a string');
    return v;
  };
  const id = str('id')!;
  const vnfdId = str('vnfdId')!;
  const instantiationState = str('instantiationState')!;
  const info = doc['instantiatedVnfInfo'];
  if (info !== undefined && info !== null && !isObject(info)) throw new ValidationError(source, 'instantiatedVnfInfo', 'must be an object');
  const vci = doc['vimConnectionInfo'];
  const v1 = Array.isArray(vci) || doc['vnfPkgId'] !== undefined || (isObject(info) && isObject(info['additionalParams']));
  const entry = Array.isArray(vci) ? vci[0] : isObject(vci) ? Object.values(vci)[0] : undefined;
  const vimId = isObject(entry) && typeof entry['vimId'] === 'string' && entry['vimId'] !== '' ? entry['vimId'] : undefined;
  const vimType = isObject(entry) && typeof entry['vimType'] === 'string' ? entry['vimType'] : undefined;
  const i = isObject(info) ? info : {};
  const infoMetadata = isObject(i['metadata']) ? i['metadata'] : {};
  const additionalParams = isObject(i['additionalParams']) ? i['additionalParams'] : {};
  const instanceMetadata = isObject(doc['metadata']) ? doc['metadata'] : {};
  const scaleStatus = readScaleStatus(source, i['scaleStatus']);
  const defFiles = stringList(source, 'instantiatedVnfInfo', infoMetadata['lcm-kubernetes-def-files'] ?? additionalParams['lcm-kubernetes-def-files']);
  const namespace = firstString(infoMetadata['namespace'], instanceMetadata['namespace'], additionalParams['namespace']);
  const stackId = firstString(infoMetadata['stack_id'], v1 ? i['instanceId'] : undefined);
  const name = str('vnfInstanceName', false);
  const description = doc['vnfInstanceDescription'];
  const vnfState = i['vnfState'] === 'STOPPED' ? 'STOPPED' : i['vnfState'] === 'STARTED' ? 'STARTED' : undefined;
  const flavourId = typeof i['flavourId'] === 'string' ? i['flavourId'] : undefined;
  const levelId = firstString(i['instantiationLevelId'], additionalParams['instantiationLevelId']);
  return {
    source,
    api: v1 ? 'v1' : 'v2',
    id,
    ...(name ? { vnfInstanceName: name } : {}),
    vnfInstanceDescription: typeof description === 'string' ? description : '',
    vnfdId,
    instantiationState,
    ...(vimId ? { vimId } : {}),
    ...(vimType ? { vimType } : {}),
    ...(flavourId ? { flavourId } : {}),
    ...(levelId ? { instantiationLevelId: levelId } : {}),
    ...(vnfState ? { vnfState } : {}),
    scaleStatus,
    ...(namespace ? { namespace } : {}),
    ...(defFiles ? { defFiles } : {}),
    ...(stackId ? { stackId } : {}),
    additionalParams,
    infoMetadata,
  };
}

function firstString(...values: unknown[]): string | undefined {
  return values.find((v): v is string => typeof v === 'string' && v !== '');
}

function stringList(source: string, field: string, v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new ValidationError(source, `${field}: lcm-kubernetes-def-files`, 'must be a list of file paths');
  return v as string[];
}

function readScaleStatus(source: string, v: unknown): { aspectId: string; scaleLevel: number }[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new ValidationError(source, 'instantiatedVnfInfo.scaleStatus', 'must be a list');
  return v.map((s, i) => {
    if (!isObject(s) || typeof s['aspectId'] !== 'string' || typeof s['scaleLevel'] !== 'number' || !Number.isInteger(s['scaleLevel']) || s['scaleLevel'] < 0) {
      throw new ValidationError(source, `instantiatedVnfInfo.scaleStatus[${i}]`, 'must be {"aspectId": ..., "scaleLevel": N} with N a whole number, 0 or more');
    }
    return { aspectId: s['aspectId'], scaleLevel: s['scaleLevel'] };
  });
}
