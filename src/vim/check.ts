/**
 * Reachability checks run before a VIM is stored: the VIM must answer with
 * the given credentials. The drivers are loaded only when a check runs.
 */
import type { VimSecrets, VimSpec } from './model.js';

export interface VimCheckReport {
  /** One line for the user, e.g. "Kubernetes v1.32.0, 4 namespaces". */
  summary: string;
}

/** Contacts the VIM; throws VimCheckError saying which credential or certificate failed. */
export type VimChecker = (spec: VimSpec, secrets: VimSecrets) => Promise<VimCheckReport>;

export const checkVim: VimChecker = async (spec, secrets) => {
  const { kubeAccessOf, keystoneCredentialsOf } = await import('./access.js');
  if (spec.type === 'kubernetes') {
    const { checkKubernetesAccess } = await import('../infra/kubernetes/kube-api.js');
    const result = await checkKubernetesAccess(await kubeAccessOf(spec, secrets));
    const ns = spec.projectName ?? 'default';
    const nsNote = result.namespaces.includes(ns) ? '' : `; namespace "${ns}" does not exist yet`;
    return { summary: `Kubernetes ${result.gitVersion}, ${result.namespaces.length} namespaces${nsNote}` };
  }
  const { checkOpenStackVim } = await import('../infra/openstack/keystone.js');
  const result = await checkOpenStackVim(keystoneCredentialsOf(spec, secrets));
  return { summary: `Keystone ${result.identityVersion}, project ${result.projectId}, Heat at ${result.orchestrationEndpoint}` };
};
