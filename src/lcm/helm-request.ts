/**
 * Helm deployments as Tacker asks for them, read into one form. Tacker v2
 * (tacker/sol_refactored/infra_drivers/kubernetes/helm.py): a VIM of
 * vimType ETSINFV.HELM.V_3 (or a registered VIM with extra.use_helm) and
 * additionalParams.helm_chart_path, helm_value_names (VDU → {replica: value
 * path}), helm_parameters, namespace; the release is `vnf<instance id
 * without dashes>`. Tacker v1 (tacker/vnfm/infra_drivers/kubernetes):
 * additionalParams.use_helm, using_helm_install_param (exthelmchart,
 * helmchartfile_path, helmreleasename, helmparameter) and
 * helm_replica_values (aspect → value path). Every refusal is a
 * ValidationError (exit 2) before anything changes.
 */
import { echo, ValidationError } from '../errors.js';
import type { Flavour } from '../vnfd/index.js';
import type { VduMappingEntry, VimConnection } from '../model/lcm.js';
import { truthy } from './planners/helm.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One chart of a request, installed as a release of its own. */
export interface HelmChartRelease {
  releaseName: string;
  /** The chart in the package: a `.tgz` member or a chart directory. */
  chartPath: string;
  /** Values set on install (helm_parameters; v1 helmparameter `key=value`). */
  parameters: Record<string, unknown>;
}

/** A VNF instance's Helm deployment, whichever form the request took. */
export interface HelmDeployment {
  /** Which of Tacker's request forms it came from. */
  form: 'v2' | 'v1';
  /**
   * The releases, in the request's order: installed in it, uninstalled in
   * reverse. One, but for a v1 using_helm_install_param of several entries.
   */
  releases: HelmChartRelease[];
  namespace: string;
  /** VDU id → the dotted value path of its replica count (v2 helm_value_names; v1 from helm_replica_values through the aspects), set in the release holding the VDU. */
  replicaValues: Record<string, string>;
  /** v2: helm_value_names as given, for the instance's metadata. */
  valueNames?: Record<string, { replica?: string }>;
  /** v1: helm_replica_values as given (aspect → value path). */
  aspectReplicaValues?: Record<string, string>;
  /** v1: vdu_mapping as given: VDU → its workload (kind, name) and the release holding it. */
  vduMapping?: Record<string, VduMappingEntry>;
  /** additionalParams.vnfm_create_namespace: create the namespace when the cluster lacks it (instantiate only; not recorded). */
  createNamespace?: boolean;
  /** additionalParams.vnfm_strict: refuse a chart whose objects reach beyond the instance (cluster-scoped, another namespace) instead of warning (not recorded). */
  strict?: boolean;
}

const V2_PARAMS = ['helm_chart_path', 'helm_value_names', 'helm_parameters'];
const V1_PARAMS = ['use_helm', 'using_helm_install_param', 'helm_replica_values'];

/** The kinds a vdu_mapping entry may name: those whose pods are a VDU's VNFCs. */
export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet', 'Pod']);

/** Helm's release names: DNS-1123 labels of at most 53 characters. */
const RELEASE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Tacker v2's release name for an instance (helm.py _get_release_name). */
export const releaseNameOf = (instanceId: string): string => `vnf${instanceId.replace(/-/g, '')}`;

export interface ChartChoices {
  /** The package's charts: paths a request may name (archives and chart directories). */
  helmCharts: string[];
}

function chartPath(source: string, field: string, raw: unknown, pkg: ChartChoices): string {
  const hint = pkg.helmCharts.length
    ? `the package's charts: ${pkg.helmCharts.join(', ')}`
    : 'the package has no Helm chart: put one under Files/kubernetes/ (a .tgz from "helm package", or the chart directory)';
  if (typeof raw !== 'string' || raw === '') throw new ValidationError(source, field, 'is required: the package path of the Helm chart', { hint });
  const path = raw.replace(/\/+$/, '');
  if (!pkg.helmCharts.includes(path)) {
    throw new ValidationError(source, field, `${echo(raw)} is not a Helm chart of the package`, { hint });
  }
  return path;
}

function releaseName(source: string, field: string, name: string): string {
  if (name.length > 53 || !RELEASE.test(name)) {
    throw new ValidationError(source, field, `${echo(name)} is not a Helm release name`, {
      hint: 'lower-case letters, digits and "-", at most 53 characters, starting and ending with a letter or digit',
    });
  }
  return name;
}

function namespaceOf(source: string, params: Json, vim: Pick<VimConnection, 'spec'>): string {
  const ns = params['namespace'];
  if (ns === undefined || ns === null) return vim.spec.projectName ?? 'default';
  if (typeof ns !== 'string' || !NAMESPACE.test(ns)) {
    throw new ValidationError(source, 'additionalParams.namespace', `${echo(ns)} is not a Kubernetes namespace name`, {
      hint: 'lower-case letters, digits and "-", at most 63 characters',
    });
  }
  return ns;
}

/**
 * Reads a request's Helm parameters (either form) into a HelmDeployment,
 * checking every name against the flavour and the package. Mixing v1 and v2
 * parameters is refused.
 */
export function checkHelmRequest(
  source: string,
  params: Json | undefined,
  opts: { instanceId: string; flavour: Flavour; pkg: ChartChoices; vim: Pick<VimConnection, 'spec'> },
): HelmDeployment {
  const p = params ?? {};
  const v2 = V2_PARAMS.filter((k) => p[k] !== undefined);
  const v1 = V1_PARAMS.filter((k) => p[k] !== undefined);
  if (v2.length > 0 && v1.length > 0) {
    throw new ValidationError(source, `additionalParams.${v1[0]}`, `is Tacker v1's Helm parameter, in a request with v2's ${v2.join(', ')}`, {
      hint: 'write the request in one form: v2 (helm_chart_path, helm_value_names, helm_parameters) or v1 (use_helm, using_helm_install_param, helm_replica_values)',
    });
  }
  if (p['lcm-kubernetes-def-files'] !== undefined) {
    throw new ValidationError(source, 'additionalParams.lcm-kubernetes-def-files', 'is given for a Helm deployment, which installs the chart instead', {
      hint: 'drop lcm-kubernetes-def-files, or deploy the manifests on a Kubernetes VIM without Helm',
    });
  }
  const namespace = namespaceOf(source, p, opts.vim);
  const create = p['vnfm_create_namespace'];
  if (create !== undefined && typeof create !== 'boolean') {
    throw new ValidationError(source, 'additionalParams.vnfm_create_namespace', `${echo(create)} is not true or false`, {
      hint: 'true creates the namespace when the cluster lacks it (as helm install --create-namespace); absent or false refuses to instantiate into a missing namespace',
    });
  }
  const strict = strictParam(source, p);
  const deployment = v1.length > 0 ? checkV1(source, p, opts, namespace) : checkV2(source, p, opts, namespace);
  return { ...deployment, ...(create === true ? { createNamespace: true } : {}), ...(strict ? { strict: true } : {}) };
}

/** additionalParams.vnfm_strict (vnf-instantiate --strict): true, false or absent. */
export function strictParam(source: string, params: Json | undefined): boolean {
  const strict = params?.['vnfm_strict'];
  if (strict !== undefined && typeof strict !== 'boolean') {
    throw new ValidationError(source, 'additionalParams.vnfm_strict', `${echo(strict)} is not true or false`, {
      hint: "true refuses a chart whose objects reach beyond the instance (cluster-scoped, or in another namespace than the instance's); absent or false warns of them",
    });
  }
  return strict === true;
}

function checkV2(source: string, p: Json, opts: { instanceId: string; flavour: Flavour; pkg: ChartChoices }, namespace: string): HelmDeployment {
  const chart = chartPath(source, 'additionalParams.helm_chart_path', p['helm_chart_path'], opts.pkg);
  const rawNames = p['helm_value_names'] ?? {};
  if (!isObject(rawNames)) throw new ValidationError(source, 'additionalParams.helm_value_names', 'must be an object: VDU id → {"replica": VALUE_PATH}');
  const replicaValues: Record<string, string> = {};
  for (const [vduId, entry] of Object.entries(rawNames)) {
    const field = `additionalParams.helm_value_names.${vduId}`;
    if (!opts.flavour.vdus[vduId]) {
      throw new ValidationError(source, field, `${echo(vduId)} is not a VDU of flavour ${opts.flavour.id}`, {
        hint: `its VDUs: ${Object.keys(opts.flavour.vdus).join(', ') || '(none)'}`,
      });
    }
    if (!isObject(entry)) throw new ValidationError(source, field, 'must be an object: {"replica": VALUE_PATH}');
    const replica = entry['replica'];
    if (replica === undefined) continue;
    if (typeof replica !== 'string' || replica === '')
      throw new ValidationError(source, `${field}.replica`, 'must be the dotted path of a chart value (replicaCount, vdu1.replicaCount)');
    replicaValues[vduId] = replica;
  }
  const parameters = p['helm_parameters'] ?? {};
  if (!isObject(parameters)) throw new ValidationError(source, 'additionalParams.helm_parameters', 'must be an object: value path → value');
  if (p['vdu_mapping'] !== undefined) {
    throw new ValidationError(source, 'additionalParams.vdu_mapping', "is Tacker v1's, in a request of v2's form (helm_chart_path): Tacker v2 finds a VDU's workload by its name", {
      hint: "drop vdu_mapping, and name each VDU's workload after its properties.name (or that name, '-' and a suffix)",
    });
  }
  return {
    form: 'v2',
    releases: [{ releaseName: releaseNameOf(opts.instanceId), chartPath: chart, parameters }],
    namespace,
    replicaValues,
    valueNames: rawNames as Record<string, { replica?: string }>,
  };
}

function checkV1(source: string, p: Json, opts: { flavour: Flavour; pkg: ChartChoices }, namespace: string): HelmDeployment {
  if (p['use_helm'] !== undefined && !truthy(p['use_helm'])) {
    throw new ValidationError(source, 'additionalParams.use_helm', `is ${echo(p['use_helm'])}, with Helm parameters beside it`, {
      hint: 'set "use_helm": "true", or drop using_helm_install_param and helm_replica_values',
    });
  }
  const installs = p['using_helm_install_param'];
  const field = 'additionalParams.using_helm_install_param';
  if (!Array.isArray(installs) || installs.length === 0) {
    throw new ValidationError(source, field, 'is required with use_helm: a list of charts, each {exthelmchart, helmchartfile_path, helmreleasename, helmparameter}');
  }
  const releases: HelmChartRelease[] = [];
  installs.forEach((entry: unknown, i) => {
    const release = checkInstallParam(source, `${field}[${i}]`, entry, opts.pkg);
    const twin = releases.findIndex((r) => r.releaseName === release.releaseName);
    if (twin >= 0) {
      throw new ValidationError(
        source,
        `${field}[${i}].helmreleasename`,
        `${echo(release.releaseName)} is the release name of entry ${twin} too: each chart is a release of its own`,
        {
          hint: 'give each entry its own helmreleasename',
        },
      );
    }
    releases.push(release);
  });
  const { replicaValues, aspectReplicaValues } = checkReplicaValues(source, p, opts.flavour);
  const vduMapping = checkVduMapping(source, p['vdu_mapping'], opts.flavour, releases);
  return { form: 'v1', releases, namespace, replicaValues, aspectReplicaValues, ...(vduMapping ? { vduMapping } : {}) };
}

/** One entry of using_helm_install_param: a chart of the package and its release (tacker/vnfm/infra_drivers/kubernetes/kubernetes_driver.py _pre_helm_install). */
function checkInstallParam(source: string, at: string, entry: unknown, pkg: ChartChoices): HelmChartRelease {
  if (!isObject(entry)) throw new ValidationError(source, at, 'must be an object: {exthelmchart, helmchartfile_path, helmreleasename, helmparameter}');
  if (truthy(entry['exthelmchart'])) {
    const repo = entry['helmrepositoryname'];
    const name = entry['helmchartname'];
    const chart = typeof repo === 'string' && typeof name === 'string' ? ` ${echo(`${repo}/${name}`)}` : '';
    const url = typeof entry['exthelmrepo_url'] === 'string' ? ` from ${echo(entry['exthelmrepo_url'])}` : '';
    throw new ValidationError(
      source,
      `${at}.exthelmchart`,
      `asks for the chart${chart}${url}, an external Helm repository, which vnfm does not fetch: it runs the charts of the onboarded package only`,
      {
        hint: 'put the chart in the package (helm pull REPO/CHART, then Files/kubernetes/CHART-VERSION.tgz) and set "exthelmchart": "false" with helmchartfile_path',
      },
    );
  }
  const chart = chartPath(source, `${at}.helmchartfile_path`, entry['helmchartfile_path'], pkg);
  const name = entry['helmreleasename'];
  if (typeof name !== 'string' || name === '') throw new ValidationError(source, `${at}.helmreleasename`, 'is required: the name of the Helm release');
  const parameters: Record<string, unknown> = {};
  const raw = entry['helmparameter'] ?? [];
  if (!Array.isArray(raw)) throw new ValidationError(source, `${at}.helmparameter`, 'must be a list of "key=value" strings');
  raw.forEach((kv: unknown, i) => {
    const eq = typeof kv === 'string' ? kv.indexOf('=') : -1;
    if (typeof kv !== 'string' || eq <= 0) throw new ValidationError(source, `${at}.helmparameter[${i}]`, `${echo(kv)} is not "key=value"`);
    parameters[kv.slice(0, eq)] = kv.slice(eq + 1);
  });
  return { releaseName: releaseName(source, `${at}.helmreleasename`, name), chartPath: chart, parameters };
}

/** helm_replica_values: aspect → the chart value of its VDU's replica count. */
function checkReplicaValues(source: string, p: Json, flavour: Flavour): { replicaValues: Record<string, string>; aspectReplicaValues: Record<string, string> } {
  const rawValues = p['helm_replica_values'] ?? {};
  if (!isObject(rawValues)) throw new ValidationError(source, 'additionalParams.helm_replica_values', 'must be an object: aspect id → value path');
  const replicaValues: Record<string, string> = {};
  const aspectReplicaValues: Record<string, string> = {};
  for (const [aspectId, path] of Object.entries(rawValues)) {
    const at = `additionalParams.helm_replica_values.${aspectId}`;
    const aspect = flavour.aspects[aspectId];
    if (!aspect)
      throw new ValidationError(source, at, `${echo(aspectId)} is not a scaling aspect of flavour ${flavour.id}`, {
        hint: `its aspects: ${Object.keys(flavour.aspects).join(', ') || '(none)'}`,
      });
    if (typeof path !== 'string' || path === '') throw new ValidationError(source, at, 'must be the dotted path of a chart value (replicaCount)');
    const vdus = Object.keys(aspect.vduDeltas);
    if (vdus.length > 1) {
      throw new ValidationError(source, at, `aspect ${aspectId} scales ${vdus.join(', ')}, and one value cannot give each its own replica count`, {
        hint: 'use an aspect of one VDU, or the v2 form with helm_value_names per VDU',
      });
    }
    aspectReplicaValues[aspectId] = path;
    for (const vduId of vdus) replicaValues[vduId] = path;
  }
  return { replicaValues, aspectReplicaValues };
}

/**
 * vdu_mapping (Tacker v1): VDU → {name, kind, helmreleasename}, the workload
 * whose pods are the VDU's VNFCs and the release that holds it. With several
 * releases each entry names its release, as Tacker's scale and heal find the
 * release of a VDU through it.
 */
function checkVduMapping(source: string, raw: unknown, flavour: Flavour, releases: HelmChartRelease[]): Record<string, VduMappingEntry> | undefined {
  if (raw === undefined) return undefined;
  const field = 'additionalParams.vdu_mapping';
  if (!isObject(raw)) throw new ValidationError(source, field, 'must be an object: VDU id → {"name": WORKLOAD, "kind": KIND, "helmreleasename": RELEASE}');
  const names = releases.map((r) => r.releaseName);
  const out: Record<string, VduMappingEntry> = {};
  for (const [vduId, entry] of Object.entries(raw)) {
    const at = `${field}.${vduId}`;
    if (!flavour.vdus[vduId]) {
      throw new ValidationError(source, at, `${echo(vduId)} is not a VDU of flavour ${flavour.id}`, { hint: `its VDUs: ${Object.keys(flavour.vdus).join(', ') || '(none)'}` });
    }
    if (!isObject(entry)) throw new ValidationError(source, at, 'must be an object: {"name": WORKLOAD, "kind": KIND, "helmreleasename": RELEASE}');
    const { name, kind, helmreleasename: release } = entry;
    if (typeof name !== 'string' || name === '') throw new ValidationError(source, `${at}.name`, "is required: the name of the VDU's workload (metadata.name)");
    if (typeof kind !== 'string' || !WORKLOAD_KINDS.has(kind)) {
      throw new ValidationError(source, `${at}.kind`, `${echo(kind)} is not a kind whose pods are VNFCs`, { hint: `one of: ${[...WORKLOAD_KINDS].join(', ')}` });
    }
    if (release === undefined && releases.length > 1) {
      throw new ValidationError(
        source,
        `${at}.helmreleasename`,
        `is required: using_helm_install_param installs ${releases.length} releases, and the VDU's workload is in one of them`,
        {
          hint: `one of: ${names.join(', ')}`,
        },
      );
    }
    if (release !== undefined && (typeof release !== 'string' || !names.includes(release))) {
      throw new ValidationError(source, `${at}.helmreleasename`, `${echo(release)} is not a helmreleasename of using_helm_install_param`, { hint: `one of: ${names.join(', ')}` });
    }
    out[vduId] = { name, kind, ...(typeof release === 'string' ? { helmreleasename: release } : {}) };
  }
  return out;
}
