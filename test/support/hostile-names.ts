/**
 * Names a shared store may hold, written by another client or an older
 * version: what completion, the name rules and the store must survive.
 */

/**
 * Printable names with every character a shell gives a meaning to, at the
 * start and inside: each must reach a command as exactly itself, running
 * nothing (the `touch` would leave a file).
 */
export const SHELL_HOSTILE_NAMES = [
  'zz$(touch PWNED)',
  'zz`touch PWNED`',
  'a b',
  "it's",
  'say "hi"',
  'star*',
  '~root',
  '-rf',
  'back\\slash',
  'x\\',
  'semi;touch PWNED',
  'a|b&c>d<e',
  '{a,b}',
  '!bang',
  '!!',
  '[ab]?',
  '#hash',
  '%1',
  '=ls',
  'x=y',
  'a:b',
  'x:y\\:z',
  '$HOME',
  '${IFS}',
  "'",
  '"',
  '  lead',
  'trail ',
  'café ☕',
  '^a^b',
];

/**
 * Names with characters no name may hold (controls, DEL, C1, bidi
 * overrides, separators): refused where a name is set, never offered by
 * completion. The "zz" they start with is what is typed before TAB.
 */
export const UNPRINTABLE_NAMES = [
  'zz\n$(touch PWNED)',
  'zz\t$(touch PWNED)',
  'zz\r$(touch PWNED)',
  'zz\x1b]52;c;cHduZWQ=\x07',
  'zz\x1b[2J',
  'zz\x7f',
  'zz\u0085',
  'zz\u202egnp.exe',
  'zz\u2066x',
  'zz\u2028x',
];
