/**
 * A JSON column read as a property that is parsed when first read. A list of
 * 10 000 instances or operations for a table parses only the blobs the table
 * shows; `-o json`, a spread or an assignment see a plain property, as before.
 * The text is the row's, read with the rest of it: what the property holds
 * does not change when the store does afterwards.
 */
export function defineLazyJson(target: object, key: string, text: string): void {
  const settle = (self: object, value: unknown) => Object.defineProperty(self, key, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(target, key, {
    enumerable: true,
    configurable: true,
    get(this: object) {
      if (rawReads > 0) return new RawJson(text);
      const value: unknown = JSON.parse(text);
      settle(this, value);
      return value;
    },
    set(this: object, value: unknown) {
      settle(this, value);
    },
  });
}

/** How a row's JSON column becomes a property of what a repository returns. */
export type JsonField = (target: object, key: string, text: string) => void;

/** The column's text as a RawJson value, for a list's `-o json` writer (ListRead.rawJson). */
export const rawJsonField: JsonField = (target, key, text) => {
  (target as Record<string, unknown>)[key] = new RawJson(text);
};

/**
 * A JSON column's text as stored (compact JSON), or pretty-printed by the
 * store (ListRead.rawJson), for a printer that copies it into its output
 * instead of parsing it and writing it again.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

let rawReads = 0;

/**
 * Runs `fn` with the JSON columns not yet read showing as RawJson: what `-o
 * json` prints of 10 000 rows is re-indented text, not a parse and a
 * stringify of every blob. `fn` must only pass those properties on (a view's
 * toData), not look into them; nothing is settled meanwhile.
 */
export function readingRawJson<T>(fn: () => T): T {
  rawReads++;
  try {
    return fn();
  } finally {
    rawReads--;
  }
}
