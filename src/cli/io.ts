/**
 * The terminal: where data goes (stdout), where everything else goes
 * (stderr), and whether colour and prompts are allowed.
 */
import { colors, type Colors } from './colors.js';

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

  /** Data for stdout: tables, JSON, YAML. */
  out(text: string): void {
    this.streams.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }

  /** A progress or result message, on stderr. */
  info(message: string): void {
    this.streams.stderr.write(message + '\n');
  }

  success(message: string): void {
    this.streams.stderr.write(this.color.green(message) + '\n');
  }

  warn(message: string): void {
    this.streams.stderr.write(this.color.yellow('warning: ') + message + '\n');
  }

  error(message: string): void {
    this.streams.stderr.write(this.color.red('error: ') + message + '\n');
  }

  hint(message: string): void {
    this.streams.stderr.write(this.color.dim('hint: ') + message + '\n');
  }

  debugLog(message: string): void {
    if (this.debug) this.streams.stderr.write(this.color.dim('debug: ' + message) + '\n');
  }
}
