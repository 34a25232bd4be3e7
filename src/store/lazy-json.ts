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
      const value: unknown = JSON.parse(text);
      settle(this, value);
      return value;
    },
    set(this: object, value: unknown) {
      settle(this, value);
    },
  });
}
