/**
 * Manual pages from the commands' own help: vnfm(1) with the global options
 * and every command, and vnfm-<command>(1) with one command's usage,
 * arguments, options and the text its help adds after them (examples, notes).
 * The same commander definitions that print `--help` write them, so the two
 * never disagree. scripts/man.mjs writes them into build/man/ for the npm
 * package and the .deb.
 */
import type { Command, Help } from 'commander';
import { ExitCode } from '../errors.js';

export interface ManPage {
  /** The file name: vnfm.1 or vnfm-<command>.1. */
  file: string;
  text: string;
}

export interface ManOptions {
  version: string;
  /** The date shown in the page footer (YYYY-MM-DD), or empty. */
  date: string;
}

/** What each exit status means, in short (the README's "Exit codes" has the whole story). */
const EXIT_STATUS: Array<[number, string]> = [
  [ExitCode.ok, 'success'],
  [ExitCode.failed, 'the operation failed; a failed LCM operation is left FAILED_TEMP'],
  [ExitCode.usage, 'usage or validation error (bad flags, bad input file); nothing was changed'],
  [ExitCode.notFound, 'not found: an unknown VIM, package, VNF instance or operation occurrence'],
  [ExitCode.conflict, 'conflict: a name already taken, a package in use, or the state of what the command acts on; nothing was changed'],
  [ExitCode.secretKey, 'the master key is missing, malformed or not the store\u2019s key'],
  [ExitCode.vimCheck, 'a VIM (or the shared store\u2019s database) did not answer or refused the credentials'],
  [ExitCode.timeout, 'timed out'],
  [ExitCode.interrupted, 'interrupted (Ctrl-C); a running LCM operation is left FAILED_TEMP'],
  [ExitCode.terminated, 'terminated (SIGTERM)'],
];

const ENVIRONMENT: Array<[string, string]> = [
  ['VNFM_HOME', 'the state directory (default ~/.vnfm): the SQLite store, onboarded packages, the master key, the sandbox\u2019s files'],
  ['VNFM_MASTER_KEY, VNFM_MASTER_KEY_COMMAND', 'the master keys the stored secrets are encrypted with (else $VNFM_HOME/master.key)'],
  ['VNFM_DATABASE_URL', 'the shared store on PostgreSQL (else database: in $VNFM_HOME/config.yaml, else SQLite)'],
  ['VNFM_HELM', 'the helm binary for Helm CNFs (default: helm on PATH)'],
  ['NO_COLOR', 'never colour the output'],
];

/** Text made safe for roff: backslashes escaped, a leading dot or quote kept from being read as a request. */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .split('\n')
    .map((line) => (/^[.']/.test(line) ? `\\&${line}` : line))
    .join('\n');
}

/** A whole paragraph's text on one line: man wraps it to the reader's terminal. */
const unwrap = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

function header(title: string, opts: ManOptions): string[] {
  return [
    `.\\" Generated from vnfm's command help by scripts/man.mjs; edit the commands' help, not this file.`,
    `.TH ${title.toUpperCase().replace(/-/g, '\\-')} 1 "${opts.date}" "vnfm ${opts.version}" "vnfm Manual"`,
  ];
}

/** `.TP` entries: a bold term, its description below. */
function tagged(items: Array<[term: string, description: string]>): string[] {
  return items.flatMap(([term, description]) => ['.TP', `.B ${roff(term)}`, roff(unwrap(description))]);
}

/**
 * The text a command's help prints after its options (`addHelpText('after', …)`), as sections:
 * an unindented line ending with ':' starts one ("Examples:", "Package scripts: …").
 */
function afterText(cmd: Command): string {
  let text = '';
  // commander's Command is an EventEmitter (addHelpText listens on it), which its typings leave out.
  (cmd as unknown as NodeJS.EventEmitter).emit('afterHelp', { error: false, command: cmd, write: (s: string) => (text += s) });
  return text;
}

function afterSections(text: string, nested = false): string[] {
  const lines: string[] = [];
  const blocks = text.split(/\n\s*\n/).map((b) => b.replace(/^\n+|\s+$/g, ''));
  for (const block of blocks) {
    if (block === '') continue;
    const heading = /^([A-Z][^\n:]*):(?:\n|$| )/.exec(block);
    let body = block;
    if (heading) {
      lines.push(...(nested ? ['.PP', `.B ${roff(heading[1]!)}:`] : [`.SH ${roff(heading[1]!.toUpperCase())}`]));
      body = block.slice(heading[0].length).replace(/^\n/, '');
      // "Package scripts: a hook …": the heading's sentence goes on as the section's first word.
      if (!body.startsWith(' ')) body = body.charAt(0).toUpperCase() + body.slice(1);
    } else if (lines.length === 0 && !nested) {
      lines.push('.SH NOTES');
    }
    if (body.trim() === '') continue;
    if (body.split('\n').every((l) => l.startsWith('  ') || l.trim() === '')) {
      // Examples and other indented lines are kept as they are.
      lines.push('.PP', '.nf', ...body.split('\n').map((l) => roff(l.replace(/^ {2}/, ''))), '.fi');
    } else {
      lines.push('.PP', roff(unwrap(body)));
    }
  }
  return lines;
}

/** The public (listed) subcommands, in the order of the help. */
function visibleCommands(program: Command, helper: Help): Command[] {
  return helper.visibleCommands(program).filter((c) => c.name() !== 'help');
}

function commandPage(cmd: Command, opts: ManOptions): ManPage {
  const helper = cmd.createHelp();
  const name = `vnfm-${cmd.name()}`;
  const description = helper.commandDescription(cmd);
  const lines = [
    ...header(name, opts),
    '.SH NAME',
    `${roff(name)} \\- ${roff(unwrap(description.split('\n')[0]!))}`,
    '.SH SYNOPSIS',
    `.B ${roff(helper.commandUsage(cmd))}`,
    '.SH DESCRIPTION',
    roff(unwrap(description)),
  ];
  const args = helper.visibleArguments(cmd);
  if (args.length > 0) lines.push('.SH ARGUMENTS', ...tagged(args.map((a) => [helper.argumentTerm(a), helper.argumentDescription(a)])));
  const options = helper.visibleOptions(cmd);
  if (options.length > 0) lines.push('.SH OPTIONS', ...tagged(options.map((o) => [helper.optionTerm(o), helper.optionDescription(o)])));
  lines.push(...afterSections(afterText(cmd)));
  lines.push('.SH SEE ALSO', '.BR vnfm (1)');
  return { file: `${name}.1`, text: lines.join('\n') + '\n' };
}

/** One command in vnfm(1): its usage as a subsection, then what its own page holds. */
function commandSection(cmd: Command): string[] {
  const helper = cmd.createHelp();
  const lines = ['.SS ' + roff(helper.commandUsage(cmd)), roff(unwrap(helper.commandDescription(cmd)))];
  const args = helper.visibleArguments(cmd);
  const options = helper.visibleOptions(cmd).filter((o) => o.long !== '--help');
  if (args.length > 0) lines.push('.PP', '.B Arguments:', '.RS', ...tagged(args.map((a) => [helper.argumentTerm(a), helper.argumentDescription(a)])), '.RE');
  if (options.length > 0) lines.push('.PP', '.B Options:', '.RS', ...tagged(options.map((o) => [helper.optionTerm(o), helper.optionDescription(o)])), '.RE');
  lines.push(...afterSections(afterText(cmd), true));
  return lines;
}

function mainPage(program: Command, commands: Command[], opts: ManOptions): ManPage {
  const helper = program.createHelp();
  const lines = [
    ...header('vnfm', opts),
    '.SH NAME',
    `vnfm \\- ${roff(unwrap(helper.commandDescription(program)).replace(/\.$/, ''))}`,
    '.SH SYNOPSIS',
    '.B vnfm',
    '[\\fIoptions\\fR] \\fIcommand\\fR [\\fIargs\\fR]',
    '.br',
    '.B vnfm',
    '\\fIcommand\\fR \\fB\\-\\-help\\fR',
    '.SH DESCRIPTION',
    roff(unwrap(helper.commandDescription(program))),
    'Every command is described below (and by \\fBvnfm \\fIcommand\\fB \\-\\-help\\fR); each has a page of its own too, \\fBvnfm\\-\\fIcommand\\fR(1).',
    '.SH OPTIONS',
    ...tagged(helper.visibleOptions(program).map((o) => [helper.optionTerm(o), helper.optionDescription(o)])),
    '.SH COMMANDS',
    ...commands.flatMap((c) => commandSection(c)),
    '.SH ENVIRONMENT',
    ...tagged(ENVIRONMENT),
    '.SH EXIT STATUS',
    ...tagged(EXIT_STATUS.map(([code, meaning]) => [String(code), meaning])),
    '.SH SEE ALSO',
    commands.map((c) => `.BR vnfm\\-${roff(c.name())} (1)`).join(',\n'),
  ];
  return { file: 'vnfm.1', text: lines.join('\n') + '\n' };
}

/** vnfm.1 and one page per listed command of `program` (built with every command). */
export function renderManPages(program: Command, opts: ManOptions): ManPage[] {
  const commands = visibleCommands(program, program.createHelp());
  return [mainPage(program, commands, opts), ...commands.map((c) => commandPage(c, opts))];
}
