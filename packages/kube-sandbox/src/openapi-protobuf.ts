/**
 * `/openapi/v2` in protobuf, as the API server serves it to client-go's
 * discovery (`OpenAPISchema()`, used by kubectl's and Helm's validation and
 * patch code where OpenAPI v3 is not used): the JSON document encoded as
 * gnostic's `openapi.v2.Document` message. Keywords that OpenAPI v2 has no
 * field for (v3's nullable, oneOf, anyOf) are dropped, as the server's own
 * v2 conversion drops them; `x-` extensions, defaults, enums and examples
 * travel as `Any` values whose `yaml` is their JSON text (JSON is YAML).
 */

/**
 * The media type the API server answers with. Clients ask for it by this
 * name or by the deprecated `…spec.v2@v1.0+protobuf` (client-go's Accept);
 * the answer always names this one, which Go's mime parser can read.
 */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
export const OPENAPI_V2_PROTOBUF_TYPES = new Set([OPENAPI_V2_PROTOBUF, 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf']);

type Json = unknown;
type JsonObject = Record<string, Json>;

/** A message under construction: fields appended in order. */
class Writer {
  private parts: Buffer[] = [];

  private key(field: number, wireType: number): void {
    this.varint(BigInt((field << 3) | wireType));
  }

  private varint(n: bigint): void {
    const bytes: number[] = [];
    let v = BigInt.asUintN(64, n);
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      bytes.push(b);
    } while (v > 0n);
    this.parts.push(Buffer.from(bytes));
  }

  string(field: number, value: unknown): void {
    if (typeof value !== 'string' || value === '') return;
    this.bytes(field, Buffer.from(value, 'utf8'));
  }

  bytes(field: number, value: Buffer): void {
    this.key(field, 2);
    this.varint(BigInt(value.length));
    this.parts.push(value);
  }

  message(field: number, w: Writer | undefined): void {
    if (w) this.bytes(field, w.done());
  }

  bool(field: number, value: unknown): void {
    if (value !== true) return;
    this.key(field, 0);
    this.varint(1n);
  }

  oneofBool(field: number, value: boolean): void {
    this.key(field, 0);
    this.varint(value ? 1n : 0n);
  }

  int(field: number, value: unknown): void {
    if (typeof value !== 'number' || !Number.isInteger(value) || value === 0) return;
    this.key(field, 0);
    this.varint(BigInt(value));
  }

  double(field: number, value: unknown): void {
    if (typeof value !== 'number' || value === 0) return;
    this.key(field, 1);
    const b = Buffer.alloc(8);
    b.writeDoubleLE(value);
    this.parts.push(b);
  }

  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const isObject = (v: Json): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** gnostic's `Any`: the value as YAML text (field 2). */
function any(value: Json): Writer {
  const w = new Writer();
  w.string(2, `${JSON.stringify(value)}\n`);
  return w;
}

/** `NamedAny` entries for the object's `x-` keys. */
function vendorExtensions(w: Writer, field: number, obj: JsonObject): void {
  for (const [k, v] of Object.entries(obj)) {
    if (!k.startsWith('x-')) continue;
    const named = new Writer();
    named.string(1, k);
    named.message(2, any(v));
    w.message(field, named);
  }
}

function schema(s: JsonObject): Writer {
  const w = new Writer();
  w.string(1, s['$ref']);
  w.string(2, s['format']);
  w.string(3, s['title']);
  w.string(4, s['description']);
  if (s['default'] !== undefined) w.message(5, any(s['default']));
  w.double(6, s['multipleOf']);
  w.double(7, s['maximum']);
  w.bool(8, s['exclusiveMaximum']);
  w.double(9, s['minimum']);
  w.bool(10, s['exclusiveMinimum']);
  w.int(11, s['maxLength']);
  w.int(12, s['minLength']);
  w.string(13, s['pattern']);
  w.int(14, s['maxItems']);
  w.int(15, s['minItems']);
  w.bool(16, s['uniqueItems']);
  w.int(17, s['maxProperties']);
  w.int(18, s['minProperties']);
  if (Array.isArray(s['required'])) for (const r of s['required']) w.string(19, r);
  if (Array.isArray(s['enum'])) for (const e of s['enum']) w.message(20, any(e));
  const additional = s['additionalProperties'];
  if (isObject(additional)) {
    const item = new Writer();
    item.message(1, schema(additional));
    w.message(21, item);
  } else if (typeof additional === 'boolean') {
    const item = new Writer();
    // A oneof member is on the wire whenever it is the one chosen, false included.
    item.oneofBool(2, additional);
    w.message(21, item);
  }
  const type = s['type'];
  if (typeof type === 'string' || Array.isArray(type)) {
    const t = new Writer();
    for (const v of Array.isArray(type) ? type : [type]) t.string(1, v);
    w.message(22, t);
  }
  const items = s['items'];
  if (isObject(items) || Array.isArray(items)) {
    const it = new Writer();
    for (const i of Array.isArray(items) ? items : [items]) if (isObject(i)) it.message(1, schema(i));
    w.message(23, it);
  }
  if (Array.isArray(s['allOf'])) for (const a of s['allOf']) if (isObject(a)) w.message(24, schema(a));
  if (isObject(s['properties'])) {
    const props = new Writer();
    for (const [name, value] of Object.entries(s['properties'])) {
      if (!isObject(value)) continue;
      const named = new Writer();
      named.string(1, name);
      named.message(2, schema(value));
      props.message(1, named);
    }
    w.message(25, props);
  }
  w.string(26, s['discriminator']);
  w.bool(27, s['readOnly']);
  if (s['example'] !== undefined) w.message(30, any(s['example']));
  vendorExtensions(w, 31, s);
  return w;
}

function operation(op: JsonObject): Writer {
  const w = new Writer();
  if (Array.isArray(op['tags'])) for (const t of op['tags']) w.string(1, t);
  w.string(2, op['summary']);
  w.string(3, op['description']);
  w.string(5, op['operationId']);
  if (Array.isArray(op['produces'])) for (const p of op['produces']) w.string(6, p);
  if (Array.isArray(op['consumes'])) for (const c of op['consumes']) w.string(7, c);
  if (isObject(op['responses'])) {
    const responses = new Writer();
    for (const [code, r] of Object.entries(op['responses'])) {
      if (!isObject(r)) continue;
      const response = new Writer();
      response.string(1, r['description']);
      if (isObject(r['schema'])) {
        const item = new Writer();
        item.message(1, schema(r['schema']));
        response.message(2, item);
      }
      const value = new Writer();
      value.message(1, response);
      const named = new Writer();
      named.string(1, code);
      named.message(2, value);
      responses.message(1, named);
    }
    w.message(9, responses);
  }
  vendorExtensions(w, 13, op);
  return w;
}

const METHODS: Array<[string, number]> = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['options', 6],
  ['head', 7],
  ['patch', 8],
];

/** The sandbox's `/openapi/v2` JSON document as an `openapi.v2.Document` message. */
export function encodeOpenApiV2(doc: JsonObject): Buffer {
  const w = new Writer();
  w.string(1, doc['swagger']);
  if (isObject(doc['info'])) {
    const info = new Writer();
    info.string(1, doc['info']['title']);
    info.string(2, doc['info']['version']);
    w.message(2, info);
  }
  if (isObject(doc['paths'])) {
    const paths = new Writer();
    for (const [path, item] of Object.entries(doc['paths'])) {
      if (!isObject(item)) continue;
      const pi = new Writer();
      for (const [method, field] of METHODS) if (isObject(item[method])) pi.message(field, operation(item[method]));
      const named = new Writer();
      named.string(1, path);
      named.message(2, pi);
      paths.message(2, named);
    }
    w.message(8, paths);
  }
  if (isObject(doc['definitions'])) {
    const defs = new Writer();
    for (const [name, s] of Object.entries(doc['definitions'])) {
      if (!isObject(s)) continue;
      const named = new Writer();
      named.string(1, name);
      named.message(2, schema(s));
      defs.message(1, named);
    }
    w.message(9, defs);
  }
  vendorExtensions(w, 16, doc);
  return w.done();
}
