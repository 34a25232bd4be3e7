/**
 * `vnfm __complete -- WORD...` (hidden): what the shell completion scripts
 * (`vnfm completion bash|zsh|fish`) ask for the word being typed. The first
 * line says what the shell adds itself (`:files`, `:dirs` or `:none`); each
 * further line is a candidate, `value<TAB>description`, as it is: zsh and
 * fish quote what they insert. bash does not, so its script gives the line
 * as typed instead (`--line`, `--word`): vnfm splits it by bash's rules and
 * prints each candidate quoted for the quote the cursor is in
 * (shell-words.ts). Commands and options come from the command tree; values
 * from the choices of an option and from the store (VIMs, packages,
 * instances, occurrences, and the aspects and VNFCs of the instance named on
 * the line). A value holding a control character (which no name may hold;
 * the line protocol could not carry it either) is not offered. It reads the
 * store only, loads no driver, and says nothing on stderr: a completion that
 * fails offers nothing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command, type Option } from 'commander';
import type { Context } from '../context.js';
import { hasUnprintable } from '../../model/names.js';
import { bashReplacements, splitBashWords } from './shell-words.js';

export type Directive = 'files' | 'dirs' | 'none';

export interface Candidate {
  value: string;
  description?: string;
}

export interface Completion {
  directive: Directive;
  candidates: Candidate[];
  /** What the word being typed holds before the values (`--output=`): the whole word is this and a value. */
  prefix?: string;
}

/** The values the store offers, read only when asked for. */
export interface CompletionValues {
  vims(): Candidate[] | Promise<Candidate[]>;
  packages(): Candidate[] | Promise<Candidate[]>;
  vnfdIds(): Candidate[] | Promise<Candidate[]>;
  instances(): Candidate[] | Promise<Candidate[]>;
  opOccs(): Candidate[] | Promise<Candidate[]>;
  /** The scaling aspects of an instance (its scaleStatus), by id or name. */
  aspects(vnf: string): Candidate[] | Promise<Candidate[]>;
  /** The VNFC ids of an instance. */
  vnfcs(vnf: string): Candidate[] | Promise<Candidate[]>;
}

type ValueKind = 'vim' | 'package' | 'vnfdId' | 'vnf' | 'op' | 'aspect' | 'vnfc' | 'files' | 'dirs' | 'none';

/** What a positional argument takes, by its name in the command tree. */
const ARGUMENT_KINDS: Record<string, ValueKind> = {
  vim: 'vim',
  package: 'package',
  vnf: 'vnf',
  op: 'op',
  file: 'files',
  path: 'files',
  dir: 'dirs',
  'vnfd-id': 'vnfdId',
};

/** What an option's value is, by its attribute name; an option naming a <file> takes files. */
const OPTION_KINDS: Record<string, ValueKind> = {
  vim: 'vim',
  package: 'package',
  vnf: 'vnf',
  vnfdId: 'vnfdId',
  aspectId: 'aspect',
  vnfcInstance: 'vnfc',
  vnfc: 'vnfc',
};

const HELP: Candidate = { value: '--help', description: 'show help' };

function optionCandidates(options: readonly Option[]): Candidate[] {
  return options
    .filter((o) => !o.hidden && o.long)
    .map((o): Candidate => ({ value: o.long!, description: o.description }))
    .concat(HELP);
}

function findOption(options: readonly Option[], flag: string): Option | undefined {
  return options.find((o) => o.long === flag || o.short === flag);
}

function takesValue(o: Option): boolean {
  return o.required || o.optional;
}

/** The candidates for the last word of `words` (the words after `vnfm`; the last may be empty). */
export async function completeWords(program: Command, words: string[], values: CompletionValues): Promise<Completion> {
  const cur = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const globals = program.options;
  let sub: Command | undefined;
  const positionals: string[] = [];
  let pending: Option | undefined;
  let variadic: Option | undefined;
  let afterDashDash = false;
  let vnfArg: string | undefined;
  for (const w of before) {
    if (pending) {
      if (OPTION_KINDS[pending.attributeName()] === 'vnf') vnfArg ??= w;
      variadic = pending.variadic ? pending : undefined;
      pending = undefined;
      continue;
    }
    if (!afterDashDash && w === '--') {
      afterDashDash = true;
      variadic = undefined;
      continue;
    }
    if (!afterDashDash && w.startsWith('-') && w.length > 1) {
      variadic = undefined;
      const [flag, inline] = w.split(/=(.*)/s) as [string, string | undefined];
      const o = findOption(sub ? [...sub.options, ...globals] : globals, flag);
      if (o && takesValue(o) && inline === undefined) pending = o;
      continue;
    }
    if (variadic) continue;
    if (!sub) {
      sub = program.commands.find((c) => c.name() === w || c.aliases().includes(w));
      if (!sub) return { directive: 'none', candidates: [] };
      continue;
    }
    positionals.push(w);
  }
  if (!sub) {
    if (pending) return finish(await valuesOf(pending, undefined, values), cur);
    if (cur.startsWith('-')) return finish({ directive: 'none', candidates: optionCandidates(globals) }, cur);
    const commands = program.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
    return finish({ directive: 'none', candidates: commands.map((c) => ({ value: c.name(), description: c.description() })) }, cur);
  }
  const args = sub.registeredArguments;
  const vnfIndex = args.findIndex((a) => a.name() === 'vnf');
  const vnf = vnfArg ?? (vnfIndex >= 0 ? positionals[vnfIndex] : undefined);
  if (pending) return finish(await valuesOf(pending, vnf, values), cur);
  if (!afterDashDash && cur.startsWith('--') && cur.includes('=')) {
    const [flag, partial] = cur.split(/=(.*)/s) as [string, string];
    const o = findOption(sub.options, flag);
    if (!o || !takesValue(o)) return { directive: 'none', candidates: [] };
    return { ...finish(await valuesOf(o, vnf, values), partial), prefix: `${flag}=` };
  }
  if (!afterDashDash && cur.startsWith('-')) return finish({ directive: 'none', candidates: optionCandidates([...sub.options, ...globals]) }, cur);
  if (variadic) return finish(await valuesOf(variadic, vnf, values), cur);
  const last = args.at(-1);
  const arg = args[positionals.length] ?? (last?.variadic ? last : undefined);
  if (!arg) return { directive: 'none', candidates: [] };
  if (arg.argChoices) return finish({ directive: 'none', candidates: arg.argChoices.map((value) => ({ value })) }, cur);
  return finish(await lookup(ARGUMENT_KINDS[arg.name()] ?? 'none', vnf, values), cur);
}

async function valuesOf(o: Option, vnf: string | undefined, values: CompletionValues): Promise<Completion> {
  if (o.argChoices) return { directive: 'none', candidates: o.argChoices.map((value) => ({ value })) };
  const kind = OPTION_KINDS[o.attributeName()] ?? (/<(file|path)(\.\.\.)?>/.test(o.flags) ? 'files' : /<dir>/.test(o.flags) ? 'dirs' : 'none');
  return lookup(kind, vnf, values);
}

async function lookup(kind: ValueKind, vnf: string | undefined, values: CompletionValues): Promise<Completion> {
  switch (kind) {
    case 'files':
    case 'dirs':
    case 'none':
      return { directive: kind, candidates: [] };
    case 'vim':
      return { directive: 'none', candidates: await values.vims() };
    case 'package':
      return { directive: 'none', candidates: await values.packages() };
    case 'vnfdId':
      return { directive: 'none', candidates: await values.vnfdIds() };
    case 'vnf':
      return { directive: 'none', candidates: await values.instances() };
    case 'op':
      return { directive: 'none', candidates: await values.opOccs() };
    case 'aspect':
      return { directive: 'none', candidates: vnf ? await values.aspects(vnf) : [] };
    case 'vnfc':
      return { directive: 'none', candidates: vnf ? await values.vnfcs(vnf) : [] };
  }
}

/** Those that start with what is typed, each value once; none with a control character (names cannot hold one: another client wrote it). */
function finish(c: Completion, typed: string): Completion {
  const seen = new Set<string>();
  const candidates = c.candidates.filter((x) => x.value.startsWith(typed) && !hasUnprintable(x.value) && !seen.has(x.value) && seen.add(x.value));
  return { directive: c.directive, candidates };
}

/** The store's values; none when VNFM_HOME has no database yet (nothing is created). */
export async function storeValues(ctx: Context): Promise<CompletionValues> {
  const [{ DATABASE_FILE }, { readHomeConfig }] = await Promise.all([import('../../store/index.js'), import('../home-config.js')]);
  // A shared store (VNFM_DATABASE_URL, or database in config.yaml) is always there to read; a local one only once something made it.
  const shared = ctx.env['VNFM_DATABASE_URL'] || (await readHomeConfig(ctx.home).catch(() => undefined))?.database;
  if (!shared && !existsSync(join(ctx.home, DATABASE_FILE))) {
    const none = () => [];
    return { vims: none, packages: none, vnfdIds: none, instances: none, opOccs: none, aspects: none, vnfcs: none };
  }
  const store = await ctx.store();
  const named = (names: Map<string, string>, what: string): Candidate[] => [
    ...[...names].filter(([, name]) => name).map(([id, name]) => ({ value: name, description: `${what} ${id}` })),
    ...[...names].map(([id, name]) => ({ value: id, description: name ? `${what} ${name}` : what })),
  ];
  return {
    vims: async () => named(await store.vims.names(), 'VIM'),
    packages: async () => named(await store.packages.names(), 'package'),
    vnfdIds: async () => (await store.packages.list()).map((p) => ({ value: p.vnfdId ?? '', description: `package ${p.name ?? p.id}` })).filter((c) => c.value),
    instances: async () => named(await store.instances.names(), 'instance'),
    opOccs: async () => (await store.opOccs.list()).map((o) => ({ value: o.id, description: `${o.operation} ${o.operationState} ${o.vnfInstanceId.slice(0, 8)}` })),
    aspects: async (vnf) =>
      ((await store.instances.find(vnf))?.instantiatedVnfInfo?.scaleStatus ?? []).map((s) => ({ value: s.aspectId, description: `scale level ${s.scaleLevel}` })),
    vnfcs: async (vnf) => ((await store.instances.find(vnf))?.instantiatedVnfInfo?.vnfcInfo ?? []).map((v) => ({ value: v.id, description: `VDU ${v.vduId}` })),
  };
}

export function completeCommand(ctx: Context, root: () => Command): Command {
  return new Command('__complete')
    .description('Candidates for shell completion (used by the scripts of vnfm completion)')
    .argument('[words...]', 'the words after vnfm, the last one being typed')
    .option('--line <text>', 'instead of the words (bash): the command line up to the cursor, as typed')
    .option('--word <text>', "with --line: the text readline replaces (the completion function's $2)")
    .helpOption(false)
    .action(async (words: string[] = [], flags: { line?: string; word?: string }) => {
      const line = flags.line === undefined ? undefined : splitBashWords(flags.line);
      const typed = line ? [...line.words.slice(1), ...(line.open ? [] : [''])] : words;
      let result: Completion;
      try {
        result = await completeWords(root(), typed.length ? typed : [''], await storeValues(ctx));
      } catch {
        // A store that cannot be read (a malformed key, a locked file) offers nothing rather than an error in the middle of a command line.
        result = { directive: 'none', candidates: [] };
      }
      const lines =
        flags.line === undefined
          ? result.candidates.map((c) => (c.description ? `${c.value}\t${oneLine(c.description)}` : c.value))
          : bashReplacements(
              flags.line,
              flags.word ?? '',
              result.candidates.map((c) => (result.prefix ?? '') + c.value),
            );
      ctx.io.out([`:${result.directive}`, ...lines].join('\n'));
    });
}

/** A description on one line, a control character in it (from a name another client wrote) shown as "?". */
const oneLine = (s: string) =>
  [...s]
    .map((c) => (hasUnprintable(c) && !/\s/.test(c) ? '?' : c))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
