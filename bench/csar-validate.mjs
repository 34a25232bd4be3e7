#!/usr/bin/env node
// Package validation benchmark: builds a ~2 GB CSAR holding a 1.9 GB image
// (stored, as vnfpkg-build stores images) and a 100 MB tar, then times
// openPackage + checkCsarStructure (every declared hash checked, every
// member read through) beside `sha256sum` of the same zip, and reports the
// validator's peak RSS. Goal: at most 1.2x the sha256sum time, 200 MiB peak.
//
// Everything is written under one temp dir, removed at the end. Needs about
// 4.1 GB free in the temp folder (the tree and the zip). RUNS (default 3)
// sets how many timed runs of each are taken; medians are reported.
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes, createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { once } from 'node:events';

const RUNS = Number(process.env.RUNS ?? 3);
const MiB = 1024 * 1024;
const IMAGE_MIB = Number(process.env.IMAGE_MIB ?? 1900);
const TAR_MIB = Number(process.env.TAR_MIB ?? 100);
const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-csar-'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Writes `mib` MiB from 16 random 1 MiB blocks in a fixed rotation, returning its SHA-256. */
async function writeBlocks(path, mib) {
  const blocks = Array.from({ length: 16 }, () => randomBytes(MiB));
  const out = createWriteStream(path);
  const hash = createHash('sha256');
  for (let i = 0; i < mib; i++) {
    const b = blocks[(i * 7) % 16];
    hash.update(b);
    if (!out.write(b)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'close');
  return hash.digest('hex');
}

try {
  // The csar room, bundled to one ESM file the child processes import.
  const esbuild = await import(join(root, 'node_modules', 'esbuild', 'lib', 'main.js'));
  const entry = join(work, 'entry.ts');
  writeFileSync(
    entry,
    [
      `export { openPackage } from ${JSON.stringify(join(root, 'src/csar/open-package.ts'))};`,
      `export { checkCsarStructure } from ${JSON.stringify(join(root, 'src/csar/check-structure.ts'))};`,
      `export { buildCsar } from ${JSON.stringify(join(root, 'src/csar/build.ts'))};`,
    ].join('\n'),
  );
  const lib = join(work, 'csar.mjs');
  await esbuild.build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: lib, logLevel: 'error' });

  const tree = join(work, 'tree');
  const files = {
    'TOSCA-Metadata/TOSCA.meta':
      'TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\nCreated-By: bench\nEntry-Definitions: Definitions/top.yaml\nETSI-Entry-Manifest: manifest.mf\n\n' +
      'Name: Files/images/disk.qcow2\nContent-Type: application/x-iso9066-image\n',
    'manifest.mf':
      'metadata:\n  vnf_provider_id: bench\n  vnf_product_name: bench\n  vnf_release_date_time: 2024-01-01T00:00:00Z\n  vnf_package_version: 1.0\n\n' +
      'Source: Definitions/top.yaml\n\nSource: Files/images/disk.qcow2\n\nSource: Files/images/app.tar\n',
    'Definitions/top.yaml': 'tosca_definitions_version: tosca_simple_yaml_1_2\n',
  };
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, p)), { recursive: true });
    writeFileSync(join(tree, p), c);
  }
  mkdirSync(join(tree, 'Files/images'), { recursive: true });
  console.error(`generating ${IMAGE_MIB} MiB image and ${TAR_MIB} MiB tar in ${work} ...`);
  await writeBlocks(join(tree, 'Files/images/disk.qcow2'), IMAGE_MIB);
  await writeBlocks(join(tree, 'Files/images/app.tar'), TAR_MIB);

  const zip = join(work, 'bench.csar');
  const child = (script) => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 16 * MiB });
    if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  };
  const built = child(`
    const { buildCsar } = await import(${JSON.stringify(lib)});
    const t = performance.now();
    const r = await buildCsar(${JSON.stringify(tree)}, ${JSON.stringify(zip)});
    console.log(JSON.stringify({ ms: performance.now() - t, entries: r.entries, bytes: r.bytes, maxRssKiB: process.resourceUsage().maxRSS }));
  `);
  rmSync(tree, { recursive: true, force: true });
  console.error(`built ${built.bytes} bytes, ${built.entries} entries in ${(built.ms / 1000).toFixed(1)} s (peak RSS ${(built.maxRssKiB / 1024).toFixed(0)} MiB)`);

  const validate = () =>
    child(`
      const { openPackage, checkCsarStructure } = await import(${JSON.stringify(lib)});
      const t = performance.now();
      const files = await openPackage(${JSON.stringify(zip)});
      const { findings } = await checkCsarStructure(files);
      await files.close();
      console.log(JSON.stringify({ ms: performance.now() - t, findings, maxRssKiB: process.resourceUsage().maxRSS }));
    `);
  const sha256sum = () => {
    const t = performance.now();
    execFileSync('sha256sum', [zip], { stdio: 'ignore' });
    return performance.now() - t;
  };

  // coreutils may hash without the CPU's SHA extensions; OpenSSL's figure shows what the hardware allows.
  const opensslDgst = () => {
    const t = performance.now();
    const r = spawnSync('openssl', ['dgst', '-sha256', zip], { stdio: 'ignore' });
    return r.status === 0 ? performance.now() - t : NaN;
  };

  // Warm the page cache for both, then interleave the timed runs.
  sha256sum();
  const first = validate();
  if (first.findings.some((f) => f.severity === 'error')) throw new Error(`the generated package does not validate: ${JSON.stringify(first.findings)}`);
  const v = [];
  const s = [];
  const o = [];
  const rss = [];
  for (let i = 0; i < RUNS; i++) {
    const r = validate();
    v.push(r.ms);
    rss.push(r.maxRssKiB);
    s.push(sha256sum());
    o.push(opensslDgst());
  }
  const vm = median(v);
  const sm = median(s);
  const size = statSync(zip).size;
  console.log(`csar validation, ${(size / 1e9).toFixed(2)} GB package (${IMAGE_MIB} MiB image), ${RUNS} runs, medians (node ${process.version})`);
  console.log(`  checkCsarStructure  ${(vm / 1000).toFixed(2)} s  (${(size / MiB / (vm / 1000)).toFixed(0)} MiB/s)`);
  console.log(`  sha256sum           ${(sm / 1000).toFixed(2)} s  (${(size / MiB / (sm / 1000)).toFixed(0)} MiB/s)`);
  const om = median(o);
  if (!Number.isNaN(om)) console.log(`  openssl dgst        ${(om / 1000).toFixed(2)} s  (${(size / MiB / (om / 1000)).toFixed(0)} MiB/s, for reference)`);
  console.log(`  time ratio          ${(vm / sm).toFixed(2)}x sha256sum${Number.isNaN(om) ? '' : `, ${(vm / om).toFixed(2)}x openssl`}   (goal <= 1.2x sha256sum)`);
  console.log(`  peak RSS            ${(Math.max(...rss) / 1024).toFixed(0)} MiB   (goal <= 200 MiB)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
