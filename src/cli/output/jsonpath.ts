/**
 * `-o jsonpath=TEMPLATE`: kubectl's JSONPath subset, over the JSON form of
 * what a command prints (a list is `{"kind": "List", "items": [...]}`, as
 * kubectl's). Text outside braces is copied; `{.a.b}`, `{.items[*].id}`,
 * `{.items[0]}`, `{.items[1:3]}`, `{..id}`, `{.items[?(@.state=="X")].id}`,
 * `{range .items[*]}{.id}{"\n"}{end}` and `{"literal"}` are understood. A
 * key that is missing gives nothing, as kubectl's --allow-missing-template-keys.
 */
import { UsageError } from '../../errors.js';

type Step =
  | { k: 'field'; names: string[] }
  | { k: 'wild' }
  | { k: 'recursive'; name: string | '*' }
  | { k: 'index'; indexes: number[] }
  | { k: 'slice'; start?: number; end?: number; step?: number }
  | { k: 'filter'; left: Path; op?: string; right?: Path | { literal: unknown } };

interface Path {
  /** `$...`: from the document's root, also inside a range. */
  fromRoot: boolean;
  steps: Step[];
}

/** `{.a,.b}` is one node of two paths: their values joined by spaces, as kubectl's. */
type Node = { t: 'text'; text: string } | { t: 'path'; paths: Path[] } | { t: 'range'; path: Path; body: Node[] };

function bad(template: string, why: string): UsageError {
  return new UsageError(`-o jsonpath: ${why} in ${JSON.stringify(template)}`, {
    hint: `write fields in braces, e.g. -o jsonpath='{.items[*].id}' or -o jsonpath='{range .items[*]}{.id}{"\\n"}{end}'`,
  });
}

function unquote(s: string): string {
  const body = s.slice(1, -1);
  return body.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);
}

/** Splits `s` at top-level `sep`, ignoring separators inside quotes, brackets and parentheses. */
function splitTop(s: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (depth === 0 && s.startsWith(sep, i)) {
      parts.push(s.slice(start, i));
      start = i + sep.length;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** The index of the bracket closing the one at `open`. */
function closing(s: string, open: number, template: string): number {
  let depth = 0;
  let quote = '';
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  throw bad(template, `unclosed "[" in ${s}`);
}

const NAME = /^[A-Za-z0-9_\-/]+/;

function parsePath(src: string, template: string): Path {
  let s = src.trim();
  const steps: Step[] = [];
  const fromRoot = s.startsWith('$');
  if (fromRoot || s.startsWith('@')) s = s.slice(1);
  let i = 0;
  while (i < s.length) {
    if (s.startsWith('..', i)) {
      i += 2;
      if (s[i] === '*') {
        steps.push({ k: 'recursive', name: '*' });
        i++;
        continue;
      }
      const m = NAME.exec(s.slice(i));
      if (!m) throw bad(template, `a name must follow ".." in ${src}`);
      steps.push({ k: 'recursive', name: m[0] });
      i += m[0].length;
    } else if (s[i] === '.') {
      i++;
      if (s[i] === '*') {
        steps.push({ k: 'wild' });
        i++;
        continue;
      }
      if (i >= s.length || s[i] === '[') continue;
      const m = NAME.exec(s.slice(i));
      if (!m) throw bad(template, `unexpected "${s[i]}" in ${src}`);
      steps.push({ k: 'field', names: [m[0]] });
      i += m[0].length;
    } else if (s[i] === '[') {
      const end = closing(s, i, template);
      steps.push(parseBracket(s.slice(i + 1, end).trim(), template));
      i = end + 1;
    } else {
      throw bad(template, `unexpected "${s[i]}" in ${src}`);
    }
  }
  return { fromRoot, steps };
}

function parseBracket(inner: string, template: string): Step {
  if (inner === '*') return { k: 'wild' };
  if (inner.startsWith('?(') && inner.endsWith(')')) return parseFilter(inner.slice(2, -1), template);
  if (/^-?\d*(:-?\d*){1,2}$/.test(inner)) {
    const [a, b, c] = inner.split(':').map((x) => (x === '' ? undefined : Number(x)));
    return { k: 'slice', ...(a === undefined ? {} : { start: a }), ...(b === undefined ? {} : { end: b }), ...(c === undefined ? {} : { step: c }) };
  }
  const parts = splitTop(inner, ',').map((p) => p.trim());
  if (parts.every((p) => /^-?\d+$/.test(p))) return { k: 'index', indexes: parts.map(Number) };
  if (parts.every((p) => /^(['"]).*\1$/.test(p))) return { k: 'field', names: parts.map(unquote) };
  throw bad(template, `cannot read [${inner}]`);
}

function parseOperand(s: string, template: string): Path | { literal: unknown } {
  const t = s.trim();
  if (t.startsWith('@') || t.startsWith('$')) return parsePath(t, template);
  if (/^(['"]).*\1$/.test(t)) return { literal: unquote(t) };
  if (t === 'true' || t === 'false') return { literal: t === 'true' };
  if (t !== '' && !Number.isNaN(Number(t))) return { literal: Number(t) };
  throw bad(template, `cannot compare with ${t}: quote strings`);
}

function parseFilter(expr: string, template: string): Step {
  const m = /^(.*?)\s*(==|!=|<=|>=|<|>|=~)\s*(.*)$/.exec(expr);
  if (!m) return { k: 'filter', left: parsePath(expr, template) };
  if (m[2] === '=~') throw bad(template, 'regular expressions (=~) are not supported');
  return { k: 'filter', left: parsePath(m[1]!, template), op: m[2]!, right: parseOperand(m[3]!, template) };
}

/** Parses a template; the error names what is wrong and shows the form. */
export function parseJsonPath(template: string): Node[] {
  const root: Node[] = [];
  const stack: Node[][] = [root];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const top = stack[stack.length - 1]!;
    if (open < 0) {
      top.push({ t: 'text', text: template.slice(i) });
      break;
    }
    if (open > i) top.push({ t: 'text', text: template.slice(i, open) });
    let close = -1;
    let quote = '';
    for (let j = open + 1; j < template.length; j++) {
      const c = template[j]!;
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = '';
      } else if (c === '"' || c === "'") quote = c;
      else if (c === '}') {
        close = j;
        break;
      }
    }
    if (close < 0) throw bad(template, 'unclosed "{"');
    const body = template.slice(open + 1, close).trim();
    i = close + 1;
    if (body === 'end') {
      if (stack.length === 1) throw bad(template, '{end} without {range}');
      stack.pop();
    } else if (body.startsWith('range ')) {
      const node: Node = { t: 'range', path: parsePath(body.slice(6), template), body: [] };
      top.push(node);
      stack.push(node.body);
    } else if (/^(['"]).*\1$/s.test(body)) {
      top.push({ t: 'text', text: unquote(body) });
    } else if (body === '') {
      throw bad(template, 'empty {}');
    } else {
      top.push({ t: 'path', paths: splitTop(body, ',').map((part) => parsePath(part, template)) });
    }
  }
  if (stack.length > 1) throw bad(template, '{range} without {end}');
  return root;
}

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (v && typeof v === 'object') return Object.values(v);
  return [];
}

function descend(v: unknown, name: string | '*', out: unknown[]): void {
  if (Array.isArray(v)) {
    for (const c of v) descend(c, name, out);
  } else if (v && typeof v === 'object') {
    for (const [k, c] of Object.entries(v)) {
      if (name === '*' || k === name) out.push(c);
      descend(c, name, out);
    }
  }
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b || (typeof a === 'number' && String(a) === String(b)) || (typeof b === 'number' && String(a) === String(b));
    case '!=':
      return !compare(a, '==', b);
    default: {
      if (a === undefined || b === undefined) return false;
      const [x, y] = typeof a === 'number' || typeof b === 'number' ? [Number(a), Number(b)] : [String(a), String(b)];
      return op === '<' ? x < y : op === '>' ? x > y : op === '<=' ? x <= y : x >= y;
    }
  }
}

function evaluate(path: Path, start: unknown, root: unknown): unknown[] {
  let current = [path.fromRoot ? root : start];
  for (const step of path.steps) {
    const next: unknown[] = [];
    for (const v of current) {
      switch (step.k) {
        case 'field':
          if (v && typeof v === 'object' && !Array.isArray(v)) {
            for (const n of step.names) if (n in v) next.push((v as Record<string, unknown>)[n]);
          }
          break;
        case 'wild':
          next.push(...children(v));
          break;
        case 'recursive':
          descend(v, step.name, next);
          break;
        case 'index':
          if (Array.isArray(v)) for (const i of step.indexes) if (v.at(i) !== undefined) next.push(v.at(i));
          break;
        case 'slice':
          if (Array.isArray(v)) {
            const by = step.step ?? 1;
            if (by <= 0) break;
            const norm = (n: number) => (n < 0 ? Math.max(0, v.length + n) : Math.min(n, v.length));
            for (let i = norm(step.start ?? 0); i < norm(step.end ?? v.length); i += by) next.push(v[i]);
          }
          break;
        case 'filter':
          for (const item of children(v)) {
            const left = evaluate(step.left, item, root);
            if (!step.op) {
              if (left.length && left.some((x) => x !== undefined && x !== null && x !== false)) next.push(item);
              continue;
            }
            const right = step.right && 'literal' in step.right ? [step.right.literal] : evaluate(step.right as Path, item, root);
            if (left.some((l) => right.some((r) => compare(l, step.op!, r)))) next.push(item);
          }
          break;
      }
    }
    current = next;
  }
  return current;
}

function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function render(nodes: Node[], scope: unknown, root: unknown): string {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'text') out += n.text;
    else if (n.t === 'path')
      out += n.paths
        .flatMap((p) => evaluate(p, scope, root))
        .map(text)
        .join(' ');
    else for (const item of evaluate(n.path, scope, root)) out += render(n.body, item, root);
  }
  return out;
}

/** Renders `template` over `data`. */
export function renderJsonPath(template: string, data: unknown): string {
  return render(parseJsonPath(template), data, data);
}
