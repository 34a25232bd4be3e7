/**
 * Field ownership (`metadata.managedFields`) and server-side apply.
 *
 * Each managedFields entry names a manager, an operation (Apply or Update),
 * an optional subresource and the set of fields it owns, in the FieldsV1
 * encoding (`f:spec`, `k:{"name":"web"}` for an item of a keyed list, `.`
 * for the item itself). The rules, as in the API server:
 * - an update (PUT, PATCH, a controller's write) gives its manager the
 *   fields whose values it changed and takes them from everyone else;
 * - an apply gives its manager exactly the fields of the applied
 *   configuration; a field it applied before and leaves out now is removed
 *   from the object unless another manager owns it;
 * - an apply that sets a field another manager owns to a different value is
 *   a conflict (409) unless `force=true`, which takes the field over.
 *
 * Simplified: ownership is tracked down to leaves (scalars, atomic lists,
 * empty maps); lists are atomic unless merge-keys.ts gives them a key; the
 * fields a kind defaults on create are owned by no one, as in the real
 * server, but defaulting is not re-run to tell "unset" from "default" later;
 * there is no per-version field conversion (one version per kind).
 */
import { mergeKeyFor } from './merge-keys.js';
import { canonical } from './patch.js';
import { groupVersion, rfc3339, type KubeObject, type ResourceType } from './resources.js';
import { applyConflict, invalid } from './status.js';

type Json = unknown;
type JsonObject = Record<string, Json>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

/** A field path: FieldsV1 segments (`f:spec`, `k:{"name":"a"}`, `.`). */
type Path = string[];
const SEP = '\u0000';
const pathKey = (p: Path): string => p.join(SEP);
const keyPath = (k: string): Path => k.split(SEP);

const SERVER_METADATA = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

/**
 * The leaf paths set in `obj`, with their values (JSON, keys sorted). The
 * status is included only for writes to the status subresource of a kind
 * that has one; on the main resource it is not the writer's.
 */
export function fieldValues(type: ResourceType, obj: KubeObject, subresource?: string): Map<string, string> {
  const out = new Map<string, string>();
  const hasStatus = type.subresources?.some((s) => s.name === 'status') ?? false;
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (hasStatus && (k === 'status') !== (subresource === 'status')) continue;
    if (k === 'metadata' && isObject(v)) {
      if (subresource === 'status') continue;
      for (const [mk, mv] of Object.entries(v)) {
        if (SERVER_METADATA.has(mk)) continue;
        walk(type, mv, ['f:metadata', `f:${mk}`], mk, out);
      }
      continue;
    }
    walk(type, v, [`f:${k}`], k, out);
  }
  return out;
}

function walk(type: ResourceType, value: Json, path: Path, field: string, out: Map<string, string>): void {
  if (isObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) walk(type, v, [...path, `f:${k}`], k, out);
    return;
  }
  if (Array.isArray(value) && type.strategicMerge) {
    const key = mergeKeyFor(field, value);
    if (key && value.length > 0 && value.every((i) => isObject(i) && i[key] !== undefined)) {
      for (const item of value as JsonObject[]) {
        const itemPath = [...path, `k:${JSON.stringify({ [key]: item[key] })}`];
        out.set(pathKey([...itemPath, '.']), '');
        for (const [k, v] of Object.entries(item)) walk(type, v, [...itemPath, `f:${k}`], k, out);
      }
      return;
    }
  }
  out.set(pathKey(path), JSON.stringify(canonical(value)));
}

function toFieldsV1(paths: Iterable<string>): JsonObject {
  const root: JsonObject = {};
  for (const k of paths) {
    let node = root;
    for (const seg of keyPath(k)) node = (node[seg] ??= {}) as JsonObject;
  }
  return root;
}

function fromFieldsV1(tree: JsonObject, prefix: Path = [], out = new Set<string>()): Set<string> {
  for (const [seg, child] of Object.entries(tree)) {
    const path = [...prefix, seg];
    if (isObject(child) && Object.keys(child).length > 0) fromFieldsV1(child, path, out);
    else out.add(pathKey(path));
  }
  return out;
}

interface Owned {
  /** Never changed in place: it may be a stored (frozen) object's entry. */
  entry: ManagedFieldsEntry;
  /** The fields; read from the entry, the set fieldSets keeps for its tree: changed only through `editable`. */
  fields: Set<string>;
  /** Read from the object and left as it was: written back as the same entry, shared with the previous revision. */
  kept?: boolean;
  /** `fields` is no longer the entry's tree's: written back as a new tree. */
  edited?: boolean;
}

/**
 * The field set of each FieldsV1 tree read or written, for as long as the
 * tree lives: the entries an update leaves alone are shared between an
 * object's revisions, so each controller write would otherwise read every
 * entry's tree again. The sets are never changed (Owned copies one before it
 * edits it), as the trees are not.
 */
const fieldSets = new WeakMap<JsonObject, Set<string>>();
/** The trees written here (toFieldsV1, keys in order): one whose fields stay the same is written again as it is. */
const builtTrees = new WeakSet<JsonObject>();

function fieldsOf(tree: JsonObject | undefined): Set<string> {
  if (!tree) return new Set();
  let set = fieldSets.get(tree);
  if (!set) fieldSets.set(tree, (set = fromFieldsV1(tree)));
  return set;
}

/** The owner's field set, made its own to change. */
function editable(o: Owned): Set<string> {
  if (!o.edited) {
    o.fields = new Set(o.fields);
    o.edited = true;
  }
  return o.fields;
}

function readManaged(obj: KubeObject): Owned[] {
  const entries = (obj.metadata.managedFields as ManagedFieldsEntry[] | undefined) ?? [];
  return entries.map((entry) => ({ entry, fields: fieldsOf(entry.fieldsV1), kept: true }));
}

function writeManaged(obj: KubeObject, owned: Owned[]): void {
  const entries = owned
    .filter((o) => o.fields.size > 0)
    .map((o) => {
      if (o.kept) return o.entry;
      // Its time changed but not its fields: the same tree.
      if (!o.edited && builtTrees.has(o.entry.fieldsV1)) return { ...o.entry };
      const fieldsV1 = toFieldsV1([...o.fields].sort());
      fieldSets.set(fieldsV1, o.fields);
      builtTrees.add(fieldsV1);
      return { ...o.entry, fieldsV1 };
    });
  if (entries.length) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

/** Renders a path as the API server names fields in conflicts: `.spec.containers[name="web"].image`. */
function renderPath(k: string): string {
  let out = '';
  for (const seg of keyPath(k)) {
    if (seg === '.') continue;
    if (seg.startsWith('f:')) out += `.${seg.slice(2)}`;
    else if (seg.startsWith('k:')) {
      const key = JSON.parse(seg.slice(2)) as JsonObject;
      out += `[${Object.entries(key)
        .map(([kk, v]) => `${kk}=${JSON.stringify(v)}`)
        .join(',')}]`;
    }
  }
  return out;
}

/**
 * Records an update by `manager`: it takes ownership of the fields whose
 * values differ from `old` (all fields of a new object). Mutates `next`.
 */
export function recordUpdate(type: ResourceType, old: KubeObject | undefined, next: KubeObject, manager: string, now: Date, subresource?: string): void {
  const before = old ? fieldValues(type, old, subresource) : new Map<string, string>();
  const after = fieldValues(type, next, subresource);
  const changed = [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k);
  const removed = [...before.keys()].filter((k) => !after.has(k));
  const owned = old ? readManaged(old) : [];
  for (const o of owned) {
    for (const k of [...changed, ...removed]) {
      if (!o.fields.has(k)) continue;
      editable(o).delete(k);
      o.kept = false;
    }
  }
  if (changed.length > 0) {
    const sub = subresource === 'status' || subresource === 'scale' ? subresource : undefined;
    let mine = owned.find((o) => o.entry.manager === manager && o.entry.operation === 'Update' && o.entry.subresource === sub);
    if (!mine) {
      mine = { entry: { manager, operation: 'Update', apiVersion: groupVersion(type), time: '', fieldsType: 'FieldsV1', fieldsV1: {} }, fields: new Set(), edited: true };
      if (sub) mine.entry.subresource = sub;
      owned.push(mine);
    }
    mine.entry = { ...mine.entry, time: rfc3339(now) };
    mine.kept = false;
    for (const k of changed) if (!mine.fields.has(k)) editable(mine).add(k);
  }
  writeManaged(next, owned);
}

function getSegment(node: Json, seg: string): Json {
  if (seg.startsWith('f:')) return isObject(node) ? node[seg.slice(2)] : undefined;
  if (seg.startsWith('k:')) {
    if (!Array.isArray(node)) return undefined;
    const [[k, v]] = Object.entries(JSON.parse(seg.slice(2)) as JsonObject) as [[string, Json]];
    return node.find((i) => isObject(i) && i[k] === v);
  }
  return node;
}

/** Removes the field at `k` from `obj` (a `.` path removes the list item). */
function removePath(obj: JsonObject, k: string): void {
  const path = keyPath(k).filter((s) => s !== '.');
  const last = path[path.length - 1]!;
  let parent: Json = obj;
  for (const seg of path.slice(0, -1)) parent = getSegment(parent, seg);
  if (last.startsWith('f:') && isObject(parent)) delete parent[last.slice(2)];
  if (last.startsWith('k:') && Array.isArray(parent)) {
    const item = getSegment(parent, last);
    const i = parent.indexOf(item);
    if (i >= 0) parent.splice(i, 1);
  }
}

/** Merges the applied configuration into the live object: maps by key, keyed lists by item, the rest replaced. */
function mergeApplied(type: ResourceType, live: Json, applied: Json, field: string): Json {
  if (isObject(applied)) {
    const result: JsonObject = isObject(live) ? { ...live } : {};
    for (const [k, v] of Object.entries(applied)) result[k] = mergeApplied(type, result[k], v, k);
    return result;
  }
  if (Array.isArray(applied) && type.strategicMerge) {
    const key = mergeKeyFor(field, applied);
    if (key && Array.isArray(live) && applied.every((i) => isObject(i) && i[key] !== undefined)) {
      const result = [...live];
      for (const item of applied as JsonObject[]) {
        const i = result.findIndex((x) => isObject(x) && x[key] === item[key]);
        if (i >= 0) result[i] = mergeApplied(type, result[i], item, '');
        else result.push(structuredClone(item));
      }
      return result;
    }
  }
  return structuredClone(applied);
}

export interface ApplyResult {
  /** The object to store (create or update), with its managedFields set. */
  object: KubeObject;
  created: boolean;
}

/**
 * Server-side apply of `applied` by `manager` onto `live` (undefined: the
 * object does not exist and is created). Throws a 409 listing the
 * conflicting fields unless `force`.
 */
export function apply(type: ResourceType, live: KubeObject | undefined, applied: KubeObject, manager: string, force: boolean, now: Date): ApplyResult {
  const appliedValues = fieldValues(type, applied);
  const entry = (): ManagedFieldsEntry => ({ manager, operation: 'Apply', apiVersion: groupVersion(type), time: rfc3339(now), fieldsType: 'FieldsV1', fieldsV1: {} });
  const body = structuredClone(applied);
  delete body.kind;
  delete body.apiVersion;
  const hasStatus = type.subresources?.some((s) => s.name === 'status') ?? false;
  if (hasStatus) delete body.status;

  if (!live) {
    const obj = body;
    writeManaged(obj, [{ entry: entry(), fields: new Set(appliedValues.keys()), edited: true }]);
    return { object: obj, created: true };
  }

  const liveValues = fieldValues(type, live);
  const owned = readManaged(live);
  const conflicts: { manager: string; apiVersion: string; field: string }[] = [];
  const taken: { owner: Owned; field: string }[] = [];
  for (const o of owned) {
    // Only the manager's own apply set is exempt: its updates (PUT, PATCH, /scale) conflict like anyone else's.
    if (o.entry.manager === manager && o.entry.operation === 'Apply') continue;
    for (const [k, v] of appliedValues) {
      if (!o.fields.has(k) || k.endsWith(`${SEP}.`)) continue;
      if (liveValues.get(k) === v) continue;
      conflicts.push({ manager: o.entry.manager, apiVersion: o.entry.apiVersion, field: renderPath(k) });
      taken.push({ owner: o, field: k });
    }
  }
  if (conflicts.length > 0 && !force) throw applyConflict(conflicts);
  for (const t of taken) {
    editable(t.owner).delete(t.field);
    t.owner.kept = false;
  }

  const mine = owned.find((o) => o.entry.manager === manager && o.entry.operation === 'Apply');
  const next = structuredClone(live) as KubeObject;
  if (mine) {
    const ownedByOthers = new Set(owned.filter((o) => o !== mine).flatMap((o) => [...o.fields]));
    const dropped = [...mine.fields].filter((k) => !appliedValues.has(k) && !ownedByOthers.has(k));
    // Items before their fields would be wrong: remove deepest paths first.
    dropped.sort((a, b) => keyPath(b).length - keyPath(a).length);
    for (const k of dropped) {
      const isItem = k.endsWith(`${SEP}.`);
      const prefix = isItem ? k.slice(0, -2) : k;
      if (isItem && [...ownedByOthers].some((o) => o.startsWith(prefix + SEP))) continue;
      removePath(next as unknown as JsonObject, k);
    }
  }
  const { metadata: appliedMeta, ...appliedRest } = body;
  const merged = mergeApplied(type, next, appliedRest, '') as KubeObject;
  merged.metadata = mergeApplied(type, next.metadata, { ...appliedMeta, resourceVersion: next.metadata.resourceVersion }, 'metadata') as KubeObject['metadata'];
  if (appliedMeta.resourceVersion !== undefined) merged.metadata.resourceVersion = appliedMeta.resourceVersion;
  const others = owned.filter((o) => o !== mine);
  writeManaged(merged, [...others, { entry: entry(), fields: new Set(appliedValues.keys()), edited: true }]);
  return { object: merged, created: false };
}

/** The field manager an update is recorded under when the request names none, as the API server derives it from the user agent. */
export function defaultManager(userAgent: string | undefined): string {
  const first = (userAgent ?? '').split('/')[0]?.trim() ?? '';
  return first.slice(0, 128) || 'unknown';
}

/** Checks the options of an apply request. */
export function checkApplyOptions(manager: string | null): string {
  if (!manager) {
    throw invalid('PatchOptions', 'meta.k8s.io', '', [{ type: 'FieldValueRequired', field: 'fieldManager', detail: 'is required for apply patch' }]);
  }
  return manager;
}
