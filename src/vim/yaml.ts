/**
 * Loading YAML that a user or a package hands us, with bounds: a size limit
 * and a cap on alias expansion, so an alias bomb is an error rather than an
 * out-of-memory crash.
 */
import { readFileSync, statSync } from 'node:fs';
import yaml from 'js-yaml';
import { ValidationError } from '../errors.js';

const MAX_BYTES = 4 * 1024 * 1024;
const MAX_ALIASES = 1000;

/** Parses one YAML document from `text`; `file` names it in errors. */
export function parseYaml(text: string, file: string): unknown {
  const aliases = (text.match(/(^|[\s\[{,:-])\*[^\s,\]}]+/g) ?? []).length;
  if (aliases > MAX_ALIASES) {
    throw new ValidationError(file, undefined, `has ${aliases} YAML aliases (at most ${MAX_ALIASES} are accepted)`, {
      hint: 'write the values out instead of referring to anchors',
    });
  }
  try {
    return yaml.load(text, { filename: file, schema: yaml.CORE_SCHEMA, json: true });
  } catch (err) {
    const e = err as { reason?: string; mark?: { line: number; column: number } };
    const where = e.mark ? `line ${e.mark.line + 1}, column ${e.mark.column + 1}` : undefined;
    throw new ValidationError(file, where, `is not valid YAML: ${e.reason ?? String(err)}`, {
      hint: 'check the indentation and quoting near that line',
    });
  }
}

/** Reads and parses a YAML file, refusing missing, oversized or non-regular files. */
export function readYamlFile(path: string): unknown {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new ValidationError(path, undefined, 'is not a regular file');
    size = st.size;
  } catch (err) {
    if (err instanceof ValidationError) throw err;
    throw new ValidationError(path, undefined, 'cannot be read: ' + ((err as NodeJS.ErrnoException).code ?? String(err)), {
      hint: 'check the path',
    });
  }
  if (size > MAX_BYTES) {
    throw new ValidationError(path, undefined, `is ${size} bytes; at most ${MAX_BYTES} are accepted`);
  }
  return parseYaml(readFileSync(path, 'utf8'), path);
}

/** The 1-based line where `key:` first appears at any indentation, for error messages. */
export function lineOfKey(text: string, key: string): number | undefined {
  const lines = text.split('\n');
  const re = new RegExp(`^\\s*["']?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?\\s*:`);
  const i = lines.findIndex((l) => re.test(l));
  return i < 0 ? undefined : i + 1;
}
