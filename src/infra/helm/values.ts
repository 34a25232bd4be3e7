/**
 * `--set`-style values (`a.b=1`, `a\.b`, `list[0]`) turned into the nested
 * object a values file holds, so that values reach Helm in a private file
 * rather than on the command line.
 */
import { UsageError, echo } from '../../errors.js';
import type { HelmSetValues } from './contract.js';

type Segment = string | number;

export function nestSetValues(set: HelmSetValues): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(set)) {
    const path = parseKey(key);
    let node: Record<string | number, unknown> = root;
    path.forEach((seg, i) => {
      if (i === path.length - 1) {
        node[seg] = value;
        return;
      }
      const wantArray = typeof path[i + 1] === 'number';
      const existing = node[seg];
      if (existing === undefined || existing === null || typeof existing !== 'object' || Array.isArray(existing) !== wantArray) {
        node[seg] = wantArray ? [] : {};
      }
      node = node[seg] as Record<string | number, unknown>;
    });
  }
  // Holes of `list[2]` without `list[0..1]` become null, as `--set` makes them.
  return JSON.parse(JSON.stringify(root)) as Record<string, unknown>;
}

function parseKey(key: string): Segment[] {
  const out: Segment[] = [];
  let name = '';
  let named = false;
  const bad = (why: string) =>
    new UsageError(`helm value name ${echo(key)} ${why}`, { hint: 'use a dotted path such as vdu1.replicaCount, a\\.b for a key with a dot, list[0] for an element' });
  for (let i = 0; i < key.length; i++) {
    const c = key[i]!;
    if (c === '\\' && key[i + 1] === '.') {
      name += '.';
      named = true;
      i++;
    } else if (c === '.') {
      if (!named) throw bad('has an empty part');
      out.push(name);
      name = '';
      named = false;
    } else if (c === '[') {
      const end = key.indexOf(']', i);
      const index = end < 0 ? NaN : Number(key.slice(i + 1, end));
      if (!Number.isInteger(index) || index < 0 || index > 65535) throw bad('has a bad [index]');
      if (named) out.push(name);
      else if (out.length === 0 || typeof out[out.length - 1] !== 'number') throw bad('has an index without a name');
      out.push(index);
      name = '';
      named = false;
      i = end;
      if (key[i + 1] === '.') {
        i++;
        if (i === key.length - 1) throw bad('ends with a dot');
      } else if (i + 1 < key.length && key[i + 1] !== '[') throw bad('has text after an index');
    } else {
      name += c;
      named = true;
    }
  }
  if (named) out.push(name);
  else if (out.length === 0) throw bad('is empty');
  else if (typeof out[out.length - 1] !== 'number') throw bad('ends with a dot');
  return out;
}
