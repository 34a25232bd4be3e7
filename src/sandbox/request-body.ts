/**
 * The body of a create, update or patch as the API server reads it, and
 * its 400 for a body it cannot: each handler words a malformed one its own
 * way (go-json.ts judges the syntax as Go's decoder does).
 */
import { goJsonTypeName, MalformedJsonBody, summarizeBody } from './go-json.js';
import { PATCH_TYPES } from './patch.js';
import type { ResourceType, Verb } from './resources.js';
import { badRequest, type ApiError } from './status.js';

/** What the reader needs of the request: the body's media type, and the body as it came once read. */
export interface BodyMeta {
  contentType?: string;
  rawBody?: () => Buffer | undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The Go type the API server first decodes a create or update body into, to find its apiVersion and kind. */
const GO_TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** A create or update body the decoder could not find a kind in: `the object provided is unrecognized ...`. */
function unrecognized(type: ResourceType, goError: string, raw: Buffer): ApiError {
  return badRequest(`the object provided is unrecognized (must be of type ${type.kind}): couldn't get version/kind; json parse error: ${goError} (${summarizeBody(raw)})`);
}

/**
 * Reads the body of a create, update or patch, refusing a malformed JSON
 * one with the message of the handler the API server runs: the decoder's
 * for a create or update, the patch library's for a patch (a merge patch
 * only says `Invalid JSON Patch`).
 */
export async function readRequestBody(type: ResourceType, verb: Verb, meta: BodyMeta, readBody: () => Promise<unknown>): Promise<unknown> {
  const writesObject = verb === 'create' || verb === 'update';
  let body: unknown;
  try {
    body = await readBody();
  } catch (err) {
    if (!(err instanceof MalformedJsonBody)) throw err;
    if (writesObject) throw unrecognized(type, err.goError, err.raw);
    if (verb === 'patch' && meta.contentType === PATCH_TYPES.merge) throw badRequest('Invalid JSON Patch');
    throw badRequest(err.goError);
  }
  const json = meta.contentType === undefined || meta.contentType === 'application/json' || meta.contentType === '';
  if (writesObject && json && !type.review) {
    const raw = meta.rawBody?.() ?? Buffer.alloc(0);
    if (body === undefined) throw unrecognized(type, 'unexpected end of JSON input', raw);
    if (body !== null && !isObject(body)) throw unrecognized(type, `json: cannot unmarshal ${goJsonTypeName(body)} into Go value of type ${GO_TYPE_META}`, raw);
  }
  return body;
}
