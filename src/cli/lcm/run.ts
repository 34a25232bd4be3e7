/**
 * What every long-running LCM command shares: the request file, --timeout
 * and Ctrl-C as an AbortSignal, progress on stderr, and the final
 * occurrence through the printer (also when it ended FAILED_TEMP, so a
 * script reading `-o json` sees it).
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { echo, clip, InterruptedError, TerminatedError, TimeoutError, UsageError, ValidationError } from '../../errors.js';
import { documentDepth, FileReadError, MAX_DOCUMENT_DEPTH, readInputText } from '../../input-file.js';
import type { LcmDeps, LcmOpOcc, OperationOptions, OperationResult } from '../../lcm/index.js';
import type { Context } from '../context.js';
import { addOutputOptions, printResource, type OutputOptions } from '../output/printer.js';
import { opView } from '../output/op-view.js';
import { lcmDeps } from './deps.js';
import { createProgress } from './progress.js';
import { setMaxListeners } from 'node:events';

export interface RunFlags extends OutputOptions {
  timeout: string;
  /** The operator's consent to run the package's scripts in hooks. */
  allowPackageScripts?: boolean;
  /** Servers (id or address) whose changed SSH host key is accepted. */
  acceptHostKey?: string[];
  /** --heat-environment, on the commands that create or update a Heat stack. */
  heatEnvironment?: string[];
  /** Accepts Tacker's unverified TLS for inline Kubernetes VIMs without ssl_ca_cert that nothing else verifies. */
  insecureInlineVims?: boolean;
}

const DEFAULT_TIMEOUT = '10m';

export function addRunOptions(cmd: Command): Command {
  addOutputOptions(cmd);
  cmd.addOption(new Option('--timeout <duration>', 'give up (FAILED_TEMP, exit 124) after this long: 300, 90s, 5m, 1h').default(DEFAULT_TIMEOUT));
  cmd.option(
    '--allow-package-scripts',
    "run the scripts the package's VNFD declares on this operation's hooks (as the operator; review them first). Without it vnfm asks on a terminal, and refuses otherwise; --yes does not allow them",
  );
  cmd.option(
    '--accept-host-key <server>',
    'a server (VNFC id or address) whose SSH host key changed since vnfm pinned it: accept and pin the new key (repeatable)',
    (v: string, prev: string[] = []) => [...prev, v],
  );
  cmd.option(
    '--insecure-inline-vims',
    "Kubernetes VIMs given inline (vimConnectionInfo with interfaceInfo.endpoint) without ssl_ca_cert: when neither the CA of a registered VIM with the same endpoint nor the system's trusted CAs verify the API server, skip TLS verification, as Tacker does (a warning names the endpoint each time). Without it such a VIM is refused (exit 6)",
  );
  return cmd.addHelpText(
    'after',
    `
Package scripts: a hook the VNFD implements with a file of the package that
is not a built-in driver runs that file (*.sh with bash, *.py with python3)
in the package directory, with the operation as JSON on stdin; its output
goes to the operation log (vnfm op-log OP). It runs only with
--allow-package-scripts, or after a "y" at the prompt on a terminal.`,
  );
}

/** `--heat-environment FILE` (repeatable), as `openstack stack create -e` takes it. */
export function addHeatEnvironmentOption(cmd: Command): Command {
  return cmd.option(
    '--heat-environment <file>',
    "OpenStack VIMs: a Heat environment file for the stack, merged in the order given (repeatable); provider templates its resource_registry names are read relative to it. Replaces the VIM's extra.heat_environments and the ones the instance was created with",
    (v: string, prev: string[] = []) => [...prev, v],
  );
}

/** Seconds from `300`, `90s`, `5m`, `1h30m`. */
export function parseDuration(value: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$/.exec(value.trim());
  const seconds = m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : NaN;
  if (!m || !value.trim() || !(seconds > 0)) {
    throw new UsageError(`--timeout ${echo(value)} is not a duration`, { hint: 'e.g. --timeout 300 (seconds), 90s, 5m or 1h' });
  }
  return seconds;
}

/** A --timeout as messages say it: with its unit (`40` is `40s`; `5m`, `1h30m` as given). */
export function durationText(value: string): string {
  const given = value.trim();
  return /^\d+$/.test(given) ? `${given}s` : given;
}

/** Largest request file read; real ones are a few KiB, with inline certificates or keys a few dozen. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/**
 * A request body from a JSON (or YAML) file: a regular file of at most
 * MAX_REQUEST_BYTES, nested at most MAX_DOCUMENT_DEPTH deep, its YAML aliases
 * bounded as a vim-config's are.
 */
export async function readRequestFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = readInputText(path, MAX_REQUEST_BYTES);
  } catch (err) {
    if (!(err instanceof FileReadError)) throw err;
    throw new UsageError(`cannot read request file ${path}: it ${err.problem}`, {
      hint: 'give the path of a JSON or YAML file (see csar-samples/basic-cnf/requests/ for examples)',
    });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text) as unknown;
  } catch {
    const { default: yaml } = await import('js-yaml');
    try {
      doc = yaml.load(text);
    } catch (err) {
      throw new ValidationError(path, undefined, `is neither JSON nor YAML: ${clip((err as Error).message.split('\n')[0] ?? '')}`);
    }
  }
  if (documentDepth(doc) > MAX_DOCUMENT_DEPTH) {
    throw new ValidationError(path, undefined, `nests deeper than ${MAX_DOCUMENT_DEPTH} levels`, {
      hint: 'a request is a few levels of objects and lists: check that the right file is given',
    });
  }
  const { assertBoundedExpansion } = await import('../../yaml.js');
  assertBoundedExpansion(doc, path);
  return doc;
}

/**
 * The request file of a command that takes it either as Tacker's positional
 * `<param-file>` (`openstack vnflcm instantiate VNF FILE`) or as
 * `--request-file`: exactly one of the two.
 */
export function requestFileOf(positional: string | undefined, flag: string | undefined, usage: string): string {
  if (positional !== undefined && flag !== undefined) {
    throw new UsageError(`the request file is given twice: ${echo(positional)} and --request-file ${echo(flag)}`, {
      hint: `give it once: ${usage}`,
    });
  }
  const file = positional ?? flag;
  if (file === undefined) throw new UsageError('the request file is missing', { hint: usage });
  return file;
}

/**
 * `--additional-param-file F` of scale and heal, as tackerclient reads it: a
 * JSON (or YAML) object merged into the request body, usually
 * `{"additionalParams": {...}}`. A file holding only the parameters
 * themselves is refused, so they are not silently dropped.
 */
export async function readAdditionalParamFile(path: string, fields: readonly string[]): Promise<Record<string, unknown>> {
  const doc = await readRequestFile(path);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new ValidationError(path, undefined, 'is not a JSON object', { hint: 'write {"additionalParams": {"key": "value"}}' });
  }
  const unknown = Object.keys(doc).filter((k) => !fields.includes(k));
  if (unknown.length > 0) {
    throw new ValidationError(path, unknown[0], `is not a field of the request (it takes ${fields.join(', ')})`, {
      hint: `put the parameters under additionalParams: {"additionalParams": {${JSON.stringify(unknown[0])}: ...}}`,
    });
  }
  const params = (doc as Record<string, unknown>)['additionalParams'];
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    throw new ValidationError(path, 'additionalParams', 'must be an object');
  }
  return doc as Record<string, unknown>;
}

/** What a command running in the foreground hands its work: the abort signal and the live view. */
export interface Foreground {
  signal: AbortSignal;
  progress: ReturnType<typeof createProgress>;
}

/**
 * Runs `work` in the foreground: its signal aborts on Ctrl-C, on SIGTERM and
 * at `--timeout`, and a live view follows its events unless the output is
 * for programs; every handler and timer is gone when it ends, however.
 */
export async function inForeground<T>(ctx: Context, flags: Pick<RunFlags, 'timeout' | 'quiet' | 'output'>, deps: LcmDeps, work: (fg: Foreground) => Promise<T>): Promise<T> {
  const seconds = parseDuration(flags.timeout);
  const controller = new AbortController();
  // The driver hangs one listener per request and watch on this signal.
  setMaxListeners(0, controller.signal);
  const onSigint = () => controller.abort(new InterruptedError('interrupted'));
  // SIGTERM (kill, systemd, docker stop) stops the operation as Ctrl-C does, so it too ends FAILED_TEMP and says so.
  const onSigterm = () => controller.abort(new TerminatedError('terminated (SIGTERM)'));
  const timedOut = () => new TimeoutError(`timed out after ${durationText(flags.timeout)}`);
  const timer = setTimeout(() => controller.abort(timedOut()), seconds * 1000);
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigterm);
  // A statement waiting for another client's write lock would outlast the stop: the store gives it up after a grace.
  const onAbort = () => deps.store.interruptWaits(controller.signal.reason as Error);
  controller.signal.addEventListener('abort', onAbort, { once: true });
  // -q and the formats for programs want the result alone: no live view on a terminal (the plain lines elsewhere stay).
  const progress = createProgress(ctx.io, () => ctx.now(), { quiet: Boolean(flags.quiet) || !['table', 'wide'].includes(flags.output) });
  try {
    return await work({ signal: controller.signal, progress });
  } finally {
    progress.stop();
    clearTimeout(timer);
    process.removeListener('SIGINT', onSigint);
    process.removeListener('SIGTERM', onSigterm);
    controller.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Runs an operation in the foreground: the signal aborts on Ctrl-C and at
 * the timeout; the result (or the FAILED_TEMP occurrence) is printed.
 */
export async function runLcmCommand(
  ctx: Context,
  flags: RunFlags,
  action: (deps: LcmDeps, opts: OperationOptions) => Promise<OperationResult>,
  source?: string,
  /** What the operation acts on, for the package-script prompt (`vnf instance web`). */
  subject?: string,
): Promise<OperationResult> {
  parseDuration(flags.timeout);
  // Before the timer and the signal handlers: a refused store or key must not leave them keeping the process alive.
  const { deps, close } = await lcmDeps(ctx);
  if (flags.insecureInlineVims) deps.insecureInlineVims = { warn: (message) => ctx.io.warn(message) };
  let last: LcmOpOcc | undefined;
  try {
    return await inForeground(ctx, flags, deps, async ({ signal, progress }) => {
      try {
        const result = await action(deps, {
          signal,
          ...(source ? { source } : {}),
          ...(flags.heatEnvironment?.length ? { heatEnvironments: flags.heatEnvironment.map((p) => resolve(p)) } : {}),
          allowPackageScripts: packageScriptConsent(ctx, flags, subject, () => progress.stop()),
          acceptHostKeys: flags.acceptHostKey ?? [],
          onEvent: (e) => {
            if (e.type === 'occurrence') last = e.opOcc;
            progress.onEvent(e);
          },
        });
        progress.stop();
        const op = result.opOcc;
        ctx.io.success(`${op.operation} of vnf instance ${op.vnfInstanceId} ${op.operationState} (occurrence ${op.id})`);
        await printResource(ctx.io, flags, opView(flags), op);
        return result;
      } catch (err) {
        progress.stop();
        if (last?.operationState === 'FAILED_TEMP') await printResource(ctx.io, flags, opView(flags), last);
        throw err;
      }
    });
  } finally {
    close();
  }
}

/**
 * The operator's consent to package scripts: the flag; else, on a terminal,
 * one question per script (--yes answers the command's own confirmation,
 * never this one); else none, and the operation is refused.
 */
function packageScriptConsent(ctx: Context, flags: RunFlags, subject: string | undefined, beforePrompt: () => void): OperationOptions['allowPackageScripts'] {
  if (flags.allowPackageScripts) return true;
  if (!ctx.io.canPrompt) return false;
  return async (scripts) => {
    beforePrompt();
    const { confirm } = await import('../prompt.js');
    for (const s of scripts) {
      const what = s.userDataClass ? `the package's user-data class ${s.userDataClass} (${s.file})` : `package script ${s.file} (hook ${s.hook}, artifact ${s.artifact})`;
      if (!(await confirm(ctx.io, `Run ${what}${subject ? ` for ${subject}` : ''}?`))) return false;
    }
    return true;
  };
}
