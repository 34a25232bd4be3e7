/**
 * The form of the ids vnfm gives what it records (VIMs, packages, VNF
 * instances, operation occurrences): RFC 4122 text, as randomUUID writes it.
 * An id of another form was not made by vnfm (a document edited by hand, a
 * row another client wrote); where an id becomes a path it must have this
 * form, so that it is one name inside its folder and nothing else.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
