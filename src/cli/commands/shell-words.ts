/**
 * How bash reads the words of a command line, and how a completion is
 * written so that bash reads it back as exactly that text: what the bash
 * completion script (`vnfm completion bash`) asks `vnfm __complete` for.
 * Readline inserts a candidate as it is given, so a value from the store
 * (a VIM named `zz$(touch x)`) must come quoted, for the quote the cursor
 * is in. zsh and fish quote what they insert themselves.
 */

/** The quote open at a point of the line: none, '…', "…" or $'…'. */
export type QuoteState = '' | "'" | '"' | "$'";

export interface ShellWords {
  /** The words, quotes and escapes removed; nothing expanded (`$x` stays `$x`). */
  words: string[];
  /** Whether the last word is still being typed (the line does not end between words). */
  open: boolean;
  /** Where the last word starts in the line (its length when none is open). */
  start: number;
  /** The quote open at the end of the line. */
  quote: QuoteState;
}

const SIMPLE_ESCAPES: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' };

/** A backslash escape of $'…' at `at` (after the backslash): its text and how many characters it took. */
function ansiEscape(line: string, at: number): [string, number] {
  const c = line[at]!;
  if (SIMPLE_ESCAPES[c] !== undefined) return [SIMPLE_ESCAPES[c], 1];
  const numeric = /^(?:[0-7]{1,3}|x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8})/.exec(line.slice(at, at + 9))?.[0];
  if (!numeric) return ['\\' + c, 1];
  const code = /^[0-7]/.test(numeric) ? parseInt(numeric, 8) : parseInt(numeric.slice(1), 16);
  return [code <= 0x10ffff ? String.fromCodePoint(code) : '', numeric.length];
}

/** What the backslash at `at` (outside quotes, or inside "…") escapes: the next character; a newline is a line continuation. */
function escaped(line: string, at: number): string {
  return line[at + 1] === '\n' ? '' : (line[at + 1] ?? '');
}

/**
 * The words of a bash command line as bash reads them: split at unquoted
 * blanks, with '…', "…", $'…' and backslashes removed. Nothing is expanded
 * or run: this is only what the words say.
 */
export function splitBashWords(line: string): ShellWords {
  const words: string[] = [];
  let word: string | undefined;
  let start = line.length;
  let quote: QuoteState = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'" || quote === "$'") {
      if (c === "'") quote = '';
      else if (c === '\\' && quote === "$'" && i + 1 < line.length) {
        const [text, used] = ansiEscape(line, i + 1);
        word += text;
        i += used;
      } else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = '';
      else if (c === '\\' && i + 1 < line.length && '$`"\\\n'.includes(line[i + 1]!)) word += escaped(line, i++);
      else word += c;
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === '\\' && line[i + 1] === '\n') {
      // A line continuation: nothing, not even the start of a word.
      i++;
    } else {
      if (word === undefined) [word, start] = ['', i];
      if (c === '\\') word += escaped(line, i++);
      else if (c === "'" || c === '"') quote = c;
      else if (c === '$' && (line[i + 1] === "'" || line[i + 1] === '"')) quote = line[++i] === "'" ? "$'" : '"';
      else word += c;
    }
  }
  if (word !== undefined) words.push(word);
  else start = line.length;
  return { words, open: word !== undefined, start, quote };
}

/** Characters bash reads as themselves anywhere in a word (and any character past ASCII: controls are never offered). */
const PLAIN = /[A-Za-z0-9_./%+,@:=-]|[^\x00-\x7f]/u;

/** `text` written to be read as itself inside the quote `quote` (outside any: each special character after a backslash, as printf %q writes it). */
export function quoteForBash(text: string, quote: QuoteState = ''): string {
  switch (quote) {
    case "'":
      return text.replaceAll("'", `'\\''`);
    case "$'":
      return text.replace(/[\\']/g, '\\$&');
    case '"':
      // A "!" is closed out of the quotes: history expansion would read it inside them, and a backslash before it would stay.
      return text.replace(/[\\$`"]/g, '\\$&').replaceAll('!', '"\\!"');
    default:
      return [...text].map((c) => (PLAIN.test(c) ? c : '\\' + c)).join('');
  }
}

/**
 * What bash's readline is to put in place of `replaced` (the end of `line`:
 * what it takes for the word being completed, after the last word break or
 * the opening quote) for each whole word `full` the cursor's word may
 * become: the rest of that word, quoted for the quote it goes into (readline
 * closes the quote itself). A word that does not go on from what is typed
 * before `replaced` is left out.
 */
export function bashReplacements(line: string, replaced: string, fulls: string[]): string[] {
  // readline and bash agree on where the word starts; should they not, the whole word is replaced.
  const kept = line.endsWith(replaced) ? line.slice(0, line.length - replaced.length) : line.slice(0, splitBashWords(line).start);
  const before = splitBashWords(kept);
  const typed = before.open ? before.words.at(-1)! : '';
  return fulls.filter((f) => f.startsWith(typed) && f.length > typed.length).map((f) => quoteForBash(f.slice(typed.length), before.quote));
}
