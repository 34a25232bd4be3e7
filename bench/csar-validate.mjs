#!/usr/bin/env node
// Package benchmark: builds a ~2 GB CSAR (the basic-cnf sample plus a
// 1.9 GB image, stored as vnfpkg-build stores images, and a 100 MB tar, both
// with their SHA-256 declared), then times
// - validation: openPackage + checkCsarStructure (every declared hash
//   checked, every member read through) beside `openssl dgst -sha256` and
//   `sha256sum` of the same zip, with the validator's peak RSS. Goals: at
//   most 1.2x openssl dgst, 200 MiB peak;
// - onboarding: the real program's `vnfpkg-onboard` (bin/vnfm, so
//   `npm run build` first) into a fresh VNFM_HOME, beside `cp` of the zip,
//   with the bytes it read and wrote (/proc/self/io of the process, its
//   threads included: rchar/wchar through system calls, read_bytes/
//   write_bytes from the disk) and what the store holds afterwards. Goal:
//   at most 1.5x cp, and one copy (the zip) in the store.
//
// Everything is written under one temp dir, removed at the end. Needs about
// 3 x the package size free in the temp folder. RUNS (default 3) sets how
// many timed runs of each are taken; medians are reported. For a quick run:
// IMAGE_MIB=300 TAR_MIB=20 RUNS=3 node bench/csar-validate.mjs
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

  // A package that onboards: the basic CNF sample, with the image and the tar listed in its TOSCA.meta (the builder hashes them).
  const tree = join(work, 'tree');
  cpSync(join(root, 'csar-samples/basic-cnf/package'), tree, { recursive: true });
  appendFileSync(
    join(tree, 'TOSCA-Metadata/TOSCA.meta'),
    '\nName: Files/images/disk.qcow2\nContent-Type: application/x-iso9066-image\n\nName: Files/images/app.tar\nContent-Type: application/x-tar\n',
  );
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
      const u0 = process.cpuUsage();
      const files = await openPackage(${JSON.stringify(zip)});
      const { findings } = await checkCsarStructure(files);
      await files.close();
      const u = process.cpuUsage(u0);
      console.log(JSON.stringify({ ms: performance.now() - t, cpuMs: (u.user + u.system) / 1000, findings, maxRssKiB: process.resourceUsage().maxRSS }));
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
  // CPU seconds (user + system) of a command, from GNU time when there is one: on a loaded machine they vary less than wall times.
  const cpuOf = (cmd, args) => {
    const r = spawnSync('/usr/bin/time', ['-f', '%U %S', cmd, ...args], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) return NaN;
    const [u, sys] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
    return (u + sys) * 1000;
  };

  // Warm the page cache for both, then interleave the timed runs.
  sha256sum();
  const first = validate();
  if (first.findings.some((f) => f.severity === 'error')) throw new Error(`the generated package does not validate: ${JSON.stringify(first.findings)}`);
  const v = [];
  const s = [];
  const o = [];
  const rss = [];
  const vc = [];
  const oc = [];
  for (let i = 0; i < RUNS; i++) {
    const r = validate();
    v.push(r.ms);
    vc.push(r.cpuMs);
    oc.push(cpuOf('openssl', ['dgst', '-sha256', zip]));
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
  console.log(`  time ratio          ${(vm / om).toFixed(2)}x openssl dgst   (goal <= 1.2x), ${(vm / sm).toFixed(2)}x sha256sum`);
  const vcm = median(vc);
  const ocm = median(oc);
  if (!Number.isNaN(ocm))
    console.log(
      `  CPU                 ${(vcm / 1000).toFixed(2)} s beside openssl dgst's ${(ocm / 1000).toFixed(2)} s (${(vcm / ocm).toFixed(2)}x; both threads of the validator)`,
    );
  console.log(`  peak RSS            ${(Math.max(...rss) / 1024).toFixed(0)} MiB   (goal <= 200 MiB)`);

  // Onboarding: the real program, its I/O read from /proc/self/io as it exits.
  const bin = join(root, 'bin/vnfm');
  if (!existsSync(join(root, 'build/vnfm.cjs'))) throw new Error('no build/vnfm.cjs: run npm run build first');
  const onboard = (n) => {
    const home = join(work, `home-${n}`);
    const io = join(work, `io-${n}.txt`);
    const script = `
      const fs = require('node:fs');
      process.on('exit', () => {
        const u = process.cpuUsage();
        fs.writeFileSync(${JSON.stringify(io)}, fs.readFileSync('/proc/self/io', 'utf8') + 'cpu_ms: ' + Math.round((u.user + u.system) / 1000) + '\\n');
      });
      process.argv = [process.execPath, ${JSON.stringify(bin)}, 'vnfpkg-onboard', ${JSON.stringify(zip)}, '-o', 'json'];
      require(${JSON.stringify(bin)});
    `;
    const t = performance.now();
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, VNFM_HOME: home }, maxBuffer: 16 * MiB });
    const ms = performance.now() - t;
    if (r.status !== 0) throw new Error(`vnfpkg-onboard failed (${r.status}): ${r.stderr}`);
    const id = JSON.parse(r.stdout).id;
    const counters = Object.fromEntries(
      readFileSync(io, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(': '))
        .map(([k, v]) => [k, Number(v)]),
    );
    const stored = readdirSync(join(home, 'packages', id));
    const storedBytes = stored.reduce((sum, f) => sum + duBytes(join(home, 'packages', id, f)), 0);
    rmSync(home, { recursive: true, force: true });
    return { ms, counters, stored, storedBytes };
  };
  const duBytes = (path) => Number(execFileSync('du', ['-sb', path], { encoding: 'utf8' }).split('\t')[0]);
  const cp = (n) => {
    const to = join(work, `cp-${n}.zip`);
    const t = performance.now();
    execFileSync('cp', [zip, to]);
    const ms = performance.now() - t;
    rmSync(to, { force: true });
    return ms;
  };
  const cpCpu = (n) => {
    const to = join(work, `cpu-${n}.zip`);
    const ms = cpuOf('cp', [zip, to]);
    rmSync(to, { force: true });
    return ms;
  };
  onboard('warm');
  const ob = [];
  const obc = [];
  const c = [];
  const cc = [];
  let last;
  for (let i = 0; i < RUNS; i++) {
    last = onboard(i);
    ob.push(last.ms);
    obc.push(last.counters.cpu_ms);
    c.push(cp(i));
    cc.push(cpCpu(i));
  }
  // From the disk: the page cache emptied (sync, then drop_caches, as root) before each run of either, so both
  // read the zip from the disk as an operator's first onboarding of a package just copied in does.
  const dropCaches = () => {
    try {
      execFileSync('sync');
      writeFileSync('/proc/sys/vm/drop_caches', '3\n');
      return true;
    } catch {
      return false;
    }
  };
  const cold = { ob: [], c: [] };
  if (dropCaches()) {
    for (let i = 0; i < RUNS; i++) {
      dropCaches();
      cold.ob.push(onboard(`cold-${i}`).ms);
      dropCaches();
      cold.c.push(cp(`cold-${i}`));
    }
  }
  const obm = median(ob);
  const cm = median(c);
  const GB = (b) => `${(b / 1e9).toFixed(2)} GB`;
  console.log(`onboarding (bin/vnfm vnfpkg-onboard into a fresh VNFM_HOME), ${RUNS} runs, medians`);
  console.log(`  vnfpkg-onboard      ${(obm / 1000).toFixed(2)} s   (validation above: ${(vm / 1000).toFixed(2)} s)`);
  console.log(`  cp of the zip       ${(cm / 1000).toFixed(2)} s`);
  console.log(
    `  time ratio          ${(obm / cm).toFixed(2)}x cp   (goal <= 1.5x); beyond validation: ${((obm - vm) / cm).toFixed(2)}x cp; ${(obm / om).toFixed(2)}x openssl dgst`,
  );
  console.log(`  CPU                 ${(median(obc) / 1000).toFixed(2)} s (start-up, store, validation, the copy's hash) beside cp's ${(median(cc) / 1000).toFixed(2)} s`);
  if (cold.ob.length) {
    const a = median(cold.ob);
    const b = median(cold.c);
    console.log(
      `  from the disk       vnfpkg-onboard ${(a / 1000).toFixed(2)} s, cp ${(b / 1000).toFixed(2)} s: ${(a / b).toFixed(2)}x cp   (goal <= 1.5x; page cache dropped before each run)`,
    );
  } else {
    console.log('  from the disk       not measured: /proc/sys/vm/drop_caches is not writable here (needs root)');
  }
  const k = last.counters;
  console.log(`  bytes (last run)    read ${GB(k.rchar)}, written ${GB(k.wchar)} (system calls; cp: ${GB(size)} each); from/to disk ${GB(k.read_bytes)} / ${GB(k.write_bytes)}`);
  console.log(`  the store holds     ${last.stored.join(', ')}: ${GB(last.storedBytes)} for a ${GB(size)} package   (goal: one copy)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
