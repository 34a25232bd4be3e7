#!/usr/bin/env node
// `npm pack`'s preparation (package.json "prepack"), after the bundle and
// the manual pages are built: readies the one dependency the package
// bundles.
//
// The bundle (build/vnfm.cjs and build/chunks/) carries every JavaScript
// dependency; what it cannot carry is better-sqlite3's native addon, compiled
// for the machine it runs on. better-sqlite3 is therefore a bundled
// dependency (package.json bundleDependencies): the tarball holds its sources
// (SQLite's among them) and its small install-time helpers, so that
// `npm install -g vnfm-X.tgz --offline` needs no registry and no cache, and
// npm builds the addon at install (prebuild-install, then node-gyp; see the
// README's "Install").
//
// npm packs a bundled dependency as it lies in node_modules, build output
// included: the compiler's intermediate files (about 12 MB, rebuilt at
// install anyway) are removed here. The addon itself stays, so bin/vnfm in
// this tree keeps working.
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const build = join(root, 'node_modules', 'better-sqlite3', 'build');
if (!existsSync(join(build, 'Release', 'better_sqlite3.node'))) {
  console.error('prepack: node_modules/better-sqlite3 is not built; run npm ci');
  process.exit(1);
}
for (const rel of ['Release/obj', 'Release/obj.target', 'Release/.deps', 'Release/sqlite3.a', 'Release/test_extension.node', 'deps']) {
  rmSync(join(build, rel), { recursive: true, force: true });
}
