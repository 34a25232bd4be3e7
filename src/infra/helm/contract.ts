/**
 * What the Helm seam offers: the Helm 3 CLI driven as Tacker v2 drives it
 * (install, upgrade, status, get manifest/values, history, rollback,
 * uninstall, list), never with `--wait`: readiness is watched by the
 * Kubernetes driver from the release's manifest. Offline chart checks
 * (lint, template) need no cluster.
 */
import type { KubeAccess } from '../kubernetes/kube-api.js';

/**
 * Values for a release, as `--set` gives them: keys are dotted paths
 * (`vdu1.replicaCount`, `a\.b` for a key with a dot, `list[0]` for an
 * element), values are JSON values (a number stays a number). They reach
 * Helm in a values file in the client's private directory, never on the
 * command line, so a value may be a secret.
 */
export type HelmSetValues = Record<string, unknown>;

/** One release as `helm status` / `helm list` report it. */
export interface HelmRelease {
  name: string;
  namespace: string;
  revision: number;
  /** Helm's release status: deployed, failed, pending-install, pending-upgrade, pending-rollback, superseded, uninstalling. */
  status: string;
  /** `name-version` of the chart, e.g. `helm-cnf-1.0.0`. */
  chart: string;
  appVersion?: string;
  /** RFC 3339 time of the last deployment, when Helm reports it. */
  updated?: string;
  /** Helm's description of the last action ("Install complete", "Rollback to 1"). */
  description?: string;
  /** The rendered objects (what `helm get manifest` prints): set by install and upgrade, whose JSON carries them. */
  manifest?: string;
}

/** One entry of `helm history`. */
export interface HelmRevision {
  revision: number;
  status: string;
  chart: string;
  appVersion?: string;
  description: string;
  updated: string;
}

/** Options every cluster call takes. */
export interface HelmCallOptions {
  /** Aborting kills the helm process (SIGTERM, then SIGKILL) and the call rejects with the abort reason. */
  signal?: AbortSignal;
}

export interface HelmInstallOptions extends HelmCallOptions {
  release: string;
  /** A chart directory or `.tgz` on the local disk. */
  chart: string;
  namespace: string;
  set?: HelmSetValues;
  /** Extra values files (`-f`), applied before `set`. */
  valuesFiles?: string[];
  /** Helm's `--create-namespace` (default false: vnfm checks the namespace and creates it itself, see HelmClient.createNamespace). */
  createNamespace?: boolean;
  /** `--dry-run=server`: renders and validates against the cluster, installs nothing. */
  dryRun?: boolean;
  /** `--timeout` for hooks (Helm's default 5m0s); e.g. `300s`. */
  timeout?: string;
}

export interface HelmUpgradeOptions extends HelmInstallOptions {
  /** `--reuse-values`: keep the release's values and merge `set` into them (scale). */
  reuseValues?: boolean;
  /** `--reset-values`: only the chart's defaults plus `set` (change package). */
  resetValues?: boolean;
  /**
   * `--history-max`: revisions kept (Helm's default 10, 0 for all). A
   * revision pruned from the history can no longer be rolled back to.
   */
  historyMax?: number;
}

export interface HelmRollbackOptions extends HelmCallOptions {
  release: string;
  namespace: string;
  /** The revision to return to; 0 or absent means the previous one. */
  revision?: number;
}

export interface HelmUninstallOptions extends HelmCallOptions {
  release: string;
  namespace: string;
  keepHistory?: boolean;
}

export interface HelmReleaseRef extends HelmCallOptions {
  release: string;
  namespace: string;
  /** For get manifest/values: that revision instead of the current one. */
  revision?: number;
}

/**
 * The Helm CLI bound to one cluster. Each call runs one `helm` process with a
 * kubeconfig written 0600 in a private 0700 directory that is removed when
 * the call ends (success, failure, abort) and when the process exits.
 */
export interface HelmClient {
  /** The helm executable used. */
  readonly executable: string;
  /** `helm install` (no --wait); the release as installed. */
  install(opts: HelmInstallOptions): Promise<HelmRelease>;
  /** `helm upgrade` (no --wait, no --install); the release as upgraded. */
  upgrade(opts: HelmUpgradeOptions): Promise<HelmRelease>;
  /** The release's last revision (or `revision`) as `helm history` records it; undefined when there is no such release. */
  status(opts: HelmReleaseRef): Promise<HelmRelease | undefined>;
  /** `helm get manifest`: the rendered objects, a multi-document YAML. */
  getManifest(opts: HelmReleaseRef): Promise<string>;
  /** `helm get values` (user-supplied values, or with `all` the computed ones). */
  getValues(opts: HelmReleaseRef & { all?: boolean }): Promise<Record<string, unknown>>;
  /** `helm history`, oldest first; [] when there is no such release. */
  history(opts: HelmReleaseRef): Promise<HelmRevision[]>;
  /** `helm rollback` (no --wait). */
  rollback(opts: HelmRollbackOptions): Promise<void>;
  /** `helm uninstall` (no --wait); a release already gone is not an error. */
  uninstall(opts: HelmUninstallOptions): Promise<void>;
  /** `helm list` in one namespace (all states: deployed, failed, pending...). */
  list(opts: HelmCallOptions & { namespace: string }): Promise<HelmRelease[]>;
  /** Whether the namespace exists, read through the Kubernetes API (Helm cannot tell). */
  namespaceState(opts: HelmCallOptions & { namespace: string }): Promise<HelmNamespaceState>;
  /**
   * Creates the namespace through the Kubernetes API, labelled
   * `app.kubernetes.io/managed-by: vnfm` (what `--create-namespace` does,
   * with vnfm's label); false when it exists already.
   */
  createNamespace(opts: HelmCallOptions & { namespace: string }): Promise<boolean>;
}

/** A namespace as the cluster has it; `unknown` when the VIM's user may not read it. */
export type HelmNamespaceState = 'active' | 'terminating' | 'missing' | 'unknown';

export interface HelmClientOptions {
  /** The cluster, as the Kubernetes driver reaches it (kubeAccessOf in vim/access.ts). */
  access: KubeAccess;
  /** The helm executable; default: findHelm(env). */
  executable?: string;
  /** Where VNFM_HELM and PATH are read (default process.env). Nothing else from it reaches Helm. */
  env?: NodeJS.ProcessEnv;
}

/** Offline chart checks: no cluster, no credentials. */
export interface HelmChartTool {
  readonly executable: string;
  /** `helm version --template {{.Version}}`, e.g. `v3.18.0`. */
  version(opts?: HelmCallOptions): Promise<string>;
  /** `helm lint`: resolves with the findings text when the chart passes, throws HelmError (reason render) when it fails. */
  lint(chart: string, opts?: HelmCallOptions & { set?: HelmSetValues }): Promise<string>;
  /**
   * `helm template`: the rendered multi-document YAML; throws HelmError (reason render) when a template fails.
   * `includeCrds`: with the chart's crds/ (`--include-crds`), which helm install creates too.
   */
  template(chart: string, opts?: HelmCallOptions & { release?: string; namespace?: string; set?: HelmSetValues; includeCrds?: boolean }): Promise<string>;
}

/** Why a helm command failed, as far as its message tells. */
export type HelmFailureReason =
  /** No such release (or revision). */
  | 'not-found'
  /** The release name is taken in that namespace (by another chart or owner). */
  | 'name-in-use'
  /** A template did not render, or the chart is malformed. */
  | 'render'
  /** An object of the release already exists and is not Helm's (no release annotations). */
  | 'ownership'
  /** Another install/upgrade/rollback of the release is pending (one killed mid-way leaves it so): roll back first. */
  | 'in-progress'
  /** The API server refused the credentials. */
  | 'unauthorized'
  | 'other';
