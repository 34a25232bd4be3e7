/**
 * Secrets inside requests: a management driver's `prepare` seals the fields
 * that hold passwords or tokens before the request is recorded on the
 * occurrence, so the database alone never reveals them; a hook opens them
 * again when it needs the plain values, and redacts those values from
 * whatever it logs.
 */

/** A secret kept in a request or on the instance, encrypted with vnfm's keyring (Fernet). */
export interface SealedValue {
  sealed: string;
  keyId: string;
}

export type Seal = (plain: string) => Promise<SealedValue>;
export type Open = (value: SealedValue) => Promise<string>;

export function isSealed(value: unknown): value is SealedValue {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v['sealed'] === 'string' && typeof v['keyId'] === 'string' && Object.keys(v).length === 2;
}

/**
 * A copy of `value` with the string at each path sealed. A path is
 * dot-separated (`additionalParams.k8s_cluster_installation_param.master_node.password`);
 * `*` matches every key of an object or every element of an array
 * (`additionalParams.private_registry_connection_info.*.password`). Paths
 * that lead nowhere, values that are not strings and values already sealed
 * are left as they are, so sealing twice changes nothing.
 */
export async function sealFields<T>(value: T, paths: readonly string[], seal: Seal): Promise<T> {
  let out: unknown = value;
  for (const path of paths) out = await sealAt(out, path.split('.'), seal);
  return out as T;
}

async function sealAt(value: unknown, path: readonly string[], seal: Seal): Promise<unknown> {
  if (path.length === 0) return typeof value === 'string' ? seal(value) : value;
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(value)) {
    if (head !== '*' && !/^\d+$/.test(head)) return value;
    const copy = [...value];
    for (let i = 0; i < copy.length; i++) if (head === '*' || Number(head) === i) copy[i] = await sealAt(copy[i], rest, seal);
    return copy;
  }
  if (!value || typeof value !== 'object' || isSealed(value)) return value;
  const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of head === '*' ? Object.keys(copy) : Object.hasOwn(copy, head) ? [head] : []) copy[key] = await sealAt(copy[key], rest, seal);
  return copy;
}

/** A copy of any JSON value with every sealed object replaced by its plain string. */
export async function openSealed<T>(value: T, open: Open): Promise<T> {
  const walk = async (v: unknown): Promise<unknown> => {
    if (isSealed(v)) return open(v);
    if (Array.isArray(v)) return Promise.all(v.map(walk));
    if (v && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = await walk(x);
      return out;
    }
    return v;
  };
  return (await walk(value)) as T;
}

/**
 * The plain values behind the sealed objects of `sealed`, read from `opened`
 * (what `openSealed` made of it) at the same places: the strings to redact
 * from logs and messages. Empty strings are left out.
 */
export function sealedStrings(sealed: unknown, opened: unknown): string[] {
  const found = new Set<string>();
  const walk = (s: unknown, o: unknown) => {
    if (isSealed(s)) {
      if (typeof o === 'string' && o) found.add(o);
      return;
    }
    if (Array.isArray(s)) {
      if (Array.isArray(o)) s.forEach((x, i) => walk(x, o[i]));
      return;
    }
    if (s && typeof s === 'object' && o && typeof o === 'object') {
      for (const [k, x] of Object.entries(s as Record<string, unknown>)) walk(x, (o as Record<string, unknown>)[k]);
    }
  };
  walk(sealed, opened);
  return [...found];
}

/** Replaces every occurrence of each secret in `text` with `***` (longest first, so a secret containing another is hidden whole). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of [...secrets].filter(Boolean).sort((a, b) => b.length - a.length)) out = out.split(s).join('***');
  return out;
}
