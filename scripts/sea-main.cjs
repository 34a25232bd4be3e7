// The single executable's main script. The bundle is one of its assets,
// compiled here with V8's code cache as bin/vnfm compiles it
// (bin/code-cache.cjs, which dist.mjs puts in front of this file as
// `codeCache`): one cache per command under VNFM_HOME/cache
// (vnfm-exe-<node>-<arch>-<bundle hash>-<command>.v8), written at the exit of
// a command's first run. Until a command has its own, the cache dist.mjs made
// when it built the executable is used: Node's own cache of a main script
// holds only what compiling it compiled, and every start of `vim-list` paid
// for compiling the rest (14 ms of CPU more than with its own cache).
// `vnfmBuild` (the bundle's hash) is set by dist.mjs too.
'use strict';

const sea = require('node:sea');
const path = require('node:path');

const raw = sea.getRawAsset('vnfm.cjs');
// ASCII (scripts/bundle.mjs sees to it): taken as one-byte text, and inside Node's wrapper already.
const code = Buffer.from(raw).latin1Slice(0, raw.byteLength);
const script = codeCache.compileCached({
  code,
  filename: process.execPath,
  build: `vnfm-exe-${process.version}-${process.arch}-${vnfmBuild}-`,
  family: /^vnfm-exe-.*\.v8$/,
  fallback: Buffer.from(sea.getRawAsset('vnfm.v8')),
});
const bundle = { exports: {}, filename: process.execPath, loaded: true };
script.runInThisContext().call(bundle.exports, bundle.exports, require, bundle, process.execPath, path.dirname(process.execPath));
