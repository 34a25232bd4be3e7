/**
 * The three patch formats of PATCH requests other than server-side apply:
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902), and strategic merge
 * patch for built-in kinds (keyed lists merged by their merge keys, the
 * `$patch: delete|replace`, `$retainKeys`, `$deleteFromPrimitiveList` and
 * `$setElementOrder` directives).
 */
import { goJsonTypeName } from './go-json.js';
import { isPrimitiveSet, mergeKeyFor } from './merge-keys.js';
import { badRequest, unprocessable, type ApiError } from './status.js';

type Json = unknown;
type JsonObject = Record<string, Json>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function patchError(code: 400 | 422, _reason: 'BadRequest' | 'Invalid', message: string): ApiError {
  return code === 400 ? badRequest(message) : unprocessable(message);
}

/** RFC 7386: objects merge, `null` deletes, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return structuredClone(patch);
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete result[k];
    else result[k] = mergePatch(result[k], v);
  }
  return result;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw patchError(422, 'Invalid', `the JSON pointer ${JSON.stringify(pointer)} must start with /`);
  return pointer.slice(1).split('/').map(unescapePointer);
}

function parentOf(doc: Json, path: string[], op: string): { parent: JsonObject | Json[]; key: string } {
  let node: Json = doc;
  for (const segment of path.slice(0, -1)) {
    if (Array.isArray(node)) node = node[Number(segment)];
    else if (isObject(node)) node = node[segment];
    else node = undefined;
    if (node === undefined)
      throw patchError(422, 'Invalid', `the server rejected our request due to an error in our request: ${op} operation does not apply: doc is missing path: /${path.join('/')}`);
  }
  if (!Array.isArray(node) && !isObject(node)) throw patchError(422, 'Invalid', `${op} operation does not apply: doc is missing path: /${path.join('/')}`);
  return { parent: node, key: path[path.length - 1]! };
}

function getAt(doc: Json, path: string[]): Json {
  let node: Json = doc;
  for (const segment of path) {
    if (Array.isArray(node)) node = segment === '-' ? undefined : node[Number(segment)];
    else if (isObject(node)) node = Object.hasOwn(node, segment) ? node[segment] : undefined;
    else return undefined;
  }
  return node;
}

function arrayIndex(arr: Json[], key: string, forInsert: boolean): number {
  if (forInsert && key === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw patchError(422, 'Invalid', `invalid array index: ${key}`);
  const i = Number(key);
  if (i > arr.length || (!forInsert && i >= arr.length)) throw patchError(422, 'Invalid', `index out of range: ${key}`);
  return i;
}

function removeAt(doc: Json, path: string[], op: string): Json {
  const { parent, key } = parentOf(doc, path, op);
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, key, false);
    return parent.splice(i, 1)[0];
  }
  if (!Object.hasOwn(parent, key)) throw patchError(422, 'Invalid', `${op} operation does not apply: doc is missing key: /${path.join('/')}`);
  const value = parent[key];
  delete parent[key];
  return value;
}

function addAt(doc: Json, path: string[], value: Json, op: string): Json {
  if (path.length === 0) return value;
  const { parent, key } = parentOf(doc, path, op);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true), 0, value);
  else parent[key] = value;
  return doc;
}

/** RFC 6902: add, remove, replace, move, copy, test, applied in order; any failure leaves nothing changed. */
export function jsonPatch(target: Json, patch: Json): Json {
  if (!Array.isArray(patch)) throw patchError(400, 'BadRequest', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = structuredClone(target);
  for (const op of patch) {
    if (!isObject(op) || typeof op.op !== 'string' || typeof op.path !== 'string') {
      throw patchError(400, 'BadRequest', 'the JSON patch has an operation without op or path');
    }
    const path = parsePointer(op.path);
    switch (op.op) {
      case 'add':
        doc = addAt(doc, path, structuredClone(op.value), 'add');
        break;
      case 'remove':
        removeAt(doc, path, 'remove');
        break;
      case 'replace':
        if (path.length === 0) {
          doc = structuredClone(op.value);
          break;
        }
        removeAt(doc, path, 'replace');
        doc = addAt(doc, path, structuredClone(op.value), 'replace');
        break;
      case 'move': {
        if (typeof op.from !== 'string') throw patchError(400, 'BadRequest', 'move operation needs from');
        const value = removeAt(doc, parsePointer(op.from), 'move');
        doc = addAt(doc, path, value, 'move');
        break;
      }
      case 'copy': {
        if (typeof op.from !== 'string') throw patchError(400, 'BadRequest', 'copy operation needs from');
        const value = getAt(doc, parsePointer(op.from));
        if (value === undefined) throw patchError(422, 'Invalid', `copy operation does not apply: doc is missing from path: ${op.from}`);
        doc = addAt(doc, path, structuredClone(value), 'copy');
        break;
      }
      case 'test':
        if (JSON.stringify(canonical(getAt(doc, path))) !== JSON.stringify(canonical(op.value))) {
          // The API server answers a failed `test` without saying which one failed.
          throw patchError(422, 'Invalid', 'the server rejected our request due to an error in our request');
        }
        break;
      default:
        throw patchError(400, 'BadRequest', `Unexpected kind: ${op.op}`);
    }
  }
  return doc;
}

/** Sorts object keys, so that equality of JSON values ignores key order. */
export function canonical(v: Json): Json {
  if (Array.isArray(v)) return v.map(canonical);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical(v[k])]),
  );
}

const DIRECTIVE = '$patch';

/**
 * Strategic merge patch: like a merge patch, except that lists with a merge
 * key merge item by item (an item `{name: x, $patch: delete}` removes item
 * x), primitive sets (finalizers) merge as unions, and the `$` directives
 * are honoured. Other lists are replaced.
 */
export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) throw patchError(400, 'BadRequest', `json: cannot unmarshal ${goJsonTypeName(patch)} into Go value of type map[string]interface {}`);
  return smpObject(isObject(target) ? target : {}, patch);
}

function smpObject(target: JsonObject, patch: JsonObject): JsonObject {
  if (patch[DIRECTIVE] === 'replace') {
    const { [DIRECTIVE]: _d, ...rest } = patch;
    return stripDirectives(rest) as JsonObject;
  }
  if (patch[DIRECTIVE] === 'delete') return {};
  let result: JsonObject = { ...target };
  const retain = patch['$retainKeys'];
  if (Array.isArray(retain)) {
    result = Object.fromEntries(Object.entries(result).filter(([k]) => retain.includes(k)));
  }
  for (const [k, v] of Object.entries(patch)) {
    if (k === DIRECTIVE || k === '$retainKeys') continue;
    if (k.startsWith('$setElementOrder/')) {
      // An order for a list the patch does not otherwise touch: reorder the live list.
      const field = k.slice('$setElementOrder/'.length);
      const current = result[field];
      if (!(field in patch) && Array.isArray(current) && Array.isArray(v)) result[field] = smpList(field, current, [], v);
      continue;
    }
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      const current = result[field];
      if (Array.isArray(current) && Array.isArray(v)) result[field] = current.filter((x) => !v.includes(x as never));
      continue;
    }
    if (v === null) {
      delete result[k];
      continue;
    }
    const current = result[k];
    if (Array.isArray(v)) {
      const order = patch[`$setElementOrder/${k}`];
      result[k] = smpList(k, Array.isArray(current) ? current : [], v, Array.isArray(order) ? order : undefined);
    } else if (isObject(v)) {
      result[k] = smpObject(isObject(current) ? current : {}, v);
    } else {
      result[k] = v;
    }
  }
  return result;
}

/**
 * Merges a list with a merge key (or a primitive set) item by item, then
 * orders the result as the API server does: the items the patch names keep
 * the patch's order (or that of `$setElementOrder/<field>` when given), and
 * the items only the live list had are slotted in among them by the live
 * order.
 */
function smpList(field: string, target: Json[], patch: Json[], order?: Json[]): Json[] {
  if (isPrimitiveSet(field)) {
    const merged = [...target];
    for (const v of patch) if (!merged.includes(v)) merged.push(v);
    return normalizeOrder(merged, order ?? patch, target, (x) => x);
  }
  const replaceDirective = patch.find((i) => isObject(i) && i[DIRECTIVE] === 'replace' && Object.keys(i).length === 1);
  if (replaceDirective) return stripDirectives(patch.filter((i) => i !== replaceDirective)) as Json[];
  const key = mergeKeyFor(field, patch.length ? patch : order?.length ? order : target);
  if (!key || !patch.every(isObject)) return stripDirectives(patch) as Json[];
  const result: Json[] = target.map((i) => structuredClone(i));
  for (const item of patch as JsonObject[]) {
    const index = result.findIndex((t) => isObject(t) && t[key] === item[key]);
    if (item[DIRECTIVE] === 'delete') {
      if (index >= 0) result.splice(index, 1);
      continue;
    }
    if (index >= 0) result[index] = smpObject(result[index] as JsonObject, item);
    else result.push(stripDirectives(item));
  }
  const named = order ?? (patch as JsonObject[]).filter((i) => i[DIRECTIVE] !== 'delete');
  return normalizeOrder(result, named, target, (x) => (isObject(x) ? x[key] : undefined));
}

/**
 * The order of strategicpatch's normalizeElementOrder: `merged` split into
 * the items `patchOrder` names (sorted by it) and the server-only ones (in
 * live order), then interleaved: a server-only item goes first only when
 * the live list has it before the next patch item.
 */
function normalizeOrder(merged: Json[], patchOrder: Json[], liveOrder: Json[], id: (item: Json) => unknown): Json[] {
  const index = (list: Json[], item: Json): number => list.findIndex((x) => id(x) === id(item));
  const named = merged.filter((i) => index(patchOrder, i) >= 0).sort((a, b) => index(patchOrder, a) - index(patchOrder, b));
  const serverOnly = merged.filter((i) => index(patchOrder, i) < 0);
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < named.length) {
    if (i >= serverOnly.length) out.push(named[j++]!);
    else if (j >= named.length) out.push(serverOnly[i++]!);
    else {
      const li = index(liveOrder, serverOnly[i]!);
      const ri = index(liveOrder, named[j]!);
      if (li >= 0 && ri >= 0 && li < ri) out.push(serverOnly[i++]!);
      else out.push(named[j++]!);
    }
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !k.startsWith('$'))
      .map(([k, x]) => [k, stripDirectives(x)]),
  );
}

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
