// V8's code cache of vnfm's bundle, one per command, under VNFM_HOME/cache:
// what bin/vnfm and the single executable's main (scripts/sea-main.cjs, which
// dist.mjs gives a copy of this file) compile the bundle with.
//
// A cache holds the functions the run that wrote it compiled, and V8 reads
// all of it at every start, so each command keeps its own: `vim-list` is
// quickest with a cache of what `vim-list` runs (8 ms less than with one
// `--version` wrote). V8 checks a cache against the source and its own
// version and flags and ignores one that does not match. A cache is written
// at exit when there was none or V8 refused it, only into a VNFM_HOME that
// already exists (the store makes it, 0700), so `vnfm --version` on a new
// machine creates nothing, and not after a usage error (exit 2), so a
// mistyped command leaves none; a new build's first write removes the old
// build's caches. A cache is code: read only from a real directory and file
// of this user that no one else can write.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

/** The command word (the first argument that is not one of the program's own options), as a file name's part. */
function commandWord(args) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--debug' || a === '--no-color' || a.startsWith('--database-url=')) continue;
    if (a === '--database-url') {
      i++;
      continue;
    }
    return /^-?-?[a-z][a-z0-9-]{0,39}$/.test(a) ? a.replace(/^-+/, '') : 'other';
  }
  return 'none';
}

const trusted = (p, dir) => {
  const st = fs.lstatSync(p);
  const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
  return (dir ? st.isDirectory() : st.isFile()) && mine && (st.mode & 0o022) === 0;
};

/**
 * `code` (the bundle inside Node's wrapper) compiled with this command's
 * cache, else with `fallback` (cached data to try until the command has its
 * own). `build` starts the names of this build's caches; `family` matches the
 * names of every build's caches of the same launcher (the others are left alone).
 */
function compileCached({ code, filename, build, family, fallback }) {
  const home = process.env.VNFM_HOME ? path.resolve(process.env.VNFM_HOME) : path.join(process.env.HOME || require('node:os').homedir(), '.vnfm');
  const cacheDir = path.join(home, 'cache');
  const cacheName = `${build}${commandWord(process.argv.slice(2))}.v8`;
  let own;
  try {
    if (trusted(cacheDir, true) && trusted(path.join(cacheDir, cacheName), false)) own = fs.readFileSync(path.join(cacheDir, cacheName));
  } catch {
    // No cache yet: the fallback or the source, and the cache written at exit.
  }
  const script = new vm.Script(code, { filename, cachedData: own ?? fallback });
  if (!own || script.cachedDataRejected) {
    // At exit, so the cache holds the functions this command compiled too.
    process.once('exit', (status) => {
      try {
        if (status === 2 || !fs.existsSync(home)) return;
        fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
        if (!trusted(cacheDir, true)) return;
        for (const old of fs.readdirSync(cacheDir)) if (family.test(old) && !old.startsWith(build)) fs.rmSync(path.join(cacheDir, old), { force: true });
        const tmp = path.join(cacheDir, `.${cacheName}.${process.pid}`);
        fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(tmp, path.join(cacheDir, cacheName));
      } catch {
        // A read-only or full home: the next start compiles from source again.
      }
    });
  }
  return script;
}

module.exports = { compileCached };
