/**
 * Runs a package's own LCM user-data class (Tacker's
 * `lcm-operation-user-data` / `lcm-operation-user-data-class`) to compute a
 * Heat stack's parameters, with Tacker's contract:
 * - v1 (tacker/vnfm/lcm_user_data): `Class.instantiate(base_hot_dict,
 *   vnfd_dict, inst_req_info, grant_info)` returns the HOT parameters, a
 *   dict. `base_hot_dict` is the nested templates by file name and the top
 *   one as `heat_template`; `vnfd_dict` the flavour's definitions file;
 *   `inst_req_info` the InstantiateVnfRequest as an object with Tacker's
 *   snake_case attributes; `grant_info` the images made for each VDU
 *   (`resource_identifier`: the Glance image's id).
 * - v2 (sol_refactored userdata_utils): `Class.<operation>(req, inst,
 *   grant_req, grant, tmp_csar_dir)` returns the stack's fields, of which
 *   `parameters` is taken.
 *
 * The class runs in a `python3` process under the package scripts'
 * isolation (script-isolation.ts: as root, another user in a mount namespace
 * that hides VNFM_HOME, reading a copy of the package), with vnfm's own
 * stand-ins for the Tacker modules it imports (user-data-standins.ts) first
 * on its path. Data goes in as JSON on stdin and comes back as JSON on file
 * descriptor 3 (the class's own stdout and stderr are kept for messages);
 * the process is stopped after `timeoutMs` (Tacker's 60 s), and what it
 * started ends with it. The caller has the operator's consent.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { TimeoutError, UsageError, VnfmError } from '../errors.js';
import { createScriptWorkspace, isolatedCommand, type ScriptIsolation } from './script-isolation.js';
import { RUN_MARKER, ScriptProcesses } from './script-processes.js';
import { findPython, TACKER_OUTPUT_LIMIT } from './tacker-script.js';
import { FALLBACKS, STANDINS } from './user-data-standins.js';

/** Tacker v1's limit for a user-data class (lcm_user_data/constants.py USER_DATA_TIMEOUT). */
export const USER_DATA_TIMEOUT_MS = 60_000;

/** One run of a package's user-data class. */
export interface UserDataClassRun {
  generation: 'v1' | 'v2';
  /** The Python file, a member of the package (`UserData/x.py`). */
  file: string;
  className: string;
  /** For messages: the package's id. */
  packageId: string;
  /** The package's unpacked members. */
  packageDir: string;
  /**
   * v1: `{ base_hot_dict, vnfd_dict, inst_req_info, grant_info }` (the
   * request in its JSON form, grant_info as `{vdu: [{resource_identifier}]}`);
   * v2: `{ operation, req, inst, grant_req, grant, vnfd }` (`vnfd`: what
   * the stand-in vnfd_utils.Vnfd reads, `{vnfdId, flavours: {id:
   * {definitions, base_hot: {template, files}}}}`).
   */
  input: Record<string, unknown>;
  signal?: AbortSignal;
  /** Default USER_DATA_TIMEOUT_MS. */
  timeoutMs?: number;
}

export interface UserDataClassOptions {
  isolation?: ScriptIsolation;
  /** Where PATH, HOME and LANG are taken from (the process's environment by default). */
  env?: Record<string, string | undefined>;
}

/**
 * The bridge: `python3 -c RUNNER STANDINS FALLBACKS PACKAGE FILE CLASS`.
 * Imports the file as Tacker does (its path under the package, `.py`
 * dropped, `/` read as `.`), finds the class and calls it; answers on fd 3
 * with `{"value": ...}` or `{"error": kind, "message", "trace"?}`.
 */
const RUNNER = String.raw`
import importlib, inspect, json, os, re, sys, traceback

KEEP = {'additionalParams', 'extensions', 'vnfConfigurableProperties', 'accessInfo', 'interfaceInfo', 'extra', 'metadata'}


def snake(name):
    return re.sub(r'(?<=[a-z0-9])([A-Z])', r'_\1', name).lower()


class RequestObject(object):
    """A request field as Tacker's objects have it: snake_case attributes, None when not given."""

    def __init__(self, fields):
        self.__dict__.update(fields)

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return None

    def obj_attr_is_set(self, name):
        return name in self.__dict__

    def to_dict(self):
        return {k: (v.to_dict() if isinstance(v, RequestObject) else v) for k, v in self.__dict__.items()}

    def __repr__(self):
        return 'RequestObject(%r)' % self.__dict__


def as_object(value, key=None):
    if key in KEEP:
        return value
    if isinstance(value, dict):
        return RequestObject({snake(k): as_object(v, k) for k, v in value.items()})
    if isinstance(value, list):
        return [as_object(v) for v in value]
    return value


def main():
    standins, fallbacks, package, member, name = sys.argv[1:6]
    out = os.fdopen(3, 'w')

    def answer(doc):
        try:
            text = json.dumps(doc, allow_nan=False)
        except (TypeError, ValueError) as e:
            text = json.dumps({'error': 'json', 'message': '%s: %s' % (type(e).__name__, e)})
        out.write(text)
        out.flush()

    def failed(kind):
        e = sys.exc_info()[1]
        trace = traceback.format_exc().strip().splitlines()
        answer({'error': kind, 'message': '%s: %s' % (type(e).__name__, e), 'trace': trace[-12:]})

    doc = json.load(sys.stdin)
    sys.path[:0] = [standins, package]
    sys.path.append(fallbacks)
    module_name = os.path.splitext(member)[0].replace('/', '.')
    if doc['generation'] == 'v2':
        from tacker.sol_refactored.common import vnfd_utils
        vnfd_utils.GIVEN = doc.get('vnfd') or {}
    try:
        module = importlib.import_module(module_name)
    except BaseException:
        return failed('import')
    klass = getattr(module, name, None)
    if not inspect.isclass(klass):
        found = sorted(n for n, v in vars(module).items() if inspect.isclass(v) and getattr(v, '__module__', '') == module.__name__)
        return answer({'error': 'class', 'message': ', '.join(found)})
    operation = doc.get('operation', 'instantiate')
    method = getattr(klass, operation, None)
    if not callable(method):
        return answer({'error': 'method', 'message': operation})
    if doc['generation'] == 'v1':
        grant_info = {vdu: [as_object(r) for r in rs] for vdu, rs in (doc.get('grant_info') or {}).items()}
        args = (doc['base_hot_dict'], doc['vnfd_dict'], as_object(doc['inst_req_info']), grant_info)
    else:
        args = (doc['req'], doc['inst'], doc.get('grant_req'), doc.get('grant'), package)
    try:
        value = method(*args)
    except BaseException:
        return failed('raised')
    answer({'value': value})


main()
`;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How many of the class's last output lines an error shows. */
const TAIL_LINES = 12;

function writeTree(root: string, files: Readonly<Record<string, string>>): void {
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true, mode: 0o755 });
    writeFileSync(full, text, { mode: 0o644 });
  }
}

/** Every directory of a tree readable and enterable by all (the class may run as another user). */
function openTree(root: string, files: Readonly<Record<string, string>>): void {
  const dirs = new Set<string>([root]);
  for (const path of Object.keys(files)) {
    let dir = dirname(join(root, path));
    while (dir.startsWith(root) && !dirs.has(dir)) {
      dirs.add(dir);
      dir = dirname(dir);
    }
  }
  for (const dir of dirs) chmodSync(dir, 0o755);
}

/**
 * Runs the class and returns what it returned: for v1 the HOT parameters,
 * for v2 the stack's fields (both checked to be dicts). Every failure names
 * the file and the class: python3 missing (exit 2), the file not importable,
 * no such class or method, the class raising, a result that is not a dict
 * or not plain data, the time limit.
 */
export async function runUserDataClass(run: UserDataClassRun, opts: UserDataClassOptions = {}): Promise<Json> {
  const base = opts.env ?? process.env;
  const path = base['PATH'] || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
  const what = `user-data class ${run.className} in ${run.file} of package ${run.packageId}`;
  if (!findPython(path)) {
    throw new UsageError(`${what} needs python3, which is not on the PATH (${path})`, {
      hint: 'install python3 (e.g. apt-get install python3), or put its directory on the PATH vnfm runs with',
    });
  }
  const iso = opts.isolation ?? { kind: 'same-user' };
  const workspace = iso.kind === 'other-user' ? createScriptWorkspace(run.packageDir, iso.user) : undefined;
  const own = workspace ? undefined : mkdtempSync(join(tmpdir(), 'vnfm-user-data-'));
  const root = workspace?.root ?? own!;
  try {
    const standins = join(root, 'standins');
    const fallbacks = join(root, 'fallbacks');
    writeTree(standins, STANDINS);
    writeTree(fallbacks, FALLBACKS);
    openTree(standins, STANDINS);
    openTree(fallbacks, FALLBACKS);
    if (own) chmodSync(own, 0o755);
    const packageDir = workspace?.packageDir ?? resolve(run.packageDir);
    const env: Record<string, string> = {
      PATH: path,
      HOME: workspace?.home ?? (base['HOME'] || '/'),
      LANG: base['LANG'] || 'C.UTF-8',
      // Nothing is written into the package (no __pycache__).
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONIOENCODING: 'utf-8',
      [RUN_MARKER]: randomUUID(),
    };
    if (workspace && iso.kind === 'other-user') Object.assign(env, { TMPDIR: workspace.home, USER: iso.user.name, LOGNAME: iso.user.name });
    const launch = isolatedCommand(iso, '/usr/bin/env', ['python3', '-c', RUNNER, standins, fallbacks, packageDir, run.file, run.className]);
    const doc = { generation: run.generation, ...run.input };
    const answer = await spawnBridge(launch, env, packageDir, JSON.stringify(doc), run, what);
    return checkedValue(answer, run, what);
  } finally {
    if (workspace) workspace.remove();
    if (own) rmSync(own, { recursive: true, force: true });
  }
}

interface Answer {
  value?: unknown;
  error?: string;
  message?: string;
  trace?: string[];
}

async function spawnBridge(
  launch: ReturnType<typeof isolatedCommand>,
  env: Record<string, string>,
  cwd: string,
  stdin: string,
  run: UserDataClassRun,
  what: string,
): Promise<{ answer: Answer | undefined; tail: string[]; exit: { code: number | null; signal: NodeJS.Signals | null }; tooBig: boolean }> {
  run.signal?.throwIfAborted();
  const child = spawn(launch.command, launch.args, {
    cwd,
    env,
    ...(launch.uid !== undefined ? { uid: launch.uid, gid: launch.gid } : {}),
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const processes = child.pid !== undefined ? new ScriptProcesses(child.pid, launch.processes, `${RUN_MARKER}=${env[RUN_MARKER]}`) : undefined;
  const tail: string[] = [];
  const streams = (['stdout', 'stderr'] as const).map(
    (stream) =>
      new Promise<void>((done) => {
        const rl = createInterface({ input: child[stream]!, crlfDelay: Infinity });
        rl.on('line', (line) => {
          tail.push(line);
          if (tail.length > TAIL_LINES) tail.shift();
        });
        rl.on('close', done);
      }),
  );
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  const fd3 = child.stdio[3] as NodeJS.ReadableStream | null;
  streams.push(
    new Promise<void>((done) => {
      fd3?.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > TACKER_OUTPUT_LIMIT) tooBig = true;
        else chunks.push(chunk);
      });
      fd3?.on('end', () => done());
      fd3?.on('close', () => done());
      fd3?.on('error', () => done());
    }),
  );
  child.stdin!.on('error', () => {});
  child.stdin!.end(stdin);

  const limit = run.timeoutMs ?? USER_DATA_TIMEOUT_MS;
  let stopped: Error | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: Error) => {
    if (stopped) return;
    stopped = why;
    processes?.terminate();
    killTimer = setTimeout(() => processes?.kill(), 2000);
    killTimer.unref();
  };
  const timer = setTimeout(
    () =>
      stop(
        new TimeoutError(`${what} did not return within ${limit >= 1000 ? `${Math.round(limit / 1000)} s` : `${limit} ms`} (Tacker's limit for user data is 60 s)`, {
          hint: 'a user-data class computes the parameters and returns: look for what it waits on',
        }),
      ),
    limit,
  );
  const onAbort = () => {
    const reason = run.signal?.reason as unknown;
    stop(reason instanceof Error ? reason : new VnfmError(`${what} was stopped`));
  };
  run.signal?.addEventListener('abort', onAbort, { once: true });
  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await new Promise((ok, fail) => {
      child.once('error', (err) => fail(new VnfmError(`${what} could not be started: ${err.message}`, { hint: 'is python3 installed?' })));
      child.once('exit', (code, signal) => ok({ code, signal }));
    });
  } finally {
    clearTimeout(timer);
    if (killTimer) clearTimeout(killTimer);
    run.signal?.removeEventListener('abort', onAbort);
    await processes?.end();
  }
  await Promise.race([Promise.all(streams), new Promise((r) => setTimeout(r, 1000).unref())]);
  if (stopped) throw stopped;
  let answer: Answer | undefined;
  try {
    const text = Buffer.concat(chunks).toString('utf8');
    answer = text ? (JSON.parse(text) as Answer) : undefined;
  } catch {
    answer = undefined;
  }
  return { answer, tail, exit, tooBig };
}

function checkedValue(got: Awaited<ReturnType<typeof spawnBridge>>, run: UserDataClassRun, what: string): Json {
  const { answer, tail, exit } = got;
  const output = tail.length ? `; its last output:\n${tail.map((l) => `  ${l}`).join('\n')}` : '';
  const trace = answer?.trace?.length ? `\n${answer.trace.map((l) => `  ${l}`).join('\n')}` : '';
  const fix = `fix ${run.file} in the package (a new package version), or remove lcm-operation-user-data and lcm-operation-user-data-class to have vnfm build the parameters`;
  if (got.tooBig) throw new UsageError(`${what} returned more than ${TACKER_OUTPUT_LIMIT} bytes`, { hint: fix });
  if (!answer) {
    const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code} without an answer`;
    throw new UsageError(`${what} ${how}${output}`, { hint: fix });
  }
  switch (answer.error) {
    case undefined:
      break;
    case 'import':
      throw new UsageError(`${run.file} of package ${run.packageId} could not be imported (to run user-data class ${run.className}): ${answer.message}${trace}${output}`, {
        hint: `${fix}; vnfm provides its own tacker.vnfm.lcm_user_data (abstract_user_data, utils) and tacker.sol_refactored.infra_drivers.openstack.userdata_utils, and no other Tacker module`,
      });
    case 'class':
      throw new UsageError(`${run.file} of package ${run.packageId} has no class ${run.className}${answer.message ? ` (its classes: ${answer.message})` : ''}`, {
        hint: 'name one of its classes in additionalParams.lcm-operation-user-data-class',
      });
    case 'method':
      throw new UsageError(`${what} has no method ${answer.message}`, { hint: `Tacker calls ${run.className}.${answer.message}(...): ${fix}` });
    case 'raised':
      throw new UsageError(`${what} raised ${answer.message}${trace}${output}`, { hint: fix });
    case 'json':
      throw new UsageError(`${what} returned a value that is not plain data (${answer.message})`, { hint: `return a dict of dicts, lists, strings and numbers: ${fix}` });
    default:
      throw new UsageError(`${what} failed: ${answer.message ?? answer.error}`, { hint: fix });
  }
  const value = answer.value;
  const describe = (v: unknown) => (v === null ? 'None' : Array.isArray(v) ? 'a list' : `a ${typeof v}`);
  if (!isObject(value)) {
    throw new UsageError(`${what} returned ${describe(value)}, not a dict of HOT parameters`, { hint: `return a dict, e.g. {'nfv': {'VDU': {...}, 'CP': {...}}}: ${fix}` });
  }
  if (run.generation === 'v2' && value['parameters'] !== undefined && !isObject(value['parameters'])) {
    throw new UsageError(`${what} returned parameters that are ${describe(value['parameters'])}, not a dict of HOT parameters`, { hint: fix });
  }
  return value;
}
