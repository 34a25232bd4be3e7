/**
 * How the bash completion reads a command line and quotes what it offers
 * (src/cli/commands/shell-words.ts): bash itself reads each quoted word back,
 * and must get exactly the text, as one word, running nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashReplacements, quoteForBash, splitBashWords, type QuoteState } from '../../src/cli/commands/shell-words.js';
import { SHELL_HOSTILE_NAMES } from '../support/hostile-names.js';

const HOSTILE_NAMES = SHELL_HOSTILE_NAMES;

const dir = mkdtempSync(join(tmpdir(), 'vnfm-shell-words-'));

/** The words bash reads from `text`, run in a directory where anything that ran would leave a file. */
function bashReads(text: string): string[] {
  const out = execFileSync('bash', ['--norc', '--noprofile', '-c', `printf '%s\\0' ${text}`], { cwd: dir, encoding: 'utf8' });
  expect(existsSync(join(dir, 'PWNED')), text).toBe(false);
  return out.split('\0').slice(0, -1);
}

describe('quoteForBash', () => {
  const wrap: Record<QuoteState, [string, string]> = { '': ['', ''], "'": ["'", "'"], '"': ['"', '"'], "$'": ["$'", "'"] };
  it.each(Object.keys(wrap) as QuoteState[])('bash reads each name back whole, inside the quote %j, and runs nothing', (quote) => {
    const [open, close] = wrap[quote];
    for (const name of HOSTILE_NAMES) expect(bashReads(`${open}${quoteForBash(name, quote)}${close}`), name).toEqual([name]);
  });

  it('leaves plain names as they are, and quotes as printf %q does', () => {
    expect(quoteForBash('web-1.a_b')).toBe('web-1.a_b');
    expect(quoteForBash('zz$(touch PWNED)')).toBe('zz\\$\\(touch\\ PWNED\\)');
    expect(quoteForBash('~root')).toBe('\\~root');
  });
});

describe('splitBashWords', () => {
  it.each([
    ['vnfm vim-show ', ['vnfm', 'vim-show'], false, ''],
    ['vnfm vim-show we', ['vnfm', 'vim-show', 'we'], true, ''],
    ["vnfm vim-show 'my v", ['vnfm', 'vim-show', 'my v'], true, "'"],
    ['vnfm vim-show "a \\"b\\" \\$', ['vnfm', 'vim-show', 'a "b" $'], true, '"'],
    ['vnfm vim-show my\\ v', ['vnfm', 'vim-show', 'my v'], true, ''],
    ["vnfm x $'a\\tb\\'c\\x41'", ['vnfm', 'x', "a\tb'cA"], true, ''],
    ["vnfm x ab'cd'ef", ['vnfm', 'x', 'abcdef'], true, ''],
    ['vnfm x \\\n y', ['vnfm', 'x', 'y'], true, ''],
    ['vnfm --output=j', ['vnfm', '--output=j'], true, ''],
    ['vnfm $(touch PWNED) `x`', ['vnfm', '$(touch', 'PWNED)', '`x`'], true, ''],
  ] as const)('%j', (line, words, open, quote) => {
    expect(splitBashWords(line)).toMatchObject({ words, open, quote });
  });
});

describe('bashReplacements', () => {
  // `replaced` is what readline takes for the word (bash's $2): after the last word break (=, :, a quote...) or the opening quote.
  it.each([
    ['vnfm vim-show ', '', ['zz$(touch PWNED)'], ['zz\\$\\(touch\\ PWNED\\)']],
    ['vnfm vim-show zz', 'zz', ['zz$(touch PWNED)'], ['zz\\$\\(touch\\ PWNED\\)']],
    ['vnfm vim-show zz\\$', 'zz\\$', ['zz$(touch PWNED)'], ['zz\\$\\(touch\\ PWNED\\)']],
    ["vnfm vim-show 'zz", 'zz', ['zz$(touch PWNED)'], ['zz$(touch PWNED)']],
    ["vnfm vim-show 'it", 'it', ["it's"], ["it'\\''s"]],
    ['vnfm vim-show "zz', 'zz', ['zz$(touch PWNED)!'], ['zz\\$(touch PWNED)"\\!"']],
    ['vnfm vnf-list --output=', '', ['--output=json'], ['json']],
    ['vnfm vnf-list --output=j', 'j', ['--output=json'], ['json']],
    ['vnfm vim-show a:', '', ['a:b c'], ['b\\ c']],
    ['vnfm vim-show ~', '~', ['~root'], ['\\~root']],
  ] as const)('%j replacing %j', (line, replaced, fulls, expected) => {
    expect(bashReplacements(line, replaced, [...fulls])).toEqual(expected);
  });

  it('makes a line bash reads back as the whole name, whichever way its start was typed', () => {
    for (const name of HOSTILE_NAMES) {
      for (const typed of ['', quoteForBash(name.slice(0, 1)), `'${name.slice(0, 1).replaceAll("'", `'\\''`)}`, '"']) {
        const line = `vnfm vim-show ${typed}`;
        // readline's word: after an opening quote still open, else the whole word (no word break in these).
        const split = splitBashWords(line);
        const replaced = split.quote ? line.slice(line.lastIndexOf(split.quote.at(-1)!) + 1) : line.slice(split.start);
        // Nothing to add when the name is typed whole.
        const [insert = ''] = bashReplacements(line, replaced, [name]);
        // readline closes the quote it found the word in.
        const done = line.slice(0, line.length - replaced.length) + insert + (split.quote ? split.quote.at(-1)! : '');
        expect(bashReads(done.slice('vnfm '.length)), `${typed} → ${done}`).toEqual(['vim-show', name]);
      }
    }
  });
});
