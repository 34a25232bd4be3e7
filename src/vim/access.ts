/**
 * How a VIM's settings and secrets become what a driver connects with: the
 * API server access of a Kubernetes VIM (an OIDC VIM's ID token is fetched
 * now, in memory), the Keystone v3 credentials of an OpenStack VIM. The
 * reachability check and the lifecycle drivers share these, so a VIM that
 * registered is reached the same way later.
 */
import type { KubeAccess } from '../infra/kubernetes/kube-api.js';
import type { KeystoneCredentials } from '../infra/openstack/keystone.js';
import type { VimSecrets, VimSpec } from '../model/vim.js';

export async function kubeAccessOf(spec: VimSpec, secrets: VimSecrets): Promise<KubeAccess> {
  let bearerToken = secrets.bearerToken;
  if (spec.auth.method === 'oidc') {
    const { fetchOidcIdToken } = await import('../infra/kubernetes/oidc.js');
    bearerToken = await fetchOidcIdToken({
      tokenUrl: spec.auth.tokenUrl,
      username: spec.auth.username,
      password: secrets.password ?? '',
      clientId: spec.auth.clientId,
      clientSecret: secrets.clientSecret,
      caCert: secrets.caCert,
      verifyTls: spec.verifyTls,
    });
  }
  return {
    server: spec.authUrl,
    verifyTls: spec.verifyTls,
    caCert: secrets.caCert,
    bearerToken,
    ...(spec.auth.method === 'basic' ? { username: spec.auth.username, password: secrets.password } : {}),
    clientCert: secrets.clientCert,
    clientKey: secrets.clientKey,
  };
}

export function keystoneCredentialsOf(spec: VimSpec, secrets: VimSecrets): KeystoneCredentials {
  const auth = spec.auth;
  return {
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
  };
}
