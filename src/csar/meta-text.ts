/**
 * What TOSCA.meta and the SOL004 manifest share: `Key: value` lines in
 * blank-line separated blocks, written by hand on any platform.
 */
import { checkMemberName } from './member-name.js';

/** Lines without their terminators; CRLF, CR and LF all end a line. */
export function splitLines(text: string): string[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = body.split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The line ending a file mostly uses, so rewritten files keep it. */
export function detectEol(text: string): '\r\n' | '\n' {
  const crlf = (text.match(/\r\n/g) ?? []).length;
  const lf = (text.match(/\n/g) ?? []).length - crlf;
  return crlf > lf ? '\r\n' : '\n';
}

export interface KeyValue {
  key: string;
  value: string;
}

/** `Key: value` (the value may be empty); undefined when the line is not one. */
export function parseKeyValue(line: string): KeyValue | undefined {
  const m = /^([^:\s][^:]*?)\s*:(?:\s+(.*?)|)\s*$/.exec(line);
  if (!m) return undefined;
  return { key: m[1]!, value: unquote(m[2] ?? '') };
}

function unquote(v: string): string {
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'")))) {
    return v.slice(1, -1);
  }
  return v;
}

/** True for `http(s)://`, `ftp://`, `file:` and other URL sources a manifest may name. */
export function isUrl(s: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(s) || /^file:/i.test(s);
}

/** A reference as written in metadata, reduced to a member path (`./a` → `a`). */
export function memberPath(ref: string): string {
  return ref
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

/** A listed file's name (a manifest's Source, a TOSCA.meta Name) read: a URL, a member path, or refused with the finding's words. */
export type ListedName = { kind: 'url' } | { kind: 'path'; path: string } | { kind: 'refused'; code: string; message: string; hint: string };

export function readListedName(name: string, key: 'Source' | 'Name'): ListedName {
  if (name === '') {
    return { kind: 'refused', code: 'artifact-block-incomplete', message: `a ${key}: line has no value`, hint: `write the path of the file in the package after ${key}:` };
  }
  if (isUrl(name)) return { kind: 'url' };
  if (checkMemberName(name).finding) {
    return {
      kind: 'refused',
      code: 'zip-slip',
      message: `${key} ${JSON.stringify(name)} points outside the package`,
      hint: 'give a path relative to the package root, without ".."',
    };
  }
  return { kind: 'path', path: memberPath(name) };
}
