import type { Vim, VimSecrets } from '../../vim/index.js';
import type { View } from './printer.js';
import { shortId, shortTime } from './names.js';

/** Shown in place of every secret. */
export const MASK = '***';

/** Tacker's field names, so scripts written for `openstack vim show -f json` keep working. */
const SECRET_FIELDS: Record<keyof VimSecrets, string> = {
  password: 'password',
  bearerToken: 'bearer_token',
  clientSecret: 'client_secret',
  applicationCredentialSecret: 'application_credential_secret',
  caCert: 'ssl_ca_cert',
  clientCert: 'client_certificate',
  clientKey: 'client_key',
};

function authCred(vim: Vim): Record<string, unknown> {
  const { method, ...settings } = vim.spec.auth;
  const cred: Record<string, unknown> = { auth_method: method };
  for (const [k, v] of Object.entries(settings)) cred[k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())] = v;
  for (const name of vim.secretNames) cred[SECRET_FIELDS[name]] = MASK;
  if (vim.spec.type === 'openstack') cred['cert_verify'] = vim.spec.verifyTls ? 'True' : 'False';
  else if (!vim.spec.verifyTls) cred['ssl_ca_cert'] = 'None';
  return cred;
}

/** A Kubernetes VIM registered with Tacker's Helm vim-config (extra.use_helm: true): its CNFs are Helm releases. */
const usesHelm = (v: Vim): boolean => v.spec.type === 'kubernetes' && [true, 'true', 'True'].includes(v.spec.extra?.['use_helm'] as never);

export const vimView: View<Vim> = {
  empty: 'No VIMs registered. Register one with: vnfm vim-register --config-file vim-config.yaml NAME',
  columns: [
    { header: 'ID', key: 'id', cell: (v) => shortId(v.id), full: (v) => v.id },
    { header: 'NAME', key: 'name', cell: (v) => v.name },
    { header: 'TYPE', key: 'type', cell: (v) => (usesHelm(v) ? `${v.spec.type} (helm)` : v.spec.type) },
    { header: 'DEFAULT', key: 'is_default', cell: (v) => (v.isDefault ? 'yes' : '') },
    { header: 'STATUS', key: 'status', cell: (v) => v.status },
    { header: 'AUTH URL', key: 'auth_url', cell: (v) => v.spec.authUrl, wide: true },
    { header: 'PROJECT', key: 'vim_project', cell: (v) => v.spec.projectName ?? v.spec.projectId ?? '', wide: true },
    { header: 'CREATED', key: 'created_at', cell: (v) => shortTime(v.createdAt), full: (v) => v.createdAt, wide: true },
  ],
  toData: (v) => ({
    id: v.id,
    name: v.name,
    type: v.spec.type,
    description: v.description,
    is_default: v.isDefault,
    auth_url: v.spec.authUrl,
    vim_project: {
      ...(v.spec.projectName !== undefined ? { name: v.spec.projectName } : {}),
      ...(v.spec.projectId !== undefined ? { id: v.spec.projectId } : {}),
      ...(v.spec.projectDomainName !== undefined ? { project_domain_name: v.spec.projectDomainName } : {}),
    },
    auth_cred: authCred(v),
    ...(v.spec.regionName ? { region_name: v.spec.regionName } : {}),
    extra: v.spec.extra ?? {},
    ...(usesHelm(v) ? { deployed_with: 'helm: CNFs on this VIM are installed as Helm releases (extra.use_helm)' } : {}),
    status: v.status,
    created_at: v.createdAt,
    updated_at: v.updatedAt,
  }),
};
