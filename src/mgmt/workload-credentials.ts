/**
 * What a workload cluster's kubeconfig (as Cluster API writes it) says: the
 * API endpoint, its CA and the credential of the current context's user.
 * Parsed only as far as the credentials hand-off needs; registering it as a
 * VIM goes through the VIM room's own, stricter kubeconfig reader.
 */
import yaml from 'js-yaml';
import { VnfmError } from '../errors.js';

export interface WorkloadCredentials {
  server: string;
  /** PEM. */
  caCert?: string;
  token?: string;
  /** PEM client certificate and key (kubeadm's admin user). */
  clientCertificate?: string;
  clientKey?: string;
}

type Named = { name?: unknown; [k: string]: unknown };

const pick = (list: unknown, name: unknown, body: string): Record<string, unknown> | undefined => {
  if (!Array.isArray(list)) return undefined;
  const entry = (list as Named[]).find((e) => e && e.name === name) ?? (list.length === 1 ? (list[0] as Named) : undefined);
  const value = entry?.[body];
  return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
};

const decoded = (v: unknown): string | undefined => (typeof v === 'string' && v ? Buffer.from(v, 'base64').toString('utf8') : undefined);

/**
 * Reads the current context of `text`. The error names the Secret (`origin`)
 * and what is missing, never the content.
 */
export function parseWorkloadKubeconfig(text: string, origin: string): WorkloadCredentials {
  let doc: Record<string, unknown>;
  try {
    doc = yaml.load(text, { schema: yaml.CORE_SCHEMA }) as Record<string, unknown>;
  } catch {
    throw new VnfmError(`${origin} does not hold a readable kubeconfig (not YAML)`, { hint: 'check the Secret the Cluster API controller wrote' });
  }
  if (!doc || typeof doc !== 'object') throw new VnfmError(`${origin} does not hold a kubeconfig`, { hint: 'check the Secret the Cluster API controller wrote' });
  const contextName = doc['current-context'];
  const context = pick(doc['contexts'], contextName, 'context');
  const cluster = pick(doc['clusters'], context?.['cluster'], 'cluster');
  const user = pick(doc['users'], context?.['user'], 'user');
  const server = cluster?.['server'];
  if (typeof server !== 'string' || !server) {
    throw new VnfmError(`the kubeconfig in ${origin} names no API server for its current context`, { hint: 'check the Secret the Cluster API controller wrote' });
  }
  const out: WorkloadCredentials = { server };
  const ca = decoded(cluster?.['certificate-authority-data']);
  if (ca) out.caCert = ca;
  if (typeof user?.['token'] === 'string' && user['token']) out.token = user['token'];
  const cert = decoded(user?.['client-certificate-data']);
  const key = decoded(user?.['client-key-data']);
  if (cert && key) {
    out.clientCertificate = cert;
    out.clientKey = key;
  }
  return out;
}
