/**
 * YAML as the VNFD room reads it: bounded (duplicate keys refused, alias
 * expansion measured, nesting that would exhaust the stack caught), every
 * failure turned into a finding with the line the parser stopped at, and a
 * way back from a key path to the line it was written on. js-yaml keeps no
 * positions in the parsed result, so `lineOf` scans the source text by
 * indentation, which is right for the block-style YAML descriptors are
 * written in.
 */
import yaml from 'js-yaml';
import { ValidationError } from '../errors.js';
import { assertBoundedExpansion } from '../yaml.js';
import type { Finding } from '../model/package-files.js';

export type YamlResult = { ok: true; doc: unknown } | { ok: false; finding: Finding };

/** Parses one YAML document; `lineOffset` shifts reported lines for a document cut out of a larger file. */
export function parseYaml(text: string, file: string, lineOffset = 0): YamlResult {
  let doc: unknown;
  try {
    doc = yaml.load(text, { filename: file, schema: yaml.DEFAULT_SCHEMA, json: false });
  } catch (err) {
    if (err instanceof yaml.YAMLException) {
      const mark = (err as yaml.YAMLException & { mark?: { line: number } }).mark;
      return {
        ok: false,
        finding: {
          severity: 'error',
          code: 'yaml-syntax',
          file,
          line: mark ? mark.line + 1 + lineOffset : undefined,
          message: `not valid YAML: ${err.reason}`,
          hint: 'check the indentation and quoting near that line; each key may appear only once per mapping',
        },
      };
    }
    if (err instanceof RangeError) return { ok: false, finding: boundsFinding(file, 'nests deeper than the parser can follow') };
    throw err;
  }
  try {
    assertBoundedExpansion(doc, file);
  } catch (err) {
    if (err instanceof ValidationError) {
      return { ok: false, finding: { ...boundsFinding(file, err.message.replace(`${file}: `, '')), hint: err.hint } };
    }
    throw err;
  }
  return { ok: true, doc };
}

function boundsFinding(file: string, problem: string): Finding {
  return {
    severity: 'error',
    code: 'yaml-bounds',
    file,
    message: problem,
    hint: 'write the values out instead of repeating large anchored blocks through aliases (*name)',
  };
}

/** One document of a multi-document stream, with the line (1-based) its text starts on. */
export interface YamlDocumentSource {
  text: string;
  /** The file line `text` starts on (its `---` line, if any): add `startLine - 1` to a line within `text`. */
  startLine: number;
  /** The file line of the document's first content (not blank, comment or marker), for findings about the whole document. */
  firstLine: number;
}

/**
 * Cuts a multi-document stream at its `---` lines, so that each document
 * parses on its own (one broken document does not hide the others) and its
 * positions map back to the file. Segments holding only comments or blanks
 * are not documents.
 */
export function splitYamlDocuments(text: string): YamlDocumentSource[] {
  const lines = text.split(/\r?\n/);
  const docs: YamlDocumentSource[] = [];
  let start = 0;
  const flush = (end: number) => {
    const body = lines.slice(start, end);
    const first = body.findIndex((l) => l.trim() !== '' && !l.trim().startsWith('#') && l.trim() !== '...');
    if (first >= 0) docs.push({ text: body.join('\n'), startLine: start + 1, firstLine: start + first + 1 });
  };
  for (let i = 0; i < lines.length; i++) {
    if (/^---(\s|$)/.test(lines[i]!)) {
      flush(i);
      // Content after the marker on the same line ("--- !tag" or "--- {a: 1}") stays with the document.
      lines[i] = lines[i]!.slice(3).replace(/^\s+/, (m) => ' '.repeat(m.length + 3));
      start = i;
    }
  }
  flush(lines.length);
  return docs;
}

interface KeyLine {
  /** Column of the first character of the line's content, dashes included. */
  col: number;
  dash: boolean;
  key?: string;
  keyCol: number;
}

function scanLine(line: string): KeyLine | undefined {
  const trimmed = line.trimStart();
  if (trimmed === '' || trimmed.startsWith('#')) return undefined;
  const col = line.length - trimmed.length;
  let rest = trimmed;
  let keyCol = col;
  let dash = false;
  while (/^-(\s|$)/.test(rest)) {
    dash = true;
    const after = rest.slice(1);
    const stripped = after.trimStart();
    keyCol += 1 + (after.length - stripped.length);
    rest = stripped;
  }
  const m = /^(?:"([^"]*)"|'([^']*)'|([^\s"'#:][^:#]*?))\s*:(?:\s|$)/.exec(rest);
  const key = m ? (m[1] ?? m[2] ?? m[3]) : undefined;
  return { col, dash, key, keyCol };
}

/**
 * The 1-based line of the key at `path` (each element a mapping key; list
 * items are stepped through transparently, as in Tacker's `- policy_name:`
 * lists), or of the deepest ancestor found when the full path is not.
 * Undefined when not even the first key is there.
 */
export function lineOf(text: string, path: readonly string[]): number | undefined {
  const lines = text.split(/\r?\n/);
  let from = 0;
  let parentCol = -1;
  let found: number | undefined;
  for (const segment of path) {
    let hit = -1;
    // The parent's children all start at the column of its first child; deeper keys are grandchildren.
    // In a list, each item's key sits after its own dash, wherever that puts it.
    let childCol: number | undefined;
    let dashCol: number | undefined;
    for (let i = from; i < lines.length; i++) {
      const scanned = scanLine(lines[i]!);
      if (!scanned) continue;
      // Leaving the parent's block ends the search (a list may sit at its parent's column).
      if (parentCol >= 0 && (scanned.col < parentCol || (scanned.col === parentCol && !scanned.dash))) break;
      if (childCol === undefined) {
        childCol = scanned.keyCol;
        dashCol = scanned.dash ? scanned.col : undefined;
      }
      const isChild = scanned.keyCol === childCol || (scanned.dash && scanned.col === dashCol);
      if (scanned.key === segment && isChild) {
        hit = i;
        parentCol = scanned.keyCol;
        break;
      }
    }
    if (hit < 0) return found;
    found = hit + 1;
    from = hit + 1;
  }
  return found;
}
