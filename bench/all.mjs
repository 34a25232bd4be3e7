#!/usr/bin/env node
// Runs every benchmark in bench/ (`npm run bench`, which builds the bundle and
// the single executable first), one after the other.
//
// Some take minutes and write gigabytes: they run only when asked, with
// `npm run bench -- --all` or VNFM_BENCH_ALL=1. One script alone:
// `node bench/<name>.mjs`.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

/**
 * Long benchmarks: csar-validate.mjs builds and validates a 2 GB package;
 * onboard.mjs onboards a 1 GB package beside its validation and openssl;
 * openstack-lifecycle.mjs starts Keystone and Heat and runs Heat stacks;
 * sandbox-scale.mjs loads 5,000 objects and runs 500-object CNFs.
 */
const LONG = new Set(['csar-validate.mjs', 'onboard.mjs', 'openstack-lifecycle.mjs', 'sandbox-scale.mjs']);
/** Need root (network namespaces and a bridge for simulated nodes): registry-connections.mjs. */
const ROOT = new Set(['registry-connections.mjs']);

const all = process.argv.includes('--all') || process.env.VNFM_BENCH_ALL === '1';
const self = basename(import.meta.filename);
const scripts = readdirSync(import.meta.dirname)
  .filter((f) => f.endsWith('.mjs') && f !== self)
  .sort();
let failed = false;
for (const script of scripts) {
  if (LONG.has(script) && !all) {
    console.log(`\n== ${script}: skipped (takes minutes; run with npm run bench -- --all)`);
    continue;
  }
  if (ROOT.has(script) && process.getuid?.() !== 0) {
    console.log(`\n== ${script}: skipped (needs root: it creates network namespaces)`);
    continue;
  }
  console.log(`\n== ${script}`);
  const r = spawnSync(process.execPath, [join(import.meta.dirname, script)], { stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`bench: ${script} failed (exit ${r.status ?? r.signal})`);
    failed = true;
  }
}
process.exitCode = failed ? 1 : 0;
