/**
 * The five terminal styles vnfm uses, as the basic ANSI codes every terminal
 * knows (what chalk writes at its level 1), or plain text when colour is off.
 * Kept here rather than taken from a colour library: such libraries probe the
 * terminal when loaded (Node's tty and net modules), a cost every command
 * paid at start-up for text that is mostly not coloured.
 */

export interface Colors {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
}

/** [open, close] codes; bold and dim share their close, as in every terminal. */
const STYLES = {
  bold: ['\x1b[1m', '\x1b[22m'],
  dim: ['\x1b[2m', '\x1b[22m'],
  red: ['\x1b[31m', '\x1b[39m'],
  green: ['\x1b[32m', '\x1b[39m'],
  yellow: ['\x1b[33m', '\x1b[39m'],
} as const;

/**
 * `text` in one style: a close code already inside it (a nested style of the
 * same kind) re-opens this one after it, and each line is closed and re-opened
 * around its break, so a pager or a cut line never leaves the terminal styled.
 */
function paint(open: string, close: string, text: string): string {
  if (text === '') return '';
  let body = text.includes(close) ? text.split(close).join(close + open) : text;
  if (body.includes('\n')) body = body.replace(/(\r?\n)/g, `${close}$1${open}`);
  return open + body + close;
}

const plain = (text: string): string => text;

export function colors(enabled: boolean): Colors {
  if (!enabled) return { enabled, bold: plain, dim: plain, red: plain, green: plain, yellow: plain };
  const style = (name: keyof typeof STYLES) => (text: string) => paint(STYLES[name][0], STYLES[name][1], text);
  return { enabled, bold: style('bold'), dim: style('dim'), red: style('red'), green: style('green'), yellow: style('yellow') };
}
