/**
 * The Helm 3 CLI as a client: each call builds its argv (never a secret in
 * it), runs helm with a private directory holding the kubeconfig, reads the
 * JSON Helm prints and turns a failure into a HelmError with Helm's message.
 *
 * Credentials: the bearer token goes in the environment (HELM_KUBETOKEN), so
 * it never touches the disk; the CA, client certificate/key and a basic-auth
 * password can only reach Helm through its kubeconfig, written 0600 in the
 * call's 0700 directory and removed when the call ends.
 */
import { dump } from 'js-yaml';
import { echo } from '../../errors.js';
import type { KubeAccess } from '../kubernetes/kube-api.js';
import type {
  HelmCallOptions,
  HelmChartTool,
  HelmClient,
  HelmClientOptions,
  HelmFailureReason,
  HelmInstallOptions,
  HelmRelease,
  HelmReleaseRef,
  HelmRevision,
  HelmSetValues,
} from './contract.js';
import { HelmError, HelmNotFoundError, failureReason } from './errors.js';
import { findHelm } from './executable.js';
import { type HelmOutput, runHelm } from './run.js';
import { namespaceAccess } from './namespace.js';
import { nestSetValues } from './values.js';
import { type HelmWorkdir, createWorkdir } from './workdir.js';

/** Variables of the caller's environment that reach Helm (proxies may be needed to reach a cluster). */
const PASSED_ENV = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];

interface Invocation {
  /** The subcommand's words, e.g. ['get', 'manifest']: for messages. */
  command: string[];
  /** Everything after the subcommand, given the call's private directory. */
  args(dir: HelmWorkdir): string[];
  /** Which release (and namespace) the message names. */
  subject?: string;
  signal?: AbortSignal;
}

interface Runner {
  executable: string;
  run(inv: Invocation, opts: { kube: boolean }): Promise<HelmOutput>;
}

/** Test seam: observes each helm process started (pid, argv). */
export type HelmSpawnObserver = (pid: number, argv: readonly string[]) => void;

function createRunner(executable: string, env: NodeJS.ProcessEnv, access: KubeAccess | undefined, observe?: HelmSpawnObserver): Runner {
  return {
    executable,
    async run(inv, { kube }) {
      const dir = createWorkdir();
      try {
        const childEnv: Record<string, string> = {};
        for (const k of PASSED_ENV) if (env[k] !== undefined) childEnv[k] = env[k]!;
        Object.assign(childEnv, {
          HOME: dir.path,
          HELM_CACHE_HOME: `${dir.path}/cache`,
          HELM_CONFIG_HOME: `${dir.path}/config`,
          HELM_DATA_HOME: `${dir.path}/data`,
          HELM_DRIVER: 'secret',
        });
        const args = [...inv.command, ...inv.args(dir)];
        if (kube) {
          if (!access) throw new Error('a cluster call needs the VIM access');
          args.push('--kubeconfig', dir.write('kubeconfig', kubeconfigText(access)));
          if (access.bearerToken) childEnv.HELM_KUBETOKEN = access.bearerToken;
        }
        const out = await runHelm({
          executable,
          args,
          env: childEnv,
          signal: inv.signal,
          onSpawn: observe && ((pid) => observe(pid, [executable, ...args])),
        }).catch((err: NodeJS.ErrnoException) => {
          // The file went away or lost its execute bit since it was found.
          if (err.code === 'ENOENT' || err.code === 'EACCES') {
            throw new HelmNotFoundError(`cannot run helm at ${executable} (${err.code})`, { hint: 'set VNFM_HELM to the path of a Helm 3 binary, or put helm on PATH' });
          }
          throw err;
        });
        if (out.status !== 0) throw helmFailure(inv, out);
        return out;
      } finally {
        dir.remove();
      }
    },
  };
}

/** A kubeconfig for one cluster; the token is not in it (HELM_KUBETOKEN carries it). Exported for tests. */
export function kubeconfigText(access: KubeAccess): string {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const cluster: Record<string, unknown> = { server: access.server };
  if (!access.verifyTls) cluster['insecure-skip-tls-verify'] = true;
  else if (access.caCert) cluster['certificate-authority-data'] = b64(access.caCert);
  const user: Record<string, unknown> = {};
  if (access.username) Object.assign(user, { username: access.username, password: access.password ?? '' });
  if (access.clientCert) Object.assign(user, { 'client-certificate-data': b64(access.clientCert), 'client-key-data': b64(access.clientKey ?? '') });
  return dump({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'vim', cluster }],
    users: [{ name: 'vim', user }],
    contexts: [{ name: 'vim', context: { cluster: 'vim', user: 'vim' } }],
    'current-context': 'vim',
    preferences: {},
  });
}

const HINTS: Partial<Record<HelmFailureReason, string>> = {
  'name-in-use': 'choose another release name, or remove the existing release (helm uninstall) if it is not in use',
  ownership: 'an object of the chart already exists and belongs to something else: remove it or rename it in the chart',
  'in-progress':
    'an earlier helm run on this release did not finish (helm history shows it pending): vnfm op-retry or op-rollback of its FAILED_TEMP occurrence rolls it back first; otherwise roll it back to its last deployed revision yourself (helm rollback RELEASE REVISION -n NAMESPACE)',
  render: 'fix the chart (helm lint CHART shows the problems) or the values given to it',
  unauthorized: 'check the VIM credentials (vnfm vim-show) and that they can reach the cluster',
};

const KILLED_HINT =
  'the release may be left pending (helm history shows it): vnfm op-retry rolls it back to its last deployed revision and runs the step again, op-rollback returns it to the revision the instance records';

function helmFailure(inv: Invocation, out: HelmOutput): HelmError {
  // lint writes its findings on stdout and only the summary on stderr.
  const text = [inv.command[0] === 'lint' ? out.stdout.trim() : '', out.stderr.trim()].filter(Boolean).join('\n');
  const reason = failureReason(text);
  const what = `helm ${inv.command.join(' ')}${inv.subject ? ` of ${inv.subject}` : ''}`;
  const ended = out.signal ? `helm was killed by ${out.signal}` : `exit status ${out.status}`;
  return new HelmError(inv.command.join(' '), reason, text, `${what} failed: ${text || ended}`, {
    hint: HINTS[reason] ?? (out.signal && ['install', 'upgrade', 'rollback'].includes(inv.command[0]!) ? KILLED_HINT : undefined),
  });
}

function valuesArgs(dir: HelmWorkdir, set: HelmSetValues | undefined, files: readonly string[] = []): string[] {
  const args = files.flatMap((f) => ['--values', f]);
  if (set && Object.keys(set).length > 0) args.push('--values', dir.write('values.yaml', dump(nestSetValues(set))));
  return args;
}

const subject = (release: string, namespace: string) => `release ${echo(release)} in namespace ${echo(namespace)}`;

/** Helm's release JSON (install/upgrade/status -o json). */
interface ReleaseJson {
  name: string;
  namespace: string;
  version: number;
  manifest?: string;
  info?: { status?: string; last_deployed?: string; description?: string };
  chart?: { metadata?: { name?: string; version?: string; appVersion?: string } };
}

function releaseOf(text: string): HelmRelease {
  const r = JSON.parse(text) as ReleaseJson;
  const meta = r.chart?.metadata ?? {};
  return {
    name: r.name,
    namespace: r.namespace,
    revision: r.version,
    status: r.info?.status ?? 'unknown',
    chart: `${meta.name ?? ''}-${meta.version ?? ''}`,
    ...(meta.appVersion ? { appVersion: meta.appVersion } : {}),
    ...(r.info?.last_deployed ? { updated: r.info.last_deployed } : {}),
    ...(r.info?.description ? { description: r.info.description } : {}),
    ...(typeof r.manifest === 'string' ? { manifest: r.manifest } : {}),
  };
}

function installArgs(dir: HelmWorkdir, o: HelmInstallOptions): string[] {
  return [
    o.release,
    o.chart,
    '--namespace',
    o.namespace,
    '--output',
    'json',
    ...(o.createNamespace ? ['--create-namespace'] : []),
    ...(o.dryRun ? ['--dry-run=server'] : []),
    ...(o.timeout ? ['--timeout', o.timeout] : []),
    ...valuesArgs(dir, o.set, o.valuesFiles),
  ];
}

async function orUndefinedIfMissing<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof HelmError && err.reason === 'not-found') return undefined;
    throw err;
  }
}

/** `helm history -o json`, oldest revision first. */
function revisionsOf(stdout: string): HelmRevision[] {
  const rows = JSON.parse(stdout || '[]') as Array<{ revision: number; updated: string; status: string; chart: string; app_version?: string; description?: string }>;
  return rows
    .map((r): HelmRevision => ({
      revision: r.revision,
      status: r.status,
      chart: r.chart,
      ...(r.app_version ? { appVersion: r.app_version } : {}),
      description: r.description ?? '',
      updated: r.updated,
    }))
    .sort((a, b) => a.revision - b.revision);
}

/** `helm list -o json`. */
function releasesOf(stdout: string) {
  const rows = JSON.parse(stdout || '[]') as Array<{ name: string; namespace: string; revision: string; updated?: string; status: string; chart: string; app_version?: string }>;
  return rows.map((r) => ({
    name: r.name,
    namespace: r.namespace,
    revision: Number(r.revision),
    status: r.status,
    chart: r.chart,
    ...(r.app_version ? { appVersion: r.app_version } : {}),
    ...(r.updated ? { updated: r.updated } : {}),
  }));
}

/** The Helm CLI bound to one cluster (see HelmClient). */
export function createHelmClient(options: HelmClientOptions & { observeSpawn?: HelmSpawnObserver }): HelmClient {
  const env = options.env ?? process.env;
  const executable = options.executable ?? findHelm(env);
  const runner = createRunner(executable, env, options.access, options.observeSpawn);
  const kube = { kube: true };
  const ns = (o: { namespace: string }) => ['--namespace', o.namespace];
  const rev = (o: HelmReleaseRef) => (o.revision ? ['--revision', String(o.revision)] : []);
  const namespaces = namespaceAccess(options.access);

  const history = async (o: HelmReleaseRef): Promise<HelmRevision[]> => {
    const out = await orUndefinedIfMissing(
      runner.run(
        { command: ['history'], subject: subject(o.release, o.namespace), signal: o.signal, args: () => [o.release, ...ns(o), '--max', '1000', '--output', 'json'] },
        kube,
      ),
    );
    return out ? revisionsOf(out.stdout) : [];
  };

  return {
    executable,
    history,
    async install(o) {
      const out = await runner.run({ command: ['install'], subject: subject(o.release, o.namespace), signal: o.signal, args: (d) => installArgs(d, o) }, kube);
      return releaseOf(out.stdout);
    },
    async upgrade(o) {
      const out = await runner.run(
        {
          command: ['upgrade'],
          subject: subject(o.release, o.namespace),
          signal: o.signal,
          args: (d) => [
            ...installArgs(d, o),
            ...(o.reuseValues ? ['--reuse-values'] : []),
            ...(o.resetValues ? ['--reset-values'] : []),
            ...(o.historyMax !== undefined ? ['--history-max', String(o.historyMax)] : []),
          ],
        },
        kube,
      );
      return releaseOf(out.stdout);
    },
    async status(o) {
      // From the history: `helm status -o json` leaves out the chart.
      const revisions = await history(o);
      const r = o.revision ? revisions.find((x) => x.revision === o.revision) : revisions.at(-1);
      if (!r) return undefined;
      return {
        name: o.release,
        namespace: o.namespace,
        revision: r.revision,
        status: r.status,
        chart: r.chart,
        ...(r.appVersion ? { appVersion: r.appVersion } : {}),
        ...(r.updated ? { updated: r.updated } : {}),
        ...(r.description ? { description: r.description } : {}),
      };
    },
    async getManifest(o) {
      const out = await runner.run(
        { command: ['get', 'manifest'], subject: subject(o.release, o.namespace), signal: o.signal, args: () => [o.release, ...ns(o), ...rev(o)] },
        kube,
      );
      return out.stdout;
    },
    async getValues(o) {
      const out = await runner.run(
        {
          command: ['get', 'values'],
          subject: subject(o.release, o.namespace),
          signal: o.signal,
          args: () => [o.release, ...ns(o), ...rev(o), ...(o.all ? ['--all'] : []), '--output', 'json'],
        },
        kube,
      );
      const values = JSON.parse(out.stdout || 'null') as Record<string, unknown> | null;
      return values ?? {};
    },
    async rollback(o) {
      await runner.run({ command: ['rollback'], subject: subject(o.release, o.namespace), signal: o.signal, args: () => [o.release, String(o.revision ?? 0), ...ns(o)] }, kube);
    },
    async uninstall(o) {
      await orUndefinedIfMissing(
        runner.run(
          { command: ['uninstall'], subject: subject(o.release, o.namespace), signal: o.signal, args: () => [o.release, ...ns(o), ...(o.keepHistory ? ['--keep-history'] : [])] },
          kube,
        ),
      );
    },
    namespaceState: (o) => namespaces.state(o.namespace, o.signal),
    createNamespace: (o) => namespaces.create(o.namespace, o.signal),
    async list(o) {
      const out = await runner.run(
        { command: ['list'], subject: `namespace ${echo(o.namespace)}`, signal: o.signal, args: () => [...ns(o), '--all', '--max', '100000', '--output', 'json'] },
        kube,
      );
      return releasesOf(out.stdout);
    },
  };
}

/** Offline chart checks (see HelmChartTool). */
export function createHelmChartTool(options: { executable?: string; env?: NodeJS.ProcessEnv } = {}): HelmChartTool {
  const env = options.env ?? process.env;
  const executable = options.executable ?? findHelm(env);
  const runner = createRunner(executable, env, undefined);
  const offline = { kube: false };
  return {
    executable,
    async version(o: HelmCallOptions = {}) {
      const out = await runner.run({ command: ['version'], signal: o.signal, args: () => ['--template', '{{.Version}}'] }, offline);
      return out.stdout.trim();
    },
    async lint(chart, o = {}) {
      const out = await runner.run({ command: ['lint'], subject: `chart ${chart}`, signal: o.signal, args: (d) => [chart, ...valuesArgs(d, o.set)] }, offline);
      return out.stdout;
    },
    async template(chart, o = {}) {
      const out = await runner.run(
        {
          command: ['template'],
          subject: `chart ${chart}`,
          signal: o.signal,
          args: (d) => [o.release ?? 'release-name', chart, '--namespace', o.namespace ?? 'default', ...(o.includeCrds ? ['--include-crds'] : []), ...valuesArgs(d, o.set)],
        },
        offline,
      );
      return out.stdout;
    },
  };
}
