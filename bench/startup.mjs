#!/usr/bin/env node
// Start-up benchmark: `vnfm --version` and `vnfm vim-list` beside `node -e 0`.
// Reports, per command, the median wall time and the median CPU time
// (user + system of the child, from the shell's `times`, 10 ms resolution)
// over RUNS runs, interleaved so machine noise hits every command alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const RUNS = Number(process.env.RUNS ?? 40);
const root = resolve(import.meta.dirname, '..');
const bin = join(root, 'bin', 'vnfm');
const home = join(mkdtempSync(join(tmpdir(), 'vnfm-bench-')), 'home');
const env = { ...process.env, VNFM_HOME: home, NO_COLOR: '1' };

// A store with a few VIMs, so vim-list reads real rows.
const vimConfig = join(root, 'templates', 'vim-config-kubernetes.yaml');
for (let i = 0; i < 5; i++) {
  execFileSync(process.execPath, [bin, 'vim-register', '--no-check', '--config-file', vimConfig, `vim-${i}`], { env, stdio: 'ignore' });
}

const commands = {
  'node -e 0': [process.execPath, '-e', '0'],
  'vnfm --version': [process.execPath, bin, '--version'],
  'vnfm vim-list': [process.execPath, bin, 'vim-list'],
  'vnfm vim-list -o json': [process.execPath, bin, 'vim-list', '-o', 'json'],
};

const quote = (a) => `'${a.replace(/'/g, `'\\''`)}'`;
const toSeconds = (t) => {
  const m = /(\d+)m([\d.]+)s/.exec(t);
  return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
};
function sample(argv) {
  const start = process.hrtime.bigint();
  const r = spawnSync('bash', ['-c', `${argv.map(quote).join(' ')} >/dev/null 2>&1; times`], { env, encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - start) / 1e6;
  const children = r.stdout.trim().split('\n')[1]?.split(/\s+/) ?? [];
  return { wall, cpu: (toSeconds(children[0]) + toSeconds(children[1])) * 1000 };
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const results = Object.fromEntries(Object.keys(commands).map((k) => [k, { wall: [], cpu: [] }]));
for (const argv of Object.values(commands)) sample(argv); // warm the file cache
for (let i = 0; i < RUNS; i++) {
  for (const [name, argv] of Object.entries(commands)) {
    const s = sample(argv);
    results[name].wall.push(s.wall);
    results[name].cpu.push(s.cpu);
  }
}
const base = median(results['node -e 0'].cpu);
console.log(`start-up, ${RUNS} runs each, medians (node ${process.version})`);
console.log('command'.padEnd(24) + 'wall ms'.padStart(10) + 'cpu ms'.padStart(10) + '  cpu vs node -e 0');
for (const [name, r] of Object.entries(results)) {
  const cpu = median(r.cpu);
  console.log(name.padEnd(24) + median(r.wall).toFixed(1).padStart(10) + cpu.toFixed(0).padStart(10) + `  ${(cpu / base).toFixed(2)}x`);
}
