/**
 * Text that others wrote (names, descriptions, messages that quote them, a
 * package script's output) made harmless for a terminal. A terminal obeys
 * the control characters in what it is given: OSC 52 sets the clipboard, OSC
 * 0 the window title, `ESC[2J` clears the screen, a carriage return or a
 * right-to-left override (U+202E) makes what follows hide or reorder what
 * went before. Each such character is shown instead, escaped as `\x1b` or
 * `\u202e`; every other character (accents, CJK, emoji) is left as it is.
 *
 * Where it applies (io.ts and the printer): messages on stderr and tables
 * always, as they are read by people, now or later from a saved copy;
 * -o value, name and jsonpath, and op-log, only on a terminal, as a program
 * reading them needs the exact bytes; -o json and yaml never (JSON escapes
 * the C0 controls itself, YAML quotes them).
 */

/**
 * The C0 controls, DEL and the C1 controls; the bidirectional embeddings,
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069) and marks (U+200E,
 * U+200F, U+061C). Tab is kept (it moves the cursor on, over nothing), as
 * are newlines in text of several lines, and a carriage return there only as
 * the first half of a CRLF line break.
 */
const UNSAFE_IN_LINES = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;
/** The same, and newlines and every carriage return: a table's cell or a line redrawn in place stays one line. */
const UNSAFE_IN_ONE_LINE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r' };

function escaped(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every character a terminal would act on shown escaped.
 * `oneLine`: newlines and carriage returns too (a table's cell, a line of
 * the live view); else the text keeps its lines.
 */
export function terminalSafe(text: string, opts: { oneLine?: boolean } = {}): string {
  // One pass, and no new string for text that needs nothing (almost all of it).
  return text.replace(opts.oneLine ? UNSAFE_IN_ONE_LINE : UNSAFE_IN_LINES, escaped);
}
