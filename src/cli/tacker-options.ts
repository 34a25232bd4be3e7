/**
 * Tacker's (openstackclient's) output options on a vnfm command line: `-f
 * json` / `--format json` and `--sort-column NAME` with `--sort-ascending` or
 * `--sort-descending`. Commander refuses them as unknown options; the hint
 * here names vnfm's own form, for the command typed.
 */
import { OUTPUT_FORMATS } from './output/printer.js';

/** What the command typed takes: whether it has -o and --sort. */
export interface CommandOptions {
  output: boolean;
  sort: boolean;
}

/** The value given with `flag` on the command line: attached (`-fjson`, `--format=json`) or the next word. */
function valueOf(argv: readonly string[], flag: string, short: string, long: string): string | undefined {
  if (flag.startsWith(`${long}=`)) return flag.slice(long.length + 1);
  if (flag.startsWith(short) && flag.length > short.length && !flag.startsWith('--')) return flag.slice(short.length);
  const next = argv[argv.indexOf(flag) + 1];
  return next !== undefined && !next.startsWith('-') ? next : undefined;
}

/**
 * The hint for commander's "unknown option 'X'" message when X is Tacker's
 * form of one of vnfm's options; undefined for any other message.
 */
export function tackerOptionHint(message: string, argv: readonly string[], takes: CommandOptions | undefined): string | undefined {
  const flag = /unknown option '([^']+)'/.exec(message)?.[1];
  if (flag === undefined) return undefined;
  if (/^-f(?!-)/.test(flag) || flag === '--format' || flag.startsWith('--format=')) {
    if (takes && !takes.output) return `${flag} is Tacker's output format; this command prints no formatted result`;
    const value = valueOf(argv, flag, '-f', '--format');
    const formats = `${OUTPUT_FORMATS.join(', ')}, jsonpath=TEMPLATE`;
    if (value !== undefined && (OUTPUT_FORMATS as readonly string[]).includes(value)) return `vnfm's form is -o ${value} (Tacker's -f ${value})`;
    if (value === 'csv' || value === 'shell') return `vnfm has no ${value} format: use -o json, or -o value -c FIELD (bare values); vnfm's formats are ${formats}`;
    return `vnfm's form is -o FORMAT (Tacker's -f FORMAT); its formats are ${formats}`;
  }
  if (flag === '--sort-column' || flag.startsWith('--sort-column=') || flag === '--sort-ascending' || flag === '--sort-descending') {
    if (takes && !takes.sort) return `${flag.replace(/=.*/, '')} is Tacker's sorting of a list; this command prints no list (the list commands take --sort KEY[:desc])`;
    const column = flag.startsWith('--sort-') && flag !== '--sort-column' && !flag.startsWith('--sort-column=') ? undefined : valueOf(argv, flag, '--sort-column', '--sort-column');
    const desc = argv.includes('--sort-descending') ? ':desc' : '';
    return `vnfm's form is --sort ${column ?? 'KEY'}${desc} (Tacker's --sort-column KEY, --sort-descending is KEY:desc; several keys comma-separated)`;
  }
  return undefined;
}
