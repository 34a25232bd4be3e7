/**
 * What a VNF instance records of its Helm deployment, and which release
 * holds which VDU. One release is recorded under Tacker v2's names
 * (release_name, revision, helm_chart_path, helm_parameters); several
 * (Tacker v1's using_helm_install_param of more than one entry) as
 * helm_releases, in install order, each with its revision and its VDUs.
 * Reads only the record: no Helm, no cluster.
 */
import { ConflictError } from '../../errors.js';
import type { HelmChartRelease, HelmDeployment } from '../helm-request.js';
import type { HelmReleaseRecord, InstantiatedVnfInfo, VnfInstance } from '../../model/lcm.js';
import type { Vnfc } from '../../model/resources.js';

/** A release as the instance has it: its revision now and, when the deployment has several, the VDUs it holds. */
export interface RecordedRelease extends HelmChartRelease {
  revision: number;
  /** The VDUs whose workloads it holds; absent: the only release, holding them all. */
  vdus?: string[];
}

/** The deployment an instance records (what the request gave, less what only instantiate reads). */
export type RecordedDeployment = Omit<HelmDeployment, 'releases' | 'createNamespace' | 'strict'> & { releases: RecordedRelease[] };

/** The metadata fields of a deployment (the rest of instantiatedVnfInfo.metadata is the planner's). */
export function helmMetadata(h: Omit<RecordedDeployment, 'releases'>, releases: RecordedRelease[]): Partial<InstantiatedVnfInfo['metadata']> {
  const common = {
    ...(h.valueNames ? { helm_value_names: h.valueNames } : {}),
    ...(h.aspectReplicaValues ? { helm_replica_values: h.aspectReplicaValues } : {}),
    helm_replica_paths: h.replicaValues,
    ...(h.vduMapping ? { vdu_mapping: h.vduMapping } : {}),
  };
  if (releases.length === 1) {
    const r = releases[0]!;
    return { release_name: r.releaseName, revision: r.revision, helm_chart_path: r.chartPath, helm_parameters: r.parameters, ...common };
  }
  const records: HelmReleaseRecord[] = releases.map((r) => ({
    release_name: r.releaseName,
    revision: r.revision,
    helm_chart_path: r.chartPath,
    helm_parameters: r.parameters,
    vdus: r.vdus ?? [],
  }));
  return { helm_releases: records, ...common };
}

/** The instance's metadata with the releases' new revisions (release name → revision); the others as they were. */
export function withRevisions(metadata: InstantiatedVnfInfo['metadata'], revisions: Record<string, number>): InstantiatedVnfInfo['metadata'] {
  if (metadata.helm_releases) {
    return { ...metadata, helm_releases: metadata.helm_releases.map((r) => (revisions[r.release_name] !== undefined ? { ...r, revision: revisions[r.release_name]! } : r)) };
  }
  const now = metadata.release_name !== undefined ? revisions[metadata.release_name] : undefined;
  return now !== undefined ? { ...metadata, revision: now } : metadata;
}

/** Whether the instance runs Helm releases (one or several). */
export const isHelmInstance = (info: InstantiatedVnfInfo | undefined): boolean => Boolean(info?.metadata.release_name || info?.metadata.helm_releases?.length);

/** The HelmDeployment an instantiated instance records. */
export function deploymentOf(instance: VnfInstance): RecordedDeployment {
  const m = instance.instantiatedVnfInfo?.metadata;
  const several = m?.helm_releases;
  if (!m || !isHelmInstance(instance.instantiatedVnfInfo) || (!several && m.helm_chart_path === undefined)) {
    throw new ConflictError(`vnf instance ${instance.id} is not a Helm deployment`, { hint: `vnfm vnf-show ${instance.id}` });
  }
  const releases: RecordedRelease[] = several
    ? several.map((r) => ({ releaseName: r.release_name, chartPath: r.helm_chart_path, parameters: r.helm_parameters ?? {}, revision: r.revision, vdus: r.vdus }))
    : [{ releaseName: m.release_name!, chartPath: m.helm_chart_path!, parameters: m.helm_parameters ?? {}, revision: m.revision ?? 0 }];
  return {
    form: m.helm_value_names !== undefined ? 'v2' : 'v1',
    releases,
    namespace: m.namespace,
    replicaValues: m.helm_replica_paths ?? {},
    ...(m.helm_value_names ? { valueNames: m.helm_value_names } : {}),
    ...(m.helm_replica_values ? { aspectReplicaValues: m.helm_replica_values } : {}),
    ...(m.vdu_mapping ? { vduMapping: m.vdu_mapping } : {}),
  };
}

/** VDU id → the release holding its workload, from the record (the only release holds every VDU). */
export function vduReleases(info: InstantiatedVnfInfo, vduIds: readonly string[]): Record<string, string> {
  const m = info.metadata;
  if (m.helm_releases) return Object.fromEntries(m.helm_releases.flatMap((r) => r.vdus.map((v) => [v, r.release_name])));
  return m.release_name ? Object.fromEntries(vduIds.map((v) => [v, m.release_name!])) : {};
}

/** The VNFCs, each with the release holding its VDU's workload in its metadata (release_name). */
export function withReleaseNames(vnfcs: Vnfc[], releases: Record<string, string>): Vnfc[] {
  return vnfcs.map((v) => (releases[v.vduId] ? { ...v, metadata: { ...(v.metadata ?? {}), release_name: releases[v.vduId] } } : v));
}
