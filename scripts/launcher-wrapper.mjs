// Node's CommonJS wrapper, which scripts/bundle.mjs writes around the main
// bundle once, so bin/vnfm compiles the file as it is (V8 would otherwise copy
// the whole text into one new string with the wrapper at every start), and
// which scripts/dist.mjs takes off again for the single executable, whose Node
// wraps its main script itself. bin/vnfm recognises the same opening.
export const LAUNCHER_WRAPPER = ['(function (exports, require, module, __filename, __dirname) { ', '\n});'];
