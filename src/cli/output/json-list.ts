/**
 * `-o json` of a long list (vnf-list, op-list), written as it is read: the
 * same bytes as JSON.stringify(items, null, 2), without holding the items or
 * the whole text, and without parsing the stored JSON columns only to write
 * them again.
 */
import { RawJson } from '../../store/lazy-json.js';
import { maskSealed } from './printer.js';

/** Characters gathered before a write to stdout. */
const WRITE_CHUNK = 1 << 16;

/**
 * Writes the items' data (`toData`, read with the JSON columns as RawJson) a
 * chunk at a time, waiting for the stream to drain when it asks to. An item
 * that is a RawJson (the store's JSON of an item: ListRead.simpleJson) is
 * written as it is, re-indented.
 */
export async function writeJsonList<T>(out: NodeJS.WritableStream, toData: (item: T) => Record<string, unknown>, items: Iterable<T> | AsyncIterable<T>): Promise<void> {
  let chunk = '';
  let first = true;
  const flush = async () => {
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
    chunk = '';
  };
  for await (const item of items) {
    chunk += (first ? '[\n' : ',\n') + (item instanceof RawJson ? '  ' + prettyValue(item, '  ') : prettyItem(toData(item)));
    first = false;
    if (chunk.length >= WRITE_CHUNK) await flush();
  }
  chunk += first ? '[]\n' : '\n]\n';
  await flush();
}

/** A list's items as the store joined them, a page at a time (ListSource.json), between the list's brackets. */
export async function writeJsonText(out: NodeJS.WritableStream, pages: Iterable<string>): Promise<void> {
  let first = true;
  for (const page of pages) {
    if (!out.write((first ? '[\n' : ',\n') + page)) await new Promise<void>((resolve) => out.once('drain', resolve));
    first = false;
  }
  out.write(first ? '[]\n' : '\n]\n');
}

/** One item of the list at the list's indent; its RawJson fields copied re-indented. */
function prettyItem(data: Record<string, unknown>): string {
  const fields: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    fields.push(`    ${JSON.stringify(key)}: ${prettyValue(value)}`);
  }
  return fields.length ? `  {\n${fields.join(',\n')}\n  }` : '  {}';
}

/** The value as JSON.stringify(value, null, 2) prints it, each line after the first indented by `indent`. */
function prettyValue(value: unknown, indent = '    '): string {
  if (value instanceof RawJson) {
    // A sealed secret inside is masked (***), which takes the value itself.
    if (value.text.includes('"sealed"')) return prettyValue(maskSealed(JSON.parse(value.text)), indent);
    // Compact JSON has no line break outside its strings (JSON.stringify escapes them): a text with one was
    // pretty-printed by the store, and only takes the list's indent.
    return value.text.includes('\n') ? value.text.replaceAll('\n', '\n' + indent) : reindentJson(value.text, indent);
  }
  return (JSON.stringify(value, null, 2) ?? 'null').replace(/\n/g, '\n' + indent);
}

/**
 * Compact JSON text pretty-printed as JSON.stringify(value, null, 2) prints
 * it, each line after the first indented by `indent`: the same bytes, without
 * building the value. The text must be JSON.stringify's (or SQLite's
 * json()'s) output: strings are copied as they are.
 */
export function reindentJson(text: string, indent: string): string {
  let out = '';
  let pad = indent;
  let run = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) throw new SyntaxError('unterminated string in stored JSON');
        let k = j - 1;
        while (text.charCodeAt(k) === 92 /* \ */) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j++;
      }
      i = j + 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      out += text.slice(run, i);
      let j = i + 1;
      while (j < n && text.charCodeAt(j) <= 32) j++;
      if (text.charCodeAt(j) === c + 2) {
        out += c === 123 ? '{}' : '[]';
        i = j + 1;
      } else {
        pad += '  ';
        out += (c === 123 ? '{\n' : '[\n') + pad;
        i++;
      }
      run = i;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      pad = pad.slice(0, -2);
      out += text.slice(run, i) + '\n' + pad + (c === 125 ? '}' : ']');
      run = ++i;
    } else if (c === 44 /* , */) {
      out += text.slice(run, i) + ',\n' + pad;
      run = ++i;
    } else if (c === 58 /* : */) {
      out += text.slice(run, i) + ': ';
      run = ++i;
    } else if (c <= 32) {
      out += text.slice(run, i);
      run = ++i;
    } else {
      i++;
    }
  }
  return out + text.slice(run);
}
