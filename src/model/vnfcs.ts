/**
 * VNFCs as the driver reports them (Vnfc) and as the instance records them
 * (Tacker's vnfcResourceInfo + vnfcInfo), both ways.
 */
import type { InstantiatedVnfInfo, VnfcInfo, VnfcResourceInfo } from './lcm.js';
import type { ResourceRef, Vnfc } from './resources.js';

export function vnfcRecords(vnfcs: Vnfc[], vimConnectionId?: string): { vnfcResourceInfo: VnfcResourceInfo[]; vnfcInfo: VnfcInfo[] } {
  return {
    vnfcResourceInfo: vnfcs.map((v) => ({
      id: v.resourceId,
      vduId: v.vduId,
      computeResource: { ...(vimConnectionId ? { vimConnectionId } : {}), resourceId: v.resourceId, vimLevelResourceType: v.vimLevelResourceType },
      metadata: { ...(v.metadata ?? {}), ...(v.owner ? { owner: v.owner } : {}) },
    })),
    vnfcInfo: vnfcs.map((v) => ({ id: v.id, vduId: v.vduId, vnfcResourceInfoId: v.resourceId, vnfcState: v.state })),
  };
}

export function vnfcsOf(info: InstantiatedVnfInfo | undefined): Vnfc[] {
  if (!info) return [];
  return info.vnfcInfo.map((c) => {
    const r = info.vnfcResourceInfo.find((x) => x.id === c.vnfcResourceInfoId && x.vduId === c.vduId);
    const { owner, ...metadata } = (r?.metadata ?? {}) as { owner?: ResourceRef } & Record<string, unknown>;
    return {
      id: c.id,
      vduId: c.vduId,
      resourceId: c.vnfcResourceInfoId,
      vimLevelResourceType: r?.computeResource.vimLevelResourceType ?? 'Pod',
      ...(owner ? { owner } : {}),
      state: c.vnfcState,
      ...(Object.keys(metadata).length ? { metadata } : {}),
    };
  });
}
