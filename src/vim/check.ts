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
  if (spec.type === 'kubernetes') {
    const { checkKubernetesAccess, fetchOidcIdToken } = await import('../infra/kubernetes/index.js');
    const auth = spec.auth;
    let bearerToken = secrets.bearerToken;
    if (auth.method === 'oidc') {
      bearerToken = await fetchOidcIdToken({
        tokenUrl: auth.tokenUrl,
        username: auth.username,
        password: secrets.password ?? '',
        clientId: auth.clientId,
        clientSecret: secrets.clientSecret,
        caCert: secrets.caCert,
        verifyTls: spec.verifyTls,
      });
    }
    const result = await checkKubernetesAccess({
      server: spec.authUrl,
      verifyTls: spec.verifyTls,
      caCert: secrets.caCert,
      bearerToken,
      ...(auth.method === 'basic' ? { username: auth.username, password: secrets.password } : {}),
      clientCert: secrets.clientCert,
      clientKey: secrets.clientKey,
    });
    const ns = spec.projectName ?? 'default';
    const nsNote = result.namespaces.includes(ns) ? '' : `; namespace "${ns}" does not exist yet`;
    return { summary: `Kubernetes ${result.gitVersion}, ${result.namespaces.length} namespaces${nsNote}` };
  }
  const { checkOpenStackVim } = await import('../infra/openstack/keystone.js');
  const auth = spec.auth;
  const result = await checkOpenStackVim({
    authUrl: spec.authUrl,
    auth:
      auth.method === 'application-credential'
        ? {
            method: 'application-credential',
            id: auth.applicationCredentialId,
            name: auth.applicationCredentialName,
            username: auth.username,
            userDomainName: auth.userDomainName,
            secret: secrets.applicationCredentialSecret ?? '',
          }
        : {
            method: 'password',
            username: auth.method === 'password' ? auth.username : undefined,
            userId: auth.method === 'password' ? auth.userId : undefined,
            userDomainName: auth.method === 'password' ? auth.userDomainName : undefined,
            password: secrets.password ?? '',
            projectName: spec.projectName,
            projectId: spec.projectId,
            projectDomainName: spec.projectDomainName,
          },
    caCert: secrets.caCert,
    verifyTls: spec.verifyTls,
    regionName: spec.regionName,
  });
  return { summary: `Keystone ${result.identityVersion}, project ${result.projectId}, Heat at ${result.orchestrationEndpoint}` };
};
