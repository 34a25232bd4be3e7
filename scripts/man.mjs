#!/usr/bin/env node
// Writes the manual pages into build/man/: vnfm.1 and vnfm-<command>.1, made
// by src/cli/man.ts from the commands' own definitions (what --help prints).
// The npm package (package.json directories.man) and the .deb ship them.
//
//   node scripts/man.mjs [--out DIR]
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = resolve(import.meta.dirname, '..');
const outArg = process.argv.indexOf('--out');
const out = outArg > 0 ? resolve(process.argv[outArg + 1]) : join(root, 'build', 'man');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The date of the commit the pages are built from (reproducible), else today. */
function pageDate() {
  if (process.env.SOURCE_DATE_EPOCH) return new Date(Number(process.env.SOURCE_DATE_EPOCH) * 1000).toISOString().slice(0, 10);
  try {
    return execFileSync('git', ['log', '-1', '--format=%cs'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

// The program is built as `vnfm --help` builds it: every command, no store opened, no colour.
const entry = `
import { PassThrough } from 'node:stream';
import { createContext } from './src/cli/context.ts';
import { IO } from './src/cli/io.ts';
import { renderManPages } from './src/cli/man.ts';
import { buildProgram } from './src/cli/program.ts';
export async function manPages(opts) {
  const env = { HOME: '/nonexistent', NO_COLOR: '1' };
  const streams = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough() };
  const ctx = createContext(new IO(streams, env, { noColor: true }), env, '/');
  return renderManPages(await buildProgram(ctx), opts);
}
`;
const tmp = join(root, 'build', `.man-${process.pid}.mjs`);
mkdirSync(join(root, 'build'), { recursive: true });
try {
  await esbuild.build({
    stdin: { contents: entry, resolveDir: root, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: tmp,
    logLevel: 'warning',
  });
  const { manPages } = await import(pathToFileURL(tmp).href);
  const pages = await manPages({ version, date: pageDate() });
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const page of pages) writeFileSync(join(out, page.file), page.text);
  process.stderr.write(`man: ${readdirSync(out).length} pages in ${out}\n`);
} finally {
  rmSync(tmp, { force: true });
}
