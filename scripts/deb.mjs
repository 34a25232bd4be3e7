#!/usr/bin/env node
// Wraps the single executable into a Debian package, for machines with no
// network and no Node.js: dist/vnfm_<version>_<arch>.deb, made of
//
//   /usr/bin/vnfm                                      the executable (npm run dist)
//   /usr/share/bash-completion/completions/vnfm        vnfm completion bash
//   /usr/share/zsh/vendor-completions/_vnfm            vnfm completion zsh
//   /usr/share/fish/vendor_completions.d/vnfm.fish     vnfm completion fish
//   /usr/share/man/man1/vnfm.1.gz, vnfm-<command>.1.gz  scripts/man.mjs
//   /usr/share/doc/vnfm/copyright, changelog.gz        the license, CHANGELOG.md
//
// Run through `npm run deb` (which builds the executable and the manual
// pages first). Needs dpkg-deb; no root (files are recorded as root's).
//
//   node scripts/deb.mjs [--out DIR]
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const outArg = process.argv.indexOf('--out');
const outDir = outArg > 0 ? resolve(process.argv[outArg + 1]) : join(root, 'dist');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const DEB_ARCH = { x64: 'amd64', arm64: 'arm64' }[process.arch];
const exe = join(root, 'dist', `vnfm-${process.platform}-${process.arch}`);
const manDir = join(root, 'build', 'man');
const step = (what) => process.stderr.write(`deb: ${what}\n`);

if (process.platform !== 'linux' || !DEB_ARCH) {
  console.error(`deb: a .deb is built on Linux x64 or arm64 (this is ${process.platform}-${process.arch})`);
  process.exit(1);
}
for (const [file, fix] of [
  [exe, 'npm run dist'],
  [join(manDir, 'vnfm.1'), 'node scripts/man.mjs'],
]) {
  if (!existsSync(file)) {
    console.error(`deb: ${relative(root, file)} is missing; run ${fix} (npm run deb does both)`);
    process.exit(1);
  }
}

// Every file gets the time of the commit it is built from: the same tree gives the same package.
const epoch = Number(
  process.env.SOURCE_DATE_EPOCH ??
    (() => {
      try {
        return execFileSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      } catch {
        return Math.floor(Date.now() / 1000);
      }
    })(),
);
const gzip = (data) => gzipSync(data, { level: 9 }); // no name and no time in the header: reproducible

const name = `vnfm_${pkg.version}_${DEB_ARCH}`;
// Staged outside build/, which a concurrent `node scripts/bundle.mjs` tidies.
const work = mkdtempSync(join(tmpdir(), 'vnfm-deb-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const stage = join(work, name);
const put = (rel, data, mode = 0o644) => {
  const file = join(stage, rel);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, data);
  chmodSync(file, mode);
};

mkdirSync(join(stage, 'usr', 'bin'), { recursive: true });
copyFileSync(exe, join(stage, 'usr', 'bin', 'vnfm'));
chmodSync(join(stage, 'usr', 'bin', 'vnfm'), 0o755);

// The completion scripts, from the executable being packaged (a scratch home: it opens no store for this).
const scratch = join(work, 'home');
const completion = (shell) => execFileSync(exe, ['completion', shell], { env: { PATH: '', HOME: scratch, VNFM_HOME: join(scratch, '.vnfm') }, encoding: 'utf8' });
put('usr/share/bash-completion/completions/vnfm', completion('bash'));
put('usr/share/zsh/vendor-completions/_vnfm', completion('zsh'));
put('usr/share/fish/vendor_completions.d/vnfm.fish', completion('fish'));
rmSync(scratch, { recursive: true, force: true });

const pages = readdirSync(manDir).filter((f) => f.endsWith('.1'));
for (const page of pages) put(`usr/share/man/man1/${page}.gz`, gzip(readFileSync(join(manDir, page))));

// Debian's machine-readable copyright format; the license text is the system's copy, as Debian policy asks.
put(
  'usr/share/doc/vnfm/copyright',
  `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: vnfm
Source: the vnfm source tree (package.json, version ${pkg.version})

Files: *
Copyright: the vnfm authors
License: Apache-2.0
Comment: /usr/bin/vnfm embeds Node.js (MIT and the licenses listed in its
 LICENSE file), vnfm's npm dependencies (each under its own license, MIT,
 ISC, Apache-2.0 or BSD) and SQLite (public domain).

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License");
 you may not use this file except in compliance with the License.
 You may obtain a copy of the License at
 .
     http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
`,
);
put('usr/share/doc/vnfm/changelog.gz', gzip(readFileSync(join(root, 'CHANGELOG.md'))));

// Installed-Size is in KiB, of the files as installed.
let bytes = 0;
const files = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) walk(p);
    else {
      bytes += statSync(p).size;
      files.push(p);
    }
  }
};
walk(join(stage, 'usr'));

put(
  'DEBIAN/control',
  [
    'Package: vnfm',
    `Version: ${pkg.version}`,
    `Architecture: ${DEB_ARCH}`,
    'Maintainer: vnfm maintainers <vnfm@localhost>',
    `Installed-Size: ${Math.ceil(bytes / 1024)}`,
    // The embedded SQLite addon is compiled against glibc 2.34 and libstdc++ of GCC 11 (README, "One executable").
    'Depends: libc6 (>= 2.34), libstdc++6 (>= 11)',
    'Section: admin',
    'Priority: optional',
    `Description: ${pkg.description.replace(/\n/g, ' ')}`,
    ' vnfm manages VNF packages (ETSI SOL004 CSARs), VIMs (Kubernetes clusters,',
    ' OpenStack projects) and VNF lifecycle operations (instantiate, scale, heal,',
    ' change package, terminate) from one command line, with Tacker-compatible',
    ' request bodies. This package holds one self-contained executable: no',
    ' Node.js or network access is needed. Try it with: vnfm demo',
    '',
  ].join('\n'),
);
put(
  'DEBIAN/md5sums',
  files
    .sort()
    .map((f) => `${execFileSync('md5sum', [f], { encoding: 'utf8' }).split(' ')[0]}  ${relative(stage, f)}\n`)
    .join(''),
);

const touch = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) {
      chmodSync(p, 0o755);
      touch(p);
    }
    utimesSync(p, epoch, epoch);
  }
};
touch(stage);

mkdirSync(outDir, { recursive: true });
const deb = join(outDir, `${name}.deb`);
rmSync(deb, { force: true });
// xz: the smallest package (the executable is most of it), and about a minute of CPU. VNFM_DEB_COMPRESSION=none
// (or gzip) builds in seconds, for tests that install the package and throw it away.
const compression = process.env.VNFM_DEB_COMPRESSION ?? 'xz';
if (!['xz', 'gzip', 'none'].includes(compression)) {
  console.error(`deb: VNFM_DEB_COMPRESSION is xz, gzip or none, not ${compression}`);
  process.exit(2);
}
execFileSync('dpkg-deb', ['--root-owner-group', `-Z${compression}`, '--build', stage, deb], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) },
});
step(`${relative(root, deb) || deb} (${(statSync(deb).size / 1e6).toFixed(1)} MB, ${files.length} files)`);
