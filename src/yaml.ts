/**
 * Reading the operator's own client configuration (a kubeconfig, a
 * clouds.yaml) and the files it points at. Stricter than a lenient YAML load:
 * duplicate keys are an error (kubectl and PyYAML would silently keep one of
 * them, and which one differs), the file size is bounded, and the alias
 * expansion of the parsed document is measured, so an alias bomb is a
 * validation error rather than an out-of-memory crash in whatever walks it.
 */
import yaml from 'js-yaml';
import { ValidationError } from './errors.js';
import { FileReadError, readInputText } from './input-file.js';

/** Largest config document accepted. Real kubeconfigs are a few KiB. */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
/** Largest file a config may point at (CA bundle, token file, client key). */
export const MAX_REFERENCED_BYTES = 1024 * 1024;
/**
 * Most nodes the parsed document may expand to when every alias is followed.
 * js-yaml shares aliased nodes instead of copying them, so the bomb goes off
 * in whoever walks the result; counting the walk here defuses it first.
 */
export const MAX_EXPANDED_NODES = 1_000_000;

export { FileReadError };

/**
 * Reads a file as UTF-8 text, refusing what is missing, not a regular file
 * (a FIFO would block the read) or larger than `maxBytes`. Throws a
 * FileReadError; callers wrap it in a ValidationError naming the field that
 * pointed here.
 */
export function readBoundedText(path: string, maxBytes: number): string {
  return readInputText(path, maxBytes);
}

/** Reads and parses one YAML (or JSON) document; every failure is a ValidationError on `path`. */
export function readConfigYaml(path: string, hint: string): unknown {
  let text: string;
  try {
    text = readBoundedText(path, MAX_CONFIG_BYTES);
  } catch (err) {
    if (!(err instanceof FileReadError)) throw err;
    throw new ValidationError(path, undefined, err.problem, { hint });
  }
  return parseConfigYaml(text, path);
}

/** Parses one YAML document from `text`; `file` names it in errors. */
export function parseConfigYaml(text: string, file: string): unknown {
  let doc: unknown;
  try {
    doc = yaml.load(text, { filename: file, schema: yaml.DEFAULT_SCHEMA, json: false });
  } catch (err) {
    const e = err as { reason?: string; mark?: { line: number; column: number } };
    const where = e.mark ? ` at line ${e.mark.line + 1}, column ${e.mark.column + 1}` : '';
    throw new ValidationError(file, undefined, `is not valid YAML${where}: ${e.reason ?? String(err)}`, {
      hint: 'check the indentation and quoting near that line; each key may appear only once per mapping',
    });
  }
  assertBoundedExpansion(doc, file);
  return doc;
}

/**
 * Refuses a parsed document that expands past MAX_EXPANDED_NODES once its
 * aliases are followed (throws a ValidationError on `file`). Exported for the
 * package readers, which parse with their own error positions.
 */
export function assertBoundedExpansion(doc: unknown, file: string): void {
  const stack: unknown[] = [doc];
  let visited = 0;
  while (stack.length > 0) {
    const node = stack.pop();
    if (++visited > MAX_EXPANDED_NODES) {
      throw new ValidationError(file, undefined, `expands to more than ${MAX_EXPANDED_NODES} values once its YAML aliases are followed`, {
        hint: 'write the values out instead of repeating large anchored blocks through aliases (*name)',
      });
    }
    if (Array.isArray(node)) {
      for (const child of node) stack.push(child);
    } else if (node !== null && typeof node === 'object' && !(node instanceof Date) && !(node instanceof Uint8Array)) {
      for (const child of Object.values(node)) stack.push(child);
    }
  }
}

/** A short description of a YAML value's kind, for "must be a string, not ..." messages. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'empty';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a mapping';
  return `a ${typeof value}`;
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof Uint8Array);
}
