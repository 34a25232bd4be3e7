import type { Context } from '../../context.js';
import type { KubeAccess } from '../../../infra/kubernetes/index.js';
import type { LcmDeps, VimConnection } from '../../../lcm/index.js';

/**
 * Wires the lifecycle use cases to the store, the keyring (opened only when a
 * registered VIM's secrets are needed) and the Kubernetes infra-driver
 * (loaded only when an operation reaches the VIM). `close` drops the
 * drivers' idle connections.
 */
export async function lcmDeps(ctx: Context): Promise<{ deps: LcmDeps; close(): void }> {
  const store = await ctx.store();
  const drivers: { close(): void }[] = [];
  const deps: LcmDeps = {
    store,
    home: ctx.home,
    now: () => ctx.now(),
    async openVimSecrets(vim) {
      const { openSecrets } = await import('../../../vim/index.js');
      return openSecrets(store.vims, await ctx.keyring(), vim);
    },
    async kubernetesDriver(vim) {
      const { createKubernetesDriver } = await import('../../../infra/kubernetes/index.js');
      const driver = createKubernetesDriver(await kubeAccessOf(vim));
      drivers.push(driver);
      return driver;
    },
  };
  return { deps, close: () => drivers.splice(0).forEach((d) => d.close()) };
}

/** The API server access of a VIM; an OIDC VIM's token is fetched now, in memory. */
async function kubeAccessOf(vim: VimConnection): Promise<KubeAccess> {
  const { spec, secrets } = vim;
  let bearerToken = secrets.bearerToken;
  if (spec.auth.method === 'oidc') {
    const { fetchOidcIdToken } = await import('../../../infra/kubernetes/index.js');
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
