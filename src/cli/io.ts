/**
 * The terminal: where data goes (stdout), where everything else goes
 * (stderr), and whether colour and prompts are allowed. Messages reach
 * stderr with their control characters escaped (terminal-text.ts): they
 * quote names and descriptions that others wrote.
 */
import { colors, type Colors } from './colors.js';
import { terminalSafe } from './terminal-text.js';

export interface Streams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

export class IO {
  readonly color: Colors;
  /** Colour on stdout (tables), only when stdout itself is a terminal. */
  readonly dataColor: Colors;
  debug = false;

  constructor(
    readonly streams: Streams,
    env: Record<string, string | undefined>,
    opts: { noColor?: boolean } = {},
  ) {
    const allowed = !opts.noColor && env['NO_COLOR'] === undefined && env['TERM'] !== 'dumb';
    this.color = colors(allowed && Boolean(streams.stderr.isTTY));
    this.dataColor = colors(allowed && Boolean(streams.stdout.isTTY));
  }

  get stdoutIsTTY(): boolean {
    return Boolean(this.streams.stdout.isTTY);
  }

  /** Prompts are allowed only when a person can answer them. */
  get canPrompt(): boolean {
    return Boolean(this.streams.stdin.isTTY && this.streams.stderr.isTTY);
  }

  /** Data for stdout, written as it is: JSON, YAML, a table already made safe. */
  out(text: string): void {
    this.streams.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }

  /**
   * Text for stdout that a program may read (-o value, name, jsonpath; a
   * file's content): exact in a pipe or a file, its control characters
   * escaped on a terminal.
   */
  outText(text: string): void {
    this.out(this.stdoutIsTTY ? terminalSafe(text) : text);
  }

  /** A progress or result message, on stderr; `style` on a terminal that takes colour. */
  info(message: string, style?: 'dim' | 'bold'): void {
    const text = terminalSafe(message);
    this.streams.stderr.write((style ? this.color[style](text) : text) + '\n');
  }

  success(message: string): void {
    this.streams.stderr.write(this.color.green(terminalSafe(message)) + '\n');
  }

  warn(message: string): void {
    this.streams.stderr.write(this.color.yellow('warning: ') + terminalSafe(message) + '\n');
  }

  error(message: string): void {
    this.streams.stderr.write(this.color.red('error: ') + terminalSafe(message) + '\n');
  }

  hint(message: string): void {
    this.streams.stderr.write(this.color.dim('hint: ') + terminalSafe(message) + '\n');
  }

  debugLog(message: string): void {
    if (this.debug) this.streams.stderr.write(this.color.dim('debug: ' + terminalSafe(message)) + '\n');
  }
}
