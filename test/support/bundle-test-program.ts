/**
 * Bundles a TypeScript test program (and the vnfm sources it imports) into
 * one CommonJS file that `node` runs as a process of its own: a second
 * client beside the test. Each source file keeps its own import.meta.url,
 * so what vnfm finds beside its sources (the SQLite addon, the PostgreSQL
 * worker) it finds as in the tests.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

export async function bundleTestProgram(entry: string): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'vnfm-prog-')), 'program.cjs');
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: out,
    external: ['*.node', 'cpu-features', 'pg-native', 'esbuild'],
    logLevel: 'error',
    plugins: [
      {
        name: 'own-import-meta',
        setup(build) {
          build.onLoad({ filter: /\/(src|test)\/.*\.ts$/ }, (args) => ({
            contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
            loader: 'ts',
          }));
        },
      },
    ],
  });
  return out;
}
