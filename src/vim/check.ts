/**
 * Reachability checks: run before a VIM is stored (the VIM must answer with
 * the given credentials), before each lifecycle operation, and on demand
 * (`vnfm vim-check`), which records what each VIM said as its status. The
 * drivers are loaded only when a check runs.
 */
import { SecretKeyError } from '../errors.js';
import type { VimRepository } from '../store/index.js';
import type { Vim, VimSecrets, VimSpec } from '../model/vim.js';
import type { KubeAccess, KubeTransport } from '../infra/kubernetes/index.js';

export interface VimCheckReport {
  /** One line for the user, e.g. "Kubernetes v1.32.0, 4 namespaces". */
  summary: string;
}

/**
 * How a check reaches a Kubernetes VIM: over the transport `kubeTransport`
 * gives for its access (the caller's to close: a driver can go on over it),
 * else over one of its own.
 */
export interface VimCheckOptions {
  kubeTransport?(access: KubeAccess): Promise<KubeTransport>;
}

/** Contacts the VIM; throws VimCheckError saying which credential or certificate failed. */
export type VimChecker = (spec: VimSpec, secrets: VimSecrets, opts?: VimCheckOptions) => Promise<VimCheckReport>;

export const checkVim: VimChecker = async (spec, secrets, opts = {}) => {
  const { kubeAccessOf, keystoneCredentialsOf } = await import('./access.js');
  if (spec.type === 'kubernetes') {
    const { checkKubernetesAccess } = await import('../infra/kubernetes/kube-api.js');
    const access = await kubeAccessOf(spec, secrets);
    const result = await checkKubernetesAccess(access, opts.kubeTransport ? { transport: await opts.kubeTransport(access) } : {});
    const ns = spec.projectName ?? 'default';
    const nsNote = result.namespaces.includes(ns) ? '' : `; namespace "${ns}" does not exist yet`;
    return { summary: `Kubernetes ${result.gitVersion}, ${result.namespaces.length} namespaces${nsNote}` };
  }
  const { checkOpenStackVim } = await import('../infra/openstack/keystone.js');
  const result = await checkOpenStackVim(keystoneCredentialsOf(spec, secrets));
  return { summary: `Keystone ${result.identityVersion}, project ${result.projectId}, Heat at ${result.orchestrationEndpoint}` };
};

/** What one VIM said when asked now (`vnfm vim-check`). */
export interface VimHealth {
  vim: Vim;
  /** REACHABLE when it answered with its credentials, UNREACHABLE otherwise. */
  status: 'REACHABLE' | 'UNREACHABLE';
  /** What answered (the check's summary), or why nothing did (the check's error). */
  detail: string;
  /** The status recorded before this check. */
  previous: Vim['status'];
}

export interface CheckVimsDeps {
  vims: VimRepository;
  /** Opens a VIM's sealed secrets; asked only for VIMs that have some. */
  openSecrets(vim: Vim): Promise<VimSecrets>;
  check: VimChecker;
  now(): Date;
}

/**
 * Asks each VIM now, all at once (one slow VIM does not hold up the
 * others), and records what it said as the VIM's status. An unknown name
 * fails before any VIM is contacted. Every VIM when `refs` is empty.
 */
export async function checkVims(deps: CheckVimsDeps, refs: string[]): Promise<VimHealth[]> {
  const found: Vim[] = [];
  for (const r of refs) found.push(await deps.vims.get(r));
  const targets = refs.length ? [...new Map(found.map((v) => [v.id, v])).values()] : await deps.vims.list();
  return Promise.all(
    targets.map(async (vim): Promise<VimHealth> => {
      let status: VimHealth['status'];
      let detail: string;
      try {
        const secrets = vim.secretNames.length ? await deps.openSecrets(vim) : {};
        detail = (await deps.check(vim.spec, secrets)).summary;
        status = 'REACHABLE';
      } catch (err) {
        // A key problem is the operator's to fix for every VIM, not this VIM's health.
        if (err instanceof SecretKeyError) throw err;
        detail = err instanceof Error ? err.message : String(err);
        status = 'UNREACHABLE';
      }
      const current = await deps.vims.find(vim.id);
      if (current && current.status !== status) await deps.vims.update({ ...current, status, updatedAt: deps.now().toISOString() });
      return { vim: { ...(current ?? vim), status }, status, detail, previous: vim.status };
    }),
  );
}
