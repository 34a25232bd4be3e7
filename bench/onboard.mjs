#!/usr/bin/env node
// Onboarding against its anchors, in one run: a ~1 GB CSAR (the basic-cnf
// sample plus a big image stored as vnfpkg-build stores images, its SHA-256
// declared in TOSCA.meta) is onboarded with `bin/vnfm vnfpkg-onboard` beside
// `bin/vnfm vnfpkg-validate` of the same zip (the integrity check onboarding
// must do anyway) and `openssl dgst -sha256` of it (reading and hashing the
// bytes once, what the hardware allows). Goals: onboard <= 1.15x validate and
// <= 1.35x openssl dgst.
//
// Every round runs each command once, in a rotated order (interleaved, so
// a neighbour's load falls on all of them alike); medians of wall time and
// of CPU (user + system, all threads, from GNU time) are printed with the
// load average before and after, and `node -e 0` measured in the same run.
//
// VNFM_BENCH_BEFORE=<dir of another vnfm checkout, built> adds that build's
// onboard and validate to the same rounds: before/after side by side.
// ROUNDS (default 9) and IMAGE_MIB (default 1000) size the run. The package
// and the stores live under one temp dir, removed at the end.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { appendFileSync, cpSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const IMAGE_MIB = Number(process.env.IMAGE_MIB ?? 1000);
const MiB = 1024 * 1024;
const root = resolve(import.meta.dirname, '..');
const before = process.env.VNFM_BENCH_BEFORE ? resolve(process.env.VNFM_BENCH_BEFORE) : undefined;
const work = mkdtempSync(join(tmpdir(), 'vnfm-bench-onboard-'));

const median = (xs) => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Writes `mib` MiB of random 1 MiB blocks in a fixed rotation (incompressible, as a disk image mostly is). */
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
}

/** Wall and CPU milliseconds of a command, through GNU time (its CPU counts every thread of the process). */
function timed(cmd, args, env = process.env) {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'cpu %U %S', cmd, ...args], { encoding: 'utf8', env, maxBuffer: 64 * MiB });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const line = r.stderr
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('cpu '));
  const [u, s] = line.slice(4).split(' ').map(Number);
  return { ms, cpuMs: (u + s) * 1000, stdout: r.stdout };
}

try {
  const tree = join(work, 'tree');
  cpSync(join(root, 'csar-samples/basic-cnf/package'), tree, { recursive: true });
  appendFileSync(join(tree, 'TOSCA-Metadata/TOSCA.meta'), '\nName: Files/images/disk.qcow2\nContent-Type: application/x-iso9066-image\n');
  mkdirSync(join(tree, 'Files/images'), { recursive: true });
  console.error(`generating a ${IMAGE_MIB} MiB image in ${work} ...`);
  await writeBlocks(join(tree, 'Files/images/disk.qcow2'), IMAGE_MIB);
  const zip = join(work, 'bench.csar');
  const node = process.execPath;
  timed(node, [join(root, 'bin/vnfm'), 'vnfpkg-build', tree, '--file', zip, '-q'], { ...process.env, VNFM_HOME: join(work, 'build-home') });
  rmSync(tree, { recursive: true, force: true });
  const size = statSync(zip).size;

  const builds = [{ name: 'this build', dir: root }];
  if (before) {
    if (!existsSync(join(before, 'build/vnfm.cjs'))) throw new Error(`${before} has no build/vnfm.cjs: run node scripts/bundle.mjs there first`);
    builds.push({ name: 'before', dir: before });
  }
  const commands = [
    { name: 'node -e 0', run: () => timed(node, ['-e', '0']) },
    { name: 'openssl dgst -sha256', run: () => timed('openssl', ['dgst', '-sha256', zip]) },
  ];
  for (const b of builds) {
    const home = join(work, `home-${commands.length}`);
    const env = { ...process.env, VNFM_HOME: home };
    const bin = join(b.dir, 'bin/vnfm');
    commands.push({ name: `validate (${b.name})`, run: () => timed(node, [bin, 'vnfpkg-validate', zip, '-q'], env) });
    commands.push({
      name: `onboard (${b.name})`,
      run: () => {
        const r = timed(node, [bin, 'vnfpkg-onboard', zip, '-q'], env);
        // Not timed: the package goes, so that the next round onboards into the same store again.
        timed(node, [bin, 'vnfpkg-delete', r.stdout.trim(), '--yes'], env);
        return r;
      },
      home,
    });
    // Warm: the page cache holds the zip, each launcher its code cache, each store exists.
    commands.at(-1).run();
    commands.at(-2).run();
  }
  const load0 = loadavg();
  const results = new Map(commands.map((c) => [c.name, { ms: [], cpuMs: [] }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < commands.length; i++) {
      const c = commands[(round + i) % commands.length];
      const r = c.run();
      results.get(c.name).ms.push(r.ms);
      results.get(c.name).cpuMs.push(r.cpuMs);
    }
  }
  const load1 = loadavg();
  for (const c of commands) {
    if (c.home && existsSync(join(c.home, 'packages'))) {
      const left = readdirSync(join(c.home, 'packages')).filter((n) => !n.startsWith('.'));
      if (left.length > 0) throw new Error(`${c.name} left packages behind: ${left.join(', ')}`);
    }
  }
  const m = (name, key = 'ms') => median(results.get(name)[key]);
  const s = (x) => `${(x / 1000).toFixed(2)} s`;
  console.log(`onboarding a ${(size / 1e9).toFixed(2)} GB package (${IMAGE_MIB} MiB image), ${ROUNDS} interleaved rounds, medians (node ${process.version}, SQLite store)`);
  console.log(`  load average        ${load0.map((x) => x.toFixed(2)).join(' ')} before, ${load1.map((x) => x.toFixed(2)).join(' ')} after`);
  for (const c of commands) console.log(`  ${c.name.padEnd(22)} ${s(m(c.name))} wall, ${s(m(c.name, 'cpuMs'))} CPU`);
  for (const b of builds) {
    const ob = m(`onboard (${b.name})`);
    const v = m(`validate (${b.name})`);
    const o = m('openssl dgst -sha256');
    console.log(
      `  ${b.name.padEnd(10)} onboard ${(ob / v).toFixed(2)}x validate (goal <= 1.15x), ${(ob / o).toFixed(2)}x openssl dgst (goal <= 1.35x); CPU ${(m(`onboard (${b.name})`, 'cpuMs') / m(`validate (${b.name})`, 'cpuMs')).toFixed(2)}x validate's`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
