/**
 * The VIM as vnfm keeps it. Settings that are not secret live in `VimSpec`;
 * everything that is lives in `VimSecrets`, which the store only ever holds
 * encrypted.
 */

export type VimType = 'openstack' | 'kubernetes';

/** How vnfm authenticates to the VIM. */
export type VimAuth =
  /** Keystone v3 password auth (OpenStack). */
  | { method: 'password'; username?: string; userId?: string; userDomainName?: string }
  /** Keystone v3 application credential (OpenStack). */
  | { method: 'application-credential'; applicationCredentialId?: string; applicationCredentialName?: string; username?: string; userDomainName?: string }
  /** Kubernetes: a static bearer token. */
  | { method: 'bearer-token' }
  /** Kubernetes: HTTP basic auth. */
  | { method: 'basic'; username: string }
  /** Kubernetes: OIDC resource-owner password grant against `tokenUrl`. */
  | { method: 'oidc'; tokenUrl: string; username: string; clientId: string }
  /** Kubernetes: TLS client certificate (from a kubeconfig). */
  | { method: 'client-certificate' };

export interface VimSpec {
  type: VimType;
  /** Keystone URL (OpenStack) or API server URL (Kubernetes). */
  authUrl: string;
  /** OpenStack project, or the Kubernetes default namespace. */
  projectName?: string;
  projectId?: string;
  projectDomainName?: string;
  auth: VimAuth;
  /**
   * TLS verification of the VIM's endpoint. `false` only when the operator
   * said so explicitly (`cert_verify: False`, `ssl_ca_cert: None`,
   * `insecure-skip-tls-verify`).
   */
  verifyTls: boolean;
  /** OpenStack region (`region_name`), when the catalog has several. */
  regionName?: string;
  /** Other non-secret settings carried from the config (Tacker's `extra`). */
  extra?: Record<string, unknown>;
}

/** Every secret a VIM can carry. Never stored or printed in clear. */
export interface VimSecrets {
  password?: string;
  bearerToken?: string;
  clientSecret?: string;
  applicationCredentialSecret?: string;
  /** PEM, one or more certificates. Secret because Tacker treats it so. */
  caCert?: string;
  /** PEM client certificate and its private key (kubeconfig client-certificate auth). */
  clientCert?: string;
  clientKey?: string;
}

/** What a config source (vim-config.yaml, kubeconfig, clouds.yaml) yields. */
export interface VimConfig {
  spec: VimSpec;
  secrets: VimSecrets;
  /** Non-fatal findings for the user, e.g. TLS verification disabled. */
  warnings: string[];
}

export interface Vim {
  id: string;
  name: string;
  description: string;
  isDefault: boolean;
  spec: VimSpec;
  /** Which secrets are set (names only): enough for views to show them masked. */
  secretNames: (keyof VimSecrets)[];
  /** REACHABLE or UNREACHABLE as last checked (registration, `vim-check`); PENDING when registered with --no-check. */
  status: 'REACHABLE' | 'UNREACHABLE' | 'PENDING';
  createdAt: string;
  updatedAt: string;
}
