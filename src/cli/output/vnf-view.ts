import type { ResourceRef, VnfInstance } from '../../lcm/index.js';
import type { OutputOptions, View } from './printer.js';
import { type NameBook, nameBeside, shortId, shortTime } from './names.js';

/** The VNFC column: counted by the store for a list's summary item (vnfcCount), else from the instance info. */
const vnfcs = (i: VnfInstance): string => {
  const counted = (i as { vnfcCount?: number | null }).vnfcCount;
  if (counted !== undefined) return counted === null ? '' : String(counted);
  return i.instantiatedVnfInfo ? String(i.instantiatedVnfInfo.vnfcInfo.length) : '';
};
const vimOf = (i: VnfInstance) => i.vimId ?? Object.values(i.vimConnectionInfo ?? {})[0]?.vimId ?? '';
const scale = (i: VnfInstance) =>
  (i.instantiatedVnfInfo?.scaleStatus ?? [])
    .map((s) => `${s.aspectId}=${s.scaleLevel}/${i.instantiatedVnfInfo?.maxScaleLevels.find((m) => m.aspectId === s.aspectId)?.scaleLevel ?? '?'}`)
    .join(', ');

/** SOL003 VnfInstance, as json/yaml print it; the table has the VIM's and the package's names beside their ids. */
export function vnfListView(book: NameBook = {}): View<VnfInstance> {
  const vimName = (i: VnfInstance) => (vimOf(i) ? (book.vims?.get(vimOf(i)) ?? shortId(vimOf(i))) : '');
  const pkgName = (i: VnfInstance) => book.packages?.get(i.vnfPkgId) ?? i.vnfProductName;
  return {
    empty: 'No VNF instances. Create one with: vnfm vnf-create --vnfd-id VNFD_ID --name NAME',
    name: (i) => i.id,
    summaryColumns: true,
    // VnfInstanceRepository.tableText writes these cells in SQL, in this order (test/unit/list-table-text.test.ts holds them equal).
    columns: [
      { header: 'ID', key: 'id', cell: (i) => shortId(i.id), full: (i) => i.id },
      { header: 'NAME', key: 'vnfInstanceName', cell: (i) => i.vnfInstanceName ?? '' },
      { header: 'STATE', key: 'instantiationState', cell: (i) => i.instantiationState },
      { header: 'VIM', key: 'vim', cell: vimName },
      { header: 'PACKAGE', key: 'package', cell: pkgName },
      { header: 'VNFCS', key: 'vnfcs', cell: vnfcs },
      { header: 'VIM ID', key: 'vimId', cell: vimOf, wide: true },
      { header: 'PACKAGE ID', key: 'vnfPkgId', cell: (i) => i.vnfPkgId, wide: true },
      { header: 'PRODUCT', key: 'vnfProductName', cell: (i) => i.vnfProductName, wide: true },
      { header: 'VERSION', key: 'vnfSoftwareVersion', cell: (i) => i.vnfSoftwareVersion, wide: true },
      { header: 'VNFD ID', key: 'vnfdId', cell: (i) => i.vnfdId, wide: true },
      { header: 'CREATED', key: 'createdAt', cell: (i) => shortTime(i.createdAt), full: (i) => i.createdAt, wide: true },
    ],
    toData: (i) => ({
      id: i.id,
      ...(i.vnfInstanceName ? { vnfInstanceName: i.vnfInstanceName } : {}),
      vnfInstanceDescription: i.vnfInstanceDescription,
      vnfdId: i.vnfdId,
      vnfPkgId: i.vnfPkgId,
      vnfProvider: i.vnfProvider,
      vnfProductName: i.vnfProductName,
      vnfSoftwareVersion: i.vnfSoftwareVersion,
      vnfdVersion: i.vnfdVersion,
      instantiationState: i.instantiationState,
      ...(i.vimId ? { vimId: i.vimId } : {}),
      ...(i.vimConnectionInfo ? { vimConnectionInfo: i.vimConnectionInfo } : {}),
      ...(i.instantiatedVnfInfo ? { instantiatedVnfInfo: i.instantiatedVnfInfo } : {}),
      ...(i.vnfConfigurableProperties ? { vnfConfigurableProperties: i.vnfConfigurableProperties } : {}),
      ...(i.metadata ? { metadata: i.metadata } : {}),
      ...(i.extensions ? { extensions: i.extensions } : {}),
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
    }),
  };
}

export const vnfInstanceView: View<VnfInstance> = vnfListView();

/** FIELD/VALUE rows for a person; the VNFCs and resources follow as their own tables. */
export function vnfInstanceSummaryView(book: NameBook = {}): View<VnfInstance> {
  return {
    ...vnfInstanceView,
    toData: (i) => ({
      id: i.id,
      vnfInstanceName: i.vnfInstanceName ?? '',
      vnfInstanceDescription: i.vnfInstanceDescription,
      instantiationState: i.instantiationState,
      vnfdId: i.vnfdId,
      vnfPkgId: nameBeside(i.vnfPkgId, book.packages),
      vnfProduct: `${i.vnfProvider} ${i.vnfProductName} ${i.vnfSoftwareVersion}`.trim(),
      vim: vimOf(i) ? nameBeside(vimOf(i), book.vims) : '',
      flavourId: i.instantiatedVnfInfo?.flavourId ?? '',
      instantiationLevelId: i.instantiatedVnfInfo?.instantiationLevelId ?? '',
      scaleStatus: scale(i),
      namespace: i.instantiatedVnfInfo?.metadata.namespace ?? '',
      createdAt: i.createdAt,
      updatedAt: i.updatedAt,
    }),
  };
}

/** The summary rows for a person's table, the SOL003 form for everything else. */
export const vnfView = (flags: OutputOptions, book: NameBook = {}): View<VnfInstance> =>
  !flags.quiet && (flags.output === 'table' || flags.output === 'wide') ? vnfInstanceSummaryView(book) : vnfInstanceView;

export interface VnfcRow {
  id: string;
  vduId: string;
  pod: string;
  kind: string;
  state: string;
  owner: string;
}

export const vnfcView: View<VnfcRow> = {
  empty: 'No VNFCs.',
  columns: [
    { header: 'VNFC', key: 'id', cell: (v) => v.id },
    { header: 'VDU', key: 'vduId', cell: (v) => v.vduId },
    { header: 'POD', key: 'pod', cell: (v) => v.pod },
    { header: 'STATE', key: 'state', cell: (v) => v.state },
    { header: 'WORKLOAD', key: 'owner', cell: (v) => v.owner },
  ],
  toData: (v) => ({ ...v }),
};

export function vnfcRows(i: VnfInstance): VnfcRow[] {
  const info = i.instantiatedVnfInfo;
  if (!info) return [];
  return info.vnfcInfo.map((c) => {
    const r = info.vnfcResourceInfo.find((x) => x.id === c.vnfcResourceInfoId);
    const owner = r?.metadata['owner'] as ResourceRef | undefined;
    return {
      id: c.id,
      vduId: c.vduId,
      pod: c.vnfcResourceInfoId,
      kind: r?.computeResource.vimLevelResourceType ?? '',
      state: c.vnfcState,
      owner: owner ? `${owner.kind}/${owner.name}` : '',
    };
  });
}

export const resourceView: View<ResourceRef> = {
  empty: 'No resources.',
  columns: [
    { header: 'KIND', key: 'kind', cell: (r) => r.kind },
    { header: 'NAME', key: 'name', cell: (r) => r.name },
    { header: 'NAMESPACE', key: 'namespace', cell: (r) => r.namespace ?? '' },
    { header: 'API VERSION', key: 'apiVersion', cell: (r) => r.apiVersion },
  ],
  toData: (r) => ({ ...r }),
};
