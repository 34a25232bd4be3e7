/**
 * Request bodies in Kubernetes' protobuf encoding, which kubectl's typed
 * commands send (`kubectl create namespace`, `create configmap`,
 * `create secret`, `auth can-i`, `auth whoami`) and Helm's release storage
 * (its Secrets, and the DeleteOptions of deleting one). The wire format is the `k8s\0` magic followed by a
 * `runtime.Unknown` envelope (typeMeta, raw) whose `raw` is the object's
 * message, with field numbers from k8s.io/api's generated.proto.
 *
 * Only the kinds below are decoded; any other protobuf body is answered 415,
 * as for a kind the server has no protobuf codec for. Responses are always
 * JSON, which every client that sends protobuf also accepts.
 */
import { badRequest, unsupportedMediaType } from './status.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Scalar = 'string' | 'bytes' | 'int' | 'bool' | 'time';
interface Field {
  name: string;
  type: Scalar | Schema | { map: 'string' | 'bytes' };
  repeated?: boolean;
  /**
   * A pointer field in Go: present only when set, so false or 0 is a value.
   * Other fields are always on the wire and, like Go's `omitempty`, dropped
   * from the JSON when empty.
   */
  optional?: boolean;
}
type Schema = Record<number, Field>;

const OWNER_REFERENCE: Schema = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool', optional: true },
  7: { name: 'blockOwnerDeletion', type: 'bool', optional: true },
};

const OBJECT_META: Schema = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int', optional: true },
  11: { name: 'labels', type: { map: 'string' } },
  12: { name: 'annotations', type: { map: 'string' } },
  13: { name: 'ownerReferences', type: OWNER_REFERENCE, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
};

/** Object schemas by `apiVersion/kind`. */
const RESOURCE_ATTRIBUTES: Schema = {
  1: { name: 'namespace', type: 'string' },
  2: { name: 'verb', type: 'string' },
  3: { name: 'group', type: 'string' },
  4: { name: 'version', type: 'string' },
  5: { name: 'resource', type: 'string' },
  6: { name: 'subresource', type: 'string' },
  7: { name: 'name', type: 'string' },
};
const NON_RESOURCE_ATTRIBUTES: Schema = { 1: { name: 'path', type: 'string' }, 2: { name: 'verb', type: 'string' } };
const ACCESS_ATTRIBUTES: Schema = {
  1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES },
  2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES },
};

const DELETE_OPTIONS: Schema = {
  1: { name: 'gracePeriodSeconds', type: 'int', optional: true },
  2: { name: 'preconditions', type: { 1: { name: 'uid', type: 'string' }, 2: { name: 'resourceVersion', type: 'string' } } },
  3: { name: 'orphanDependents', type: 'bool', optional: true },
  4: { name: 'propagationPolicy', type: 'string' },
  5: { name: 'dryRun', type: 'string', repeated: true },
  6: { name: 'ignoreStoreReadErrorWithClusterBreakingPotential', type: 'bool', optional: true },
};

const KINDS: Record<string, Schema> = {
  // A typed client's delete (Helm's `uninstall` purging its release Secret) sends these.
  'v1/DeleteOptions': DELETE_OPTIONS,
  'meta.k8s.io/v1/DeleteOptions': DELETE_OPTIONS,
  // What `kubectl auth can-i` and `kubectl auth whoami` send.
  'authorization.k8s.io/v1/SelfSubjectAccessReview': { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: ACCESS_ATTRIBUTES } },
  'authorization.k8s.io/v1/SelfSubjectRulesReview': { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } } },
  'authorization.k8s.io/v1/SubjectAccessReview': {
    1: { name: 'metadata', type: OBJECT_META },
    2: {
      name: 'spec',
      type: { ...ACCESS_ATTRIBUTES, 3: { name: 'user', type: 'string' }, 4: { name: 'groups', type: 'string', repeated: true }, 6: { name: 'uid', type: 'string' } },
    },
  },
  'authentication.k8s.io/v1/TokenReview': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: { 1: { name: 'token', type: 'string' }, 2: { name: 'audiences', type: 'string', repeated: true } } },
  },
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: { name: 'metadata', type: OBJECT_META } },
  'v1/Namespace': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
    3: { name: 'status', type: { 1: { name: 'phase', type: 'string' } } },
  },
  'v1/ConfigMap': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'data', type: { map: 'string' } },
    3: { name: 'binaryData', type: { map: 'bytes' } },
    4: { name: 'immutable', type: 'bool', optional: true },
  },
  'v1/Secret': {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'data', type: { map: 'bytes' } },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: { map: 'string' } },
    5: { name: 'immutable', type: 'bool', optional: true },
  },
};

interface WireField {
  number: number;
  wireType: number;
  /** Varint value, or the bytes of a length-delimited field. */
  value: bigint | Buffer;
}

function readVarint(buf: Buffer, pos: number): [bigint, number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw badRequest('protobuf body is truncated');
    const byte = buf[pos++]!;
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [result, pos];
    shift += 7n;
    if (shift > 63n) throw badRequest('protobuf body has an overlong varint');
  }
}

function readFields(buf: Buffer): WireField[] {
  const fields: WireField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, afterKey] = readVarint(buf, pos);
    const number = Number(key >> 3n);
    const wireType = Number(key & 7n);
    pos = afterKey;
    if (wireType === 0) {
      const [value, next] = readVarint(buf, pos);
      fields.push({ number, wireType, value });
      pos = next;
    } else if (wireType === 2) {
      const [length, next] = readVarint(buf, pos);
      const end = next + Number(length);
      if (end > buf.length) throw badRequest('protobuf body is truncated');
      fields.push({ number, wireType, value: buf.subarray(next, end) });
      pos = end;
    } else if (wireType === 1 || wireType === 5) {
      pos += wireType === 1 ? 8 : 4; // fixed-width fields: none in the kinds decoded here
    } else {
      throw badRequest(`protobuf body has an unsupported wire type ${wireType}`);
    }
  }
  return fields;
}

function asBytes(f: WireField): Buffer {
  if (!Buffer.isBuffer(f.value)) throw badRequest(`protobuf field ${f.number} should be length-delimited`);
  return f.value;
}

/** A metav1.Time; the zero time (an empty message) is `undefined`, as JSON renders it null. */
function decodeTime(buf: Buffer): string | undefined {
  let seconds = 0n;
  for (const f of readFields(buf)) if (f.number === 1 && typeof f.value === 'bigint') seconds = BigInt.asIntN(64, f.value);
  if (seconds === 0n) return undefined;
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}Z`;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === '' || value === 0 || value === false;
}

function decodeMessage(buf: Buffer, schema: Schema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of readFields(buf)) {
    const spec = schema[f.number];
    if (!spec) continue; // fields the sandbox does not model are dropped, as an older server would
    let value: unknown;
    if (typeof spec.type === 'object' && 'map' in spec.type) {
      const entry = readFields(asBytes(f));
      const key = entry.find((e) => e.number === 1);
      const val = entry.find((e) => e.number === 2);
      const map = (out[spec.name] ??= {}) as Record<string, string>;
      const raw = val ? asBytes(val) : Buffer.alloc(0);
      map[key ? asBytes(key).toString('utf8') : ''] = spec.type.map === 'bytes' ? raw.toString('base64') : raw.toString('utf8');
      continue;
    }
    switch (spec.type) {
      case 'string':
        value = asBytes(f).toString('utf8');
        break;
      case 'bytes':
        value = asBytes(f).toString('base64');
        break;
      case 'int':
        value = Number(BigInt.asIntN(64, f.value as bigint));
        break;
      case 'bool':
        value = f.value !== 0n;
        break;
      case 'time':
        value = decodeTime(asBytes(f));
        break;
      default:
        value = decodeMessage(asBytes(f), spec.type);
    }
    if (spec.repeated) ((out[spec.name] ??= []) as unknown[]).push(value);
    else if (spec.optional || !isEmpty(value)) out[spec.name] = value;
  }
  return out;
}

/** Decodes a protobuf request body into the JSON object it stands for. */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw badRequest('the protobuf body does not start with the Kubernetes protobuf magic number');
  }
  let apiVersion = '';
  let kind = '';
  let raw: Buffer = Buffer.alloc(0);
  for (const f of readFields(body.subarray(MAGIC.length))) {
    if (f.number === 1) {
      for (const t of readFields(asBytes(f))) {
        if (t.number === 1) apiVersion = asBytes(t).toString('utf8');
        if (t.number === 2) kind = asBytes(t).toString('utf8');
      }
    } else if (f.number === 2) {
      raw = asBytes(f);
    }
  }
  const schema = KINDS[`${apiVersion}/${kind}`];
  if (!schema) throw unsupportedMediaType();
  return { apiVersion, kind, ...decodeMessage(raw, schema) };
}
