/**
 * terminalSafe (cli/terminal-text.ts): every character a terminal acts on
 * is shown escaped, every other is left alone, and long text costs one pass.
 */
import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/cli/terminal-text.js';

const hex = (code: number) => `\\x${code.toString(16).padStart(2, '0')}`;

describe('terminalSafe', () => {
  it('escapes every C0 control but newline and tab, and DEL, in text of several lines', () => {
    for (let code = 0; code < 0x20; code++) {
      const c = String.fromCharCode(code);
      const want = c === '\n' || c === '\t' ? c : c === '\r' ? '\\r' : hex(code);
      expect(terminalSafe(`a${c}b`)).toBe(`a${want}b`);
    }
    expect(terminalSafe('a\x7fb')).toBe('a\\x7fb');
  });

  it('escapes every C1 control (U+0080-U+009F), which some terminals obey in UTF-8 too', () => {
    for (let code = 0x80; code <= 0x9f; code++) expect(terminalSafe(`a${String.fromCharCode(code)}b`)).toBe(`a${hex(code)}b`);
    // CSI as one character: ESC [ 2 J in C1 form.
    expect(terminalSafe('\u009b2J')).toBe('\\x9b2J');
  });

  it('escapes the bidirectional controls: embeddings, overrides, isolates and marks', () => {
    const bidi = [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c];
    for (const code of bidi) expect(terminalSafe(`a${String.fromCharCode(code)}b`)).toBe(`a\\u${code.toString(16).padStart(4, '0')}b`);
    // The classic: a file name that reads "exe.txt" but is "txt.exe".
    expect(terminalSafe('invoice\u202etxt.exe')).toBe('invoice\\u202etxt.exe');
  });

  it('shows the sequences of the issue as text: OSC 52 (clipboard), OSC 0 (title), ED (clear screen)', () => {
    expect(terminalSafe('\x1b]52;c;ZWNobyBwd25lZA==\x07')).toBe('\\x1b]52;c;ZWNobyBwd25lZA==\\x07');
    expect(terminalSafe('\x1b]0;owned\x1b\\')).toBe('\\x1b]0;owned\\x1b\\');
    expect(terminalSafe('\x1b[2J\x1b[H')).toBe('\\x1b[2J\\x1b[H');
    // A carriage return that would let "ok" overwrite "FAILED".
    expect(terminalSafe('FAILED\rok    ')).toBe('FAILED\\rok    ');
  });

  it('keeps a CRLF line break in text of several lines, but not a lone carriage return', () => {
    expect(terminalSafe('one\r\ntwo\r')).toBe('one\r\ntwo\\r');
    expect(terminalSafe('a\r\r\nb')).toBe('a\\r\r\nb');
  });

  it('on one line (a table cell) escapes newlines and every carriage return as well, and keeps tab', () => {
    // A description that would forge a row of a show table.
    expect(terminalSafe('a\ninstantiationState   INSTANTIATED', { oneLine: true })).toBe('a\\ninstantiationState   INSTANTIATED');
    expect(terminalSafe('a\tb\r\nc\x1b[31m\x0b', { oneLine: true })).toBe('a\tb\\r\\nc\\x1b[31m\\x0b');
    for (let code = 0; code < 0x20; code++) {
      const c = String.fromCharCode(code);
      expect(terminalSafe(c, { oneLine: true })).toBe(c === '\t' ? c : c === '\n' ? '\\n' : c === '\r' ? '\\r' : hex(code));
    }
  });

  it('leaves ordinary text alone: ASCII, accents, CJK, emoji (surrogate pairs), zero-width joiners, NBSP', () => {
    for (const text of ['vim-k8s_1.0 (edge) "quoted" \\x1b as typed', 'café über ñ', '東京リージョン 边缘', '🚀 👩‍💻 🇯🇵', 'a\u00a0b', 'עברית العربية', '']) {
      expect(terminalSafe(text)).toBe(text);
      expect(terminalSafe(text, { oneLine: true })).toBe(text);
    }
    expect(terminalSafe('line one\n\tline two\n')).toBe('line one\n\tline two\n');
  });

  it('takes one linear pass over long text, clean or full of controls', () => {
    const clean = 'abcdefgh東京🚀'.repeat(200_000);
    expect(terminalSafe(clean)).toBe(clean);
    const hostile = '\x1b'.repeat(1_000_000);
    const out = terminalSafe(hostile, { oneLine: true });
    expect(out.length).toBe(4_000_000);
    expect(out.startsWith('\\x1b\\x1b')).toBe(true);
    // A pattern that would make a backtracking matcher quadratic: carriage returns without their newline.
    expect(terminalSafe('\r'.repeat(1_000_000)).length).toBe(2_000_000);
  });
});
