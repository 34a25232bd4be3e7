/**
 * Names where people read: tables show a VIM's, a package's or an
 * instance's name beside (or instead of) its uuid, and uuids shortened to
 * their first 8 characters, which every command that takes an id accepts.
 */

/** Names by id, each map filled by the command that prints. */
export interface NameBook {
  vims?: Map<string, string>;
  packages?: Map<string, string>;
  instances?: Map<string, string>;
}

export const SHORT_ID = 8;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A uuid's first 8 characters; anything else (an inline VIM's label) whole. */
export const shortId = (id: string): string => (UUID.test(id) ? id.slice(0, SHORT_ID) : id);

const STORED_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `2026-01-02T03:04:05.678Z` as `2026-01-02 03:04:05` (UTC). */
export const shortTime = (iso: string): string =>
  // The form the store keeps (toISOString's) is cut without a regular expression: a table of 20 000 has one per row.
  iso.length === 24 && iso.charCodeAt(10) === 84 /* T */ && iso.charCodeAt(23) === 90 /* Z */ && STORED_TIME.test(iso)
    ? iso.slice(0, 10) + ' ' + iso.slice(11, 19)
    : iso.replace('T', ' ').replace(/(\.\d+)?Z$/, '');

/** `name (id)`, or the id alone when it has no name. */
export function nameBeside(id: string, names: Map<string, string> | undefined): string {
  const name = names?.get(id);
  return name ? `${name} (${id})` : id;
}
