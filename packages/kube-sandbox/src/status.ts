/**
 * `Status` objects, the body a kube-apiserver sends with every failed
 * request (and with some successful deletes). Messages and reasons follow
 * the wording of k8s.io/apimachinery's `errors` package so that clients
 * that match on them (kubectl prints `Error from server (NotFound): ...`)
 * behave as against a real server.
 */

export type StatusReason =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'InternalError'
  | 'Expired'
  | 'TooManyRequests'
  | 'ServiceUnavailable';

/** One field-level cause inside `details.causes`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  retryAfterSeconds?: number;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
}

/** The wire shape of `v1.Status`. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  /** Set on failures; a successful delete's Status carries none. */
  code?: number;
}

/** A request failed; the server answers with `status` and its `code`. */
export class ApiError extends Error {
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? 'request failed');
    this.name = 'ApiError';
  }
}

/** What a request is about, as Status details name it (`kind` is the plural resource). */
export interface Target {
  group: string;
  resource: string;
  name: string;
}

function failure(code: number, reason: StatusReason, message: string, details?: StatusDetails): ApiError {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason };
  if (details) status.details = details;
  status.code = code;
  return new ApiError(status);
}

/** `pods "x"`, `deployments.apps "x"`: how apimachinery names a group/resource and object. */
function qualified(t: Target): string {
  return `${t.group ? `${t.resource}.${t.group}` : t.resource} "${t.name}"`;
}

function targetDetails(t: Target): StatusDetails {
  const details: StatusDetails = { name: t.name };
  if (t.group) details.group = t.group;
  details.kind = t.resource;
  return details;
}

export const unauthorized = (): ApiError => failure(401, 'Unauthorized', 'Unauthorized');

export const notFound = (t: Target): ApiError => failure(404, 'NotFound', `${qualified(t)} not found`, targetDetails(t));

/** A path the server has no handler for (unknown group, version, resource or subresource). */
export const resourceNotFound = (): ApiError => failure(404, 'NotFound', 'the server could not find the requested resource', {});

export const alreadyExists = (t: Target): ApiError => failure(409, 'AlreadyExists', `${qualified(t)} already exists`, targetDetails(t));

export const conflict = (t: Target, why: string): ApiError => failure(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(t)}: ${why}`, targetDetails(t));

export const methodNotAllowed = (): ApiError => failure(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {});

export const badRequest = (message: string): ApiError => failure(400, 'BadRequest', message);

export const notAcceptable = (): ApiError =>
  failure(406, 'NotAcceptable', '406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf');

export const unsupportedMediaType = (): ApiError =>
  failure(
    415,
    'UnsupportedMediaType',
    'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
  );

export const tooLarge = (): ApiError => failure(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728');

export const internalError = (message: string): ApiError => failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

/** 422 without field details, as the patch appliers answer a patch that does not apply. */
export const unprocessable = (message: string): ApiError => failure(422, 'Invalid', message);

/** A watch (or list) from a resourceVersion the server no longer has history for. */
export const expired = (message: string): ApiError => failure(410, 'Expired', message);

export const tooManyRequests = (retryAfterSeconds: number): ApiError =>
  failure(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds } as StatusDetails);

export const serviceUnavailable = (message: string): ApiError => failure(503, 'ServiceUnavailable', message);

/** A field manager conflict of server-side apply: 409 with one cause per field. */
export function applyConflict(conflicts: { manager: string; apiVersion: string; field: string }[]): ApiError {
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const k = `conflict with "${c.manager}" using ${c.apiVersion}`;
    byManager.set(k, [...(byManager.get(k) ?? []), c.field]);
  }
  const n = conflicts.length;
  const parts = [...byManager].map(([who, fields]) =>
    fields.length === 1 ? `${who}: ${fields[0]}` : `${who.replace('conflict with', 'conflicts with')}:\n${fields.map((f) => `- ${f}`).join('\n')}`,
  );
  const message = `Apply failed with ${n} conflict${n === 1 ? '' : 's'}: ${parts.join('\n')}`;
  return failure(409, 'Conflict', message, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}" using ${c.apiVersion}`, field: c.field })),
  });
}

export const forbidden = (t: Target, why: string, causes?: StatusCause[]): ApiError =>
  failure(403, 'Forbidden', `${qualified(t)} is forbidden: ${why}`, { ...targetDetails(t), ...(causes ? { causes } : {}) });

/** One validation failure, as field.Error renders it. */
export interface FieldError {
  type: 'FieldValueInvalid' | 'FieldValueTypeInvalid' | 'FieldValueRequired' | 'FieldValueNotSupported' | 'FieldValueForbidden' | 'FieldValueTooLong' | 'FieldValueTooMany';
  field: string;
  /** The offending value; absent for Required. */
  value?: unknown;
  /** The value as the API server's Go formatting prints it (`[]string{"a"}`), when JSON would not read the same. */
  goValue?: string;
  detail: string;
}

function fieldErrorBody(e: FieldError): string {
  switch (e.type) {
    case 'FieldValueRequired':
      return `Required value${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueForbidden':
      return `Forbidden${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueTooLong':
      return `Too long: ${e.detail}`;
    case 'FieldValueTooMany':
      return `Too many: ${JSON.stringify(e.value)}: ${e.detail}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${JSON.stringify(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
    default:
      if (e.goValue !== undefined) return `Invalid value: ${e.goValue}: ${e.detail}`;
      return `Invalid value: ${typeof e.value === 'string' ? JSON.stringify(e.value) : JSON.stringify(e.value ?? null)}: ${e.detail}`;
  }
}

/** A Go `map[string]string` as `%#v` prints it (keys sorted). */
export function goStringMap(map: Record<string, string> | undefined): string {
  if (map === undefined) return 'map[string]string(nil)';
  const keys = Object.keys(map).sort();
  return `map[string]string{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(map[k])}`).join(', ')}}`;
}

/** A `*metav1.LabelSelector` as `%#v` prints the value it points to. */
export function goLabelSelector(selector: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] } | undefined): string {
  if (!selector) return 'null';
  const exprs = selector.matchExpressions;
  const requirements =
    exprs === undefined
      ? '[]v1.LabelSelectorRequirement(nil)'
      : `[]v1.LabelSelectorRequirement{${exprs
          .map(
            (e) =>
              `v1.LabelSelectorRequirement{Key:${JSON.stringify(e.key)}, Operator:${JSON.stringify(e.operator)}, Values:${e.values === undefined ? '[]string(nil)' : goStrings(e.values)}}`,
          )
          .join(', ')}}`;
  return `v1.LabelSelector{MatchLabels:${goStringMap(selector.matchLabels)}, MatchExpressions:${requirements}}`;
}

/** A Go `[]string` as `%#v` prints it. */
export function goStrings(values: string[]): string {
  return `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
}

/** 422 `Invalid`: `Namespace "Bad" is invalid: metadata.name: Invalid value: ...`. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const rendered = errors.map((e) => `${e.field}: ${fieldErrorBody(e)}`);
  const summary = rendered.length === 1 ? rendered[0] : `[${rendered.join(', ')}]`;
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  // Name is omitempty: the PatchOptions of a request have none.
  const details: StatusDetails = name ? { name } : {};
  if (group) details.group = group;
  details.kind = kind;
  details.causes = errors.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field }));
  return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, details);
}

/** The `Success` Status a delete answers with for kinds that do not return the deleted object. */
export function deletedStatus(t: Target, uid: string): Status {
  const details: StatusDetails = { name: t.name };
  if (t.group) details.group = t.group;
  details.kind = t.resource;
  details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/**
 * Server-side apply of fields a custom resource's schema does not declare:
 * a 500 without reason or details, as structured-merge-diff's error reaches
 * the client (`failed to create typed patch object (ns/name; group/version,
 * Kind=Kind): .spec.x: field not declared in schema`).
 */
export function typedPatchError(objectKey: string, gvk: string, paths: string[]): ApiError {
  const errors = paths.map((p) => `${p}: field not declared in schema`);
  const detail = errors.length === 1 ? errors[0] : `errors:\n${errors.map((e) => `  ${e}`).join('\n')}`;
  return new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `failed to create typed patch object (${objectKey}; ${gvk}): ${detail}`,
    code: 500,
  });
}
