// An ESLint rule: no loop of run-time imports between vnfm's source files.
// A loop makes the order modules initialise in depend on which one is loaded
// first (a class or constant read before it is defined is undefined); the
// rooms' arrows (eslint.config.js) keep loops out between folders, and this
// rule keeps them out between files. Type-only imports vanish at run time
// and are not followed; `import()` loads later, once every module has
// initialised, and is not followed either.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const STATIC_IMPORT = /^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s+['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

/** Whether an import's clause brings only types (`import type`, or every name marked `type`). */
function typeOnly(typeKeyword, clause) {
  if (typeKeyword) return true;
  const names = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!names) return false;
  const parts = names[1]
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return parts.length > 0 && parts.every((p) => p.startsWith('type '));
}

/** The .ts file a relative specifier of `from` names (`./x.js` → x.ts, a folder → its index.ts). */
function target(from, specifier, files) {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')]) if (files.has(candidate)) return candidate;
  return undefined;
}

function sources(folder, into = new Set()) {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) sources(path, into);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) into.add(path);
  }
  return into;
}

/** Every file's run-time imports, by file; read once per lint run. */
const graphs = new Map();
function runtimeGraph(root) {
  let graph = graphs.get(root);
  if (graph) return graph;
  const files = sources(root);
  graph = new Map();
  for (const file of files) {
    const edges = new Set();
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (m[4] === undefined && typeOnly(m[1], m[2])) continue;
      const to = target(file, m[3] ?? m[4], files);
      if (to) edges.add(to);
    }
    graph.set(file, edges);
  }
  graphs.set(root, graph);
  return graph;
}

/** A shortest run-time path from `start` to `goal`, or undefined. */
function path(graph, start, goal) {
  const before = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length > 0) {
    const at = queue.shift();
    if (at === goal) {
      const steps = [];
      for (let step = at; step !== undefined; step = before.get(step)) steps.unshift(step);
      return steps;
    }
    for (const next of graph.get(at) ?? []) {
      if (!before.has(next)) {
        before.set(next, at);
        queue.push(next);
      }
    }
  }
  return undefined;
}

const rule = {
  meta: {
    type: 'problem',
    docs: { description: 'no loop of run-time imports between source files' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { cycle: 'import loop: {{loop}} (move what both need to a module of its own, or import a type with `import type`)' },
  },
  create(context) {
    const root = resolve(context.cwd, context.options[0]?.root ?? 'src');
    const file = context.filename;
    const check = (node) => {
      if (node.source === null || node.source === undefined || typeof node.source.value !== 'string' || !node.source.value.startsWith('.')) return;
      if (node.importKind === 'type' || node.exportKind === 'type') return;
      if (node.specifiers?.length > 0 && node.specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type')) return;
      const graph = runtimeGraph(root);
      if (!graph.has(file)) return;
      const to = target(file, node.source.value, new Set(graph.keys()));
      const back = to && path(graph, to, file);
      if (back) context.report({ node, messageId: 'cycle', data: { loop: [file, ...back].map((f) => relative(root, f)).join(' → ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

export default { rules: { 'no-import-cycle': rule } };
