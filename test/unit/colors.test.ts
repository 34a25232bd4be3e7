/**
 * Terminal styles: the codes a terminal gets, nesting and line breaks, and
 * plain text when colour is off.
 */
import { describe, expect, it } from 'vitest';
import { colors } from '../../src/cli/colors.js';

const on = colors(true);
const off = colors(false);

describe('terminal colours', () => {
  it('wraps text in the basic ANSI codes of each style', () => {
    expect(on.bold('a')).toBe('\x1b[1ma\x1b[22m');
    expect(on.dim('a')).toBe('\x1b[2ma\x1b[22m');
    expect(on.red('a')).toBe('\x1b[31ma\x1b[39m');
    expect(on.green('a')).toBe('\x1b[32ma\x1b[39m');
    expect(on.yellow('a')).toBe('\x1b[33ma\x1b[39m');
  });

  it('re-opens a style after a nested one of the same kind closes', () => {
    expect(on.red(`x ${on.green('ok')} y`)).toBe('\x1b[31mx \x1b[32mok\x1b[39m\x1b[31m y\x1b[39m');
    expect(on.bold(`a${on.dim('b')}c`)).toBe('\x1b[1ma\x1b[2mb\x1b[22m\x1b[1mc\x1b[22m');
  });

  it('closes each line before its break and re-opens after it (\\n and \\r\\n)', () => {
    expect(on.red('one\ntwo')).toBe('\x1b[31mone\x1b[39m\n\x1b[31mtwo\x1b[39m');
    expect(on.dim('one\r\ntwo\n')).toBe('\x1b[2mone\x1b[22m\r\n\x1b[2mtwo\x1b[22m\n\x1b[2m\x1b[22m');
  });

  it('leaves the empty text empty, and every text alone when colour is off', () => {
    expect(on.bold('')).toBe('');
    expect(off.red('x\ny')).toBe('x\ny');
    expect(off.bold(`a${on.dim('b')}`)).toBe('a\x1b[2mb\x1b[22m');
    expect([on.enabled, off.enabled]).toEqual([true, false]);
  });
});
