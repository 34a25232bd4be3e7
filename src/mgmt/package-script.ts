/**
 * Package scripts: a declared hook whose artifact is not a built-in driver
 * runs the package's own file as a subprocess. A `*.py` artifact of type
 * `tosca.artifacts.Implementation.Python` speaks Tacker v2's pickle contract
 * (tacker-script.ts); any other reads one JSON document on stdin:
 *
 * ```json
 * { "operation": "instantiate_end", "lcmOperation": "INSTANTIATE",
 *   "request": {...}, "vnf_instance": {...}, "vnf_instance_before": {...},
 *   "package_dir": "/abs/path", "vim": {"name": "...", "type": "kubernetes"} }
 * ```
 *
 * The request's sealed values are opened (and redacted from the output
 * kept, as are the VIM's credentials); the environment is a minimal one,
 * never vnfm's own (no master key); the script's output goes, line by line,
 * to the operation's log; a non-zero exit fails the hook. The operator
 * consents before a script runs (`--allow-package-scripts` or a prompt): see
 * builtin.ts. Whom the script runs as, and what it can reach, is
 * script-isolation.ts: when vnfm runs as root, another user that cannot
 * read VNFM_HOME, with `package_dir` a read-only copy of the package.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { constants as os } from 'node:os';
import { extname, isAbsolute, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ValidationError, VnfmError } from '../errors.js';
import type { VnfInstance } from '../model/lcm.js';
import type { HookImplementation, LcmHook } from '../model/vnfd.js';
import type { HookContext, HookOutcome, InstanceFields, PackageScriptUse } from './index.js';
import { createScriptWorkspace, describeIsolation, isolatedCommand, type ScriptIsolation, type ScriptWorkspace } from './script-isolation.js';
import { RUN_MARKER, ScriptProcesses } from './script-processes.js';
import { openSealed, sealedStrings, type Open } from './sealed.js';
import { createSessionRedactor } from './ssh/redact.js';
import {
  findPython,
  mergeTackerOutput,
  parseTackerResult,
  scriptContract,
  tackerInstance,
  tackerRecordOf,
  TACKER_OUTPUT_LIMIT,
  TACKER_RECORD_KEY,
  TACKER_WRAPPER,
  type ScriptContract,
  type TackerScriptRecord,
} from './tacker-script.js';

export interface PackageScriptOptions {
  /** Opens the request's sealed values. */
  open: Open;
  /** Where PATH, HOME and LANG are taken from (the process's environment by default); nothing else of it reaches the script. */
  env?: Record<string, string | undefined>;
  /** After SIGTERM on abort, how long the script's process group has before it and all it started get SIGKILL (default 5000 ms). */
  killGraceMs?: number;
  /** Whom the script runs as and what it cannot see (default: vnfm's own user, as is). */
  isolation?: ScriptIsolation;
}

/** How many of the script's last output lines a failure shows. */
const TAIL_LINES = 20;

/** The document a package script reads on stdin. */
export interface PackageScriptPayload {
  operation: LcmHook;
  lcmOperation: string;
  request: unknown;
  vnf_instance: unknown;
  vnf_instance_before: unknown;
  package_dir: string;
  vim: { id?: string; name: string; type: string };
}

/** The script's file inside the package, refusing paths that leave it. */
export function packageScriptPath(packageDir: string, file: string): string {
  const root = resolve(packageDir);
  const full = resolve(root, file);
  const rel = relative(root, full);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) {
    throw new ValidationError(file, undefined, 'is outside the package', { hint: 'a hook artifact is a file of the package, e.g. Scripts/configure.sh' });
  }
  return full;
}

/**
 * Checks, before the operation starts, that each script is a regular file of
 * the package (symlinks leading out of it refused).
 */
export function checkPackageScripts(source: string, packageDir: string, scripts: readonly PackageScriptUse[], env: Record<string, string | undefined> = process.env): void {
  for (const s of scripts) {
    const what = `hook ${s.hook} (artifact ${s.artifact})`;
    let full: string;
    try {
      full = packageScriptPath(packageDir, s.file);
    } catch {
      throw new ValidationError(source, what, `package script ${s.file} is outside the package`);
    }
    let real: string;
    try {
      real = realpathSync(full);
    } catch {
      throw new ValidationError(source, what, `package script ${s.file} is not in the package`, {
        hint: `add ${s.file} to the package (and to TOSCA.meta), or correct the artifact's file in the VNFD`,
      });
    }
    const rel = relative(realpathSync(packageDir), real);
    if (rel.startsWith('..') || isAbsolute(rel) || !statSync(real).isFile()) {
      throw new ValidationError(source, what, `package script ${s.file} is not a file of the package`);
    }
    if (extname(s.file).toLowerCase() === '.py' && !findPython(scriptPath(env))) {
      const contract = scriptContract({ artifactFile: s.file, ...(s.artifactType ? { artifactType: s.artifactType } : {}) });
      throw new ValidationError(source, what, `package script ${s.file} needs python3, which is not on the PATH (${scriptPath(env)})`, {
        hint: `install python3 (e.g. apt-get install python3), or put its directory on the PATH vnfm runs with${contract === 'tacker-pickle' ? "; the script speaks Tacker's pickle contract, which only python3 can read" : ''}`,
      });
    }
  }
}

/** The PATH a script runs with. */
function scriptPath(base: Record<string, string | undefined>): string {
  return base['PATH'] || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
}

/** The command that runs a script: by its extension, else the file itself (which must be executable). */
export function scriptCommand(path: string, file: string): [string, string[]] {
  const ext = extname(path).toLowerCase();
  if (ext === '.py') return ['/usr/bin/env', ['python3', path]];
  if (ext === '.sh') return ['/bin/bash', [path]];
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new VnfmError(`package script ${file} is not executable, and vnfm has no interpreter for its extension`, {
      hint: 'name it *.sh (run with bash) or *.py (run with python3), or make it executable with a #! line',
    });
  }
  return [path, []];
}

/** What the script reads on stdin; `request` already opened; `packageDir` the package as the script sees it. */
export function packageScriptPayload(ctx: HookContext, request: unknown, packageDir = resolve(ctx.packageDir)): PackageScriptPayload {
  return {
    operation: ctx.hook,
    lcmOperation: ctx.operation,
    request,
    vnf_instance: ctx.result ?? ctx.instance,
    vnf_instance_before: ctx.instance,
    package_dir: packageDir,
    vim: { ...(ctx.vim.id ? { id: ctx.vim.id } : {}), name: ctx.vim.name, type: ctx.vim.spec.type },
  };
}

/** The script's environment: enough to find programs and speak UTF-8, nothing of vnfm's. */
export function scriptEnvironment(base: Record<string, string | undefined>, ctx: HookContext): Record<string, string> {
  return {
    PATH: scriptPath(base),
    HOME: base['HOME'] || '/',
    LANG: base['LANG'] || 'C.UTF-8',
    VNFM_HOOK: ctx.hook,
    VNFM_LCM_OPERATION: ctx.operation,
    VNFM_VNF_INSTANCE_ID: ctx.vnfInstanceId,
  };
}

/**
 * Every form in which a script's output may show a secret it was given or
 * could find: the value itself, as it reads inside JSON (the script may echo
 * its stdin), and each line of a multi-line value (a PEM key) on its own.
 */
export function secretForms(secrets: readonly string[]): string[] {
  const out = new Set<string>();
  for (const s of secrets) {
    if (!s) continue;
    out.add(s);
    out.add(JSON.stringify(s).slice(1, -1));
    if (/[\r\n]/.test(s)) {
      for (const line of s.split(/\r?\n/).map((l) => l.trim())) if (line.length >= 8 && !line.startsWith('-----')) out.add(line);
    }
  }
  return [...out];
}

/** The string values of the VIM's opened credentials. */
function vimSecretStrings(secrets: unknown): string[] {
  if (!secrets || typeof secrets !== 'object') return [];
  return Object.values(secrets as Record<string, unknown>).filter((v): v is string => typeof v === 'string' && v !== '');
}

/** The `vnfm_record` object of the script's last stdout line, if that line is one. */
function recordOf(line: string | undefined): Record<string, unknown> | undefined {
  if (!line?.trim().startsWith('{')) return undefined;
  try {
    const doc = JSON.parse(line) as { vnfm_record?: unknown };
    const r = doc.vnfm_record;
    return r && typeof r === 'object' && !Array.isArray(r) ? (r as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What the hooks of one operation carried from one to the next for Tacker
 * scripts (Tacker hands the end hook the instance and the error-handling
 * data as the start hook left them). The engine gives every hook of an
 * operation the same `instance` object, which keys it.
 */
const carried = new WeakMap<VnfInstance, TackerScriptRecord>();

/** How a script is started, what it reads and how its result is read, by contract. */
interface ScriptLaunch {
  contract: ScriptContract;
  command: string;
  args: string[];
  stdin: string;
  /** Tacker's contract: the record before the script, and the vnf_instance it was given. */
  tacker?: { record: TackerScriptRecord; given: Record<string, unknown> };
}

/**
 * Runs the hook's package script and waits for it. Fails with the script's
 * exit code and last output lines; on abort (Ctrl-C, --timeout) its whole
 * process group is stopped. However it ends, nothing it started is left
 * running (script-processes.ts).
 */
export async function runPackageScript(ctx: HookContext, impl: HookImplementation, opts: PackageScriptOptions): Promise<HookOutcome> {
  const file = impl.artifactFile;
  if (!file) throw new VnfmError(`hook ${ctx.hook}: artifact ${impl.implementation} names no file`, { hint: 'give the artifact a file: Scripts/<name>.sh' });
  const path = packageScriptPath(ctx.packageDir, file);
  // Refused before anything is copied for it.
  scriptCommand(path, file);
  const request = await openSealed(ctx.request, opts.open);
  const redact = createSessionRedactor(secretForms([...sealedStrings(ctx.request, request), ...vimSecretStrings(ctx.vim.secrets)]));
  const iso = opts.isolation ?? { kind: 'same-user' };
  ctx.signal.throwIfAborted();
  const workspace = iso.kind === 'other-user' ? createScriptWorkspace(ctx.packageDir, iso.user) : undefined;
  try {
    return await runScript(ctx, impl, opts, { file, request, redact, iso, workspace, path });
  } finally {
    workspace?.remove();
  }
}

/** The command and stdin of a script, by its contract. */
function launchFor(ctx: HookContext, impl: HookImplementation, request: unknown, path: string, file: string, packageDir: string): ScriptLaunch {
  const contract = scriptContract(impl);
  if (contract === 'vnfm-json') {
    const [command, args] = scriptCommand(path, file);
    return { contract, command, args, stdin: JSON.stringify(packageScriptPayload(ctx, request, packageDir)) };
  }
  const record = carried.get(ctx.instance) ?? tackerRecordOf(ctx.result ?? ctx.instance);
  const given = tackerInstance(ctx.result ?? ctx.instance, record);
  const payload = {
    operation: ctx.hook,
    request,
    vnf_instance: given,
    // vnfm grants by itself: there is no NFVO grant exchange to hand over.
    grant_request: null,
    grant_response: null,
    tmp_csar_dir: packageDir,
    user_script_err_handling_data: record.user_script_err_handling_data ?? {},
    ...(ctx.newPackageDir ? { new_csar_dir: resolve(ctx.newPackageDir) } : {}),
  };
  return { contract, command: '/usr/bin/env', args: ['python3', '-c', TACKER_WRAPPER, path], stdin: JSON.stringify(payload), tacker: { record, given } };
}

async function runScript(
  ctx: HookContext,
  impl: HookImplementation,
  opts: PackageScriptOptions,
  run: { file: string; request: unknown; redact: (text: string) => string; iso: ScriptIsolation; workspace: ScriptWorkspace | undefined; path: string },
): Promise<HookOutcome> {
  const { file, redact, iso, workspace } = run;
  const packageDir = workspace?.packageDir ?? resolve(ctx.packageDir);
  const path = join(packageDir, relative(resolve(ctx.packageDir), run.path));
  const launchSpec = launchFor(ctx, impl, run.request, path, file, packageDir);
  const { command, args } = launchSpec;
  const name = `package script ${file} (hook ${ctx.hook}, artifact ${impl.implementation})`;
  const env = scriptEnvironment(opts.env ?? process.env, ctx);
  if (workspace && iso.kind === 'other-user') Object.assign(env, { HOME: workspace.home, TMPDIR: workspace.home, USER: iso.user.name, LOGNAME: iso.user.name });
  // What the script starts inherits it: how vnfm knows those processes when nothing else tells (script-processes.ts).
  env[RUN_MARKER] = randomUUID();
  const launch = isolatedCommand(iso, command, args);
  const tacker = launchSpec.contract === 'tacker-pickle';

  ctx.report(`${ctx.hook}: running package script ${file}`);
  const shown = tacker ? `python3 ${path} (Tacker's contract: a pickled dict on stdin and stdout)` : [command, ...args].join(' ');
  ctx.log(`running ${file}: ${shown} in ${packageDir} ${describeIsolation(iso)}`);
  const child = spawn(launch.command, launch.args, {
    cwd: packageDir,
    env,
    ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.gid } : {}),
    // Tacker's contract: the wrapper reports the script's unpickled output on fd 3.
    stdio: tacker ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    // Its own session and process group, so an abort stops whatever it started too.
    detached: true,
  });
  const processes = child.pid !== undefined ? new ScriptProcesses(child.pid, launch.processes, `${RUN_MARKER}=${env[RUN_MARKER]}`) : undefined;
  const tail: string[] = [];
  let lastStdout: string | undefined;
  const keep = (line: string, stream: 'stdout' | 'stderr') => {
    const shown = redact(line);
    if (stream === 'stdout') lastStdout = shown;
    tail.push(shown);
    if (tail.length > TAIL_LINES) tail.shift();
    ctx.log(`${file}${stream === 'stderr' ? ' [stderr]' : ''}: ${shown}`);
  };
  const streams = (['stdout', 'stderr'] as const).map(
    (stream) =>
      new Promise<void>((done) => {
        const rl = createInterface({ input: child[stream]!, crlfDelay: Infinity });
        rl.on('line', (l) => keep(l, stream));
        rl.on('close', done);
      }),
  );
  const report: Buffer[] = [];
  let reportSize = 0;
  let reportTooBig = false;
  if (tacker) {
    const fd3 = child.stdio[3] as NodeJS.ReadableStream | null;
    const done = new Promise<void>((ok) => {
      fd3?.on('data', (chunk: Buffer) => {
        reportSize += chunk.length;
        if (reportSize > 2 * TACKER_OUTPUT_LIMIT) reportTooBig = true;
        else report.push(chunk);
      });
      fd3?.on('end', () => ok());
      fd3?.on('close', () => ok());
      fd3?.on('error', () => ok());
    });
    streams.push(done);
  }
  // A script that does not read its stdin closes it: that is not a failure.
  child.stdin!.on('error', () => {});
  child.stdin!.end(launchSpec.stdin);

  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    ctx.log(`${file}: stopping it (${(ctx.signal.reason as Error | undefined)?.message ?? 'aborted'})`);
    processes?.terminate();
    killTimer = setTimeout(() => processes?.kill(), opts.killGraceMs ?? 5000);
    killTimer.unref();
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  let left = 0;
  try {
    exit = await new Promise((resolveExit, reject) => {
      child.once('error', (err) => reject(new VnfmError(`${name} could not be started: ${err.message}`, { hint: `is ${command} installed?` })));
      child.once('exit', (code, signal) => resolveExit({ code, signal }));
    });
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    if (killTimer) clearTimeout(killTimer);
    // Whatever the script left running ends with it: the hook is over.
    left = (await processes?.end()) ?? 0;
  }
  // Output still buffered is read; a process that escaped holding the script's output does not hold the hook up.
  await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, 1000).unref())]);
  if (left) ctx.log(`${file}: stopped ${left} process${left === 1 ? '' : 'es'} it left running`);
  if (ctx.signal.aborted) {
    const reason = ctx.signal.reason as unknown;
    const why = reason instanceof Error ? reason.message : 'interrupted';
    throw new VnfmError(`${name} was stopped: ${why}`, { cause: reason });
  }
  const result = tacker && !reportTooBig ? parseTackerResult(Buffer.concat(report).toString('utf8')) : undefined;
  let outcome: HookOutcome = {};
  if (tacker && launchSpec.tacker) {
    // Read before the exit code is looked at: Tacker keeps what a failing script handed back too.
    outcome = tackerOutcome(ctx, file, launchSpec.tacker, result, reportTooBig, redact);
  }
  if (exit.code !== 0) {
    const how = exitDescription(exit, launch.processes === 'pid-namespace');
    const output = tail.length ? `; its last output:\n${tail.map((l) => `  ${l}`).join('\n')}` : '; it printed nothing';
    ctx.log(`${file}: ${how}`);
    throw new VnfmError(`hook ${ctx.hook}: ${name} ${how}${output}`, {
      hint: 'its whole output is in the operation log (vnfm op-log OCCURRENCE); fix the cause, then retry with --allow-package-scripts',
    });
  }
  if (tacker && result?.error) {
    throw new VnfmError(`hook ${ctx.hook}: ${name}: ${result.error}`, { hint: 'a Tacker script writes a pickled dict of plain values (dicts, lists, strings, numbers) on stdout' });
  }
  ctx.log(`${file}: exited with code 0`);
  ctx.report(`${ctx.hook}: package script ${file} done`);
  if (tacker) return outcome;
  const record = recordOf(lastStdout);
  return record ? { record: { [`package-script:${impl.implementation}`]: record } } : {};
}

/**
 * How the script ended. In a PID namespace its init, which cannot die by a
 * signal it does not handle, exits 128+N for a script killed by signal N.
 */
function exitDescription(exit: { code: number | null; signal: NodeJS.Signals | null }, init: boolean): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  const sig = init && exit.code !== null && exit.code > 128 ? Object.entries(os.signals).find(([, n]) => n === exit.code! - 128)?.[0] : undefined;
  return sig ? `exited with code ${exit.code} (as one killed by ${sig} does)` : `exited with code ${exit.code}`;
}

/** Reads a Tacker script's output into the instance's record, logging what was ignored, as Tacker ignores it. */
function tackerOutcome(
  ctx: HookContext,
  file: string,
  before: { record: TackerScriptRecord; given: Record<string, unknown> },
  result: ReturnType<typeof parseTackerResult>,
  tooBig: boolean,
  redact: (text: string) => string,
): HookOutcome {
  if (!result) {
    ctx.log(`${file}: no output was read${tooBig ? ' (larger than the limit)' : ''}`);
    return {};
  }
  if (result.ignored) {
    ctx.log(`${file}: output ignored, as Tacker ignores it: ${result.ignored}`);
    return {};
  }
  if (!result.output) return {};
  const { record, refused, notes } = mergeTackerOutput(before.record, before.given, result.output);
  for (const n of notes) ctx.log(`${file}: ${n}`);
  if (refused.length) ctx.log(`${file}: vnf_instance fields vnfm keeps itself were not taken: ${refused.join(', ')}`);
  let kept: TackerScriptRecord;
  try {
    kept = JSON.parse(redact(JSON.stringify(record))) as TackerScriptRecord;
  } catch {
    ctx.log(`${file}: its output could not be kept once secrets were hidden from it`);
    return {};
  }
  carried.set(ctx.instance, kept);
  if (!kept.vnf_instance && !kept.user_script_err_handling_data) return {};
  const fields = Object.keys(kept.vnf_instance ?? {});
  ctx.log(
    `${file}: kept ${fields.length ? `vnf_instance ${fields.join(', ')}` : 'no vnf_instance field'}${kept.user_script_err_handling_data ? ' and user_script_err_handling_data' : ''}`,
  );
  return { record: { [TACKER_RECORD_KEY]: kept }, ...instanceFieldsOf(kept.vnf_instance) };
}

/** The kept `vnf_instance` fields whose types SOL003 allows, to be set on the instance itself. */
function instanceFieldsOf(inst: Record<string, unknown> | undefined): Pick<HookOutcome, 'instanceFields'> {
  if (!inst) return {};
  const fields: InstanceFields = {};
  const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);
  if (typeof inst['vnfInstanceName'] === 'string') fields.vnfInstanceName = inst['vnfInstanceName'];
  if (typeof inst['vnfInstanceDescription'] === 'string') fields.vnfInstanceDescription = inst['vnfInstanceDescription'];
  for (const k of ['metadata', 'extensions', 'vnfConfigurableProperties'] as const) if (isObject(inst[k])) fields[k] = inst[k];
  return Object.keys(fields).length ? { instanceFields: fields } : {};
}
