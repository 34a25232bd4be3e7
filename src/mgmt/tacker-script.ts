/**
 * Tacker v2's management-driver contract, for package scripts written for
 * Tacker. Tacker v2 runs the file of a hook's artifact (which must be of type
 * `tosca.artifacts.Implementation.Python`) as `python3 <file>`, writes one
 * pickled dict to its stdin — `operation`, `request`, `vnf_instance`,
 * `grant_request`, `grant_response`, `tmp_csar_dir`,
 * `user_script_err_handling_data` and, when a modify request changes the
 * package, `new_csar_dir` — and unpickles its stdout: a dict's
 * `vnf_instance` updates the instance and its
 * `user_script_err_handling_data` is kept; anything else (nothing, not a
 * pickle, not a dict) is ignored. A non-zero exit fails the operation with
 * the script's stderr.
 *
 * vnfm never unpickles anything itself: a small Python wrapper, run in the
 * script's place (as the same user, in the same isolation), turns vnfm's
 * JSON into the pickle on the script's stdin, and the script's pickled
 * output back into JSON, written on file descriptor 3.
 */
import { delimiter, join } from 'node:path';
import { accessSync, constants } from 'node:fs';
import type { VnfInstance } from '../model/lcm.js';
import type { HookImplementation } from '../model/vnfd.js';

/** The artifact type Tacker v2 runs; with a `*.py` file it selects Tacker's contract. */
export const TACKER_SCRIPT_TYPE = 'tosca.artifacts.Implementation.Python';

/** Which contract a package script speaks: vnfm's JSON one, or Tacker v2's pickle one. */
export type ScriptContract = 'vnfm-json' | 'tacker-pickle';

/**
 * The contract of a package script: Tacker's for a `*.py` file whose
 * artifact is typed `tosca.artifacts.Implementation.Python` (the only kind
 * Tacker v2 runs, so Tacker's own packages work unmodified); vnfm's JSON
 * contract for every other artifact (`tosca.artifacts.Implementation.Bash`,
 * no type, an executable file).
 */
export function scriptContract(impl: Pick<HookImplementation, 'artifactFile' | 'artifactType'>): ScriptContract {
  const file = impl.artifactFile ?? '';
  return impl.artifactType === TACKER_SCRIPT_TYPE && /\.py$/i.test(file) ? 'tacker-pickle' : 'vnfm-json';
}

/** The most the wrapper reads of the script's pickled output, and vnfm of the wrapper's JSON. */
export const TACKER_OUTPUT_LIMIT = 16 * 1024 * 1024;

/**
 * The wrapper: `python3 -c WRAPPER <script>`. Reads vnfm's JSON document on
 * stdin, pickles it to the script's stdin, lets the script's stderr through
 * (it goes to the operation's log), reads at most TACKER_OUTPUT_LIMIT bytes
 * of its stdout (until it has exited: a process it left holding its stdout
 * is not waited for), and writes `{"returncode", "output"?, "ignored"?, "error"?}`
 * as JSON on fd 3. It exits with the script's exit code.
 */
export const TACKER_WRAPPER = String.raw`
import json, os, pickle, subprocess, sys, threading
LIMIT = ${TACKER_OUTPUT_LIMIT}
def main():
    script = sys.argv[1]
    result = os.fdopen(3, 'w')
    doc = json.load(sys.stdin)
    data = pickle.dumps(doc)
    child = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    def feed():
        try:
            child.stdin.write(data)
        except OSError:
            pass
        try:
            child.stdin.close()
        except OSError:
            pass
    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    chunks, state = [], {'size': 0, 'too_big': False}
    def drain():
        while True:
            chunk = child.stdout.read1(65536)
            if not chunk:
                break
            if state['size'] + len(chunk) > LIMIT:
                state['too_big'] = True
            else:
                chunks.append(chunk)
                state['size'] += len(chunk)
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    code = child.wait()
    # What the script wrote is in the pipe once it has exited; a process it left holding its stdout does not hold this up.
    reader.join(1)
    writer.join(5)
    too_big = state['too_big']
    out = {'returncode': code}
    raw = b''.join(chunks[:])
    if too_big:
        out['ignored'] = 'its output is larger than %d bytes' % LIMIT
    else:
        try:
            value = pickle.loads(raw)
        except EOFError:
            out['ignored'] = 'it wrote nothing on stdout'
            value = None
        except pickle.UnpicklingError as e:
            out['ignored'] = 'its stdout is not a pickle (%s)' % e
            value = None
        except Exception as e:
            out['error'] = 'its stdout could not be unpickled: %s: %s' % (type(e).__name__, e)
            value = None
        if value is not None or 'ignored' not in out and 'error' not in out:
            if isinstance(value, dict):
                kept = {}
                for key in ('vnf_instance', 'user_script_err_handling_data'):
                    if key in value:
                        kept[key] = value[key]
                out['output'] = kept
            else:
                out['ignored'] = 'its output is a %s, not a dict' % type(value).__name__
    try:
        text = json.dumps(out, default=str)
    except Exception as e:
        text = json.dumps({'returncode': code, 'error': 'its output cannot be read as JSON: %s' % e})
    result.write(text)
    result.close()
    sys.exit(code if code >= 0 else 128 - code)
main()
`;

/** What the wrapper reports on fd 3. */
export interface TackerScriptResult {
  returncode: number;
  /** The keys of the script's dict that Tacker reads. */
  output?: { vnf_instance?: unknown; user_script_err_handling_data?: unknown };
  /** Why the output was ignored, as Tacker ignores it. */
  ignored?: string;
  /** Output that Tacker would fail on (a pickle naming a class that cannot be loaded). */
  error?: string;
}

/** Parses the wrapper's report; undefined when it wrote none (it was killed, or python3 failed). */
export function parseTackerResult(text: string): TackerScriptResult | undefined {
  if (!text.trim()) return undefined;
  try {
    const doc = JSON.parse(text) as TackerScriptResult;
    return doc && typeof doc === 'object' && typeof doc.returncode === 'number' ? doc : undefined;
  } catch {
    return undefined;
  }
}

/** The fields of a script's `vnf_instance` that vnfm keeps; the rest (id, state, resources, VIMs) stay vnfm's. */
export const TACKER_KEPT_FIELDS = ['vnfInstanceName', 'vnfInstanceDescription', 'metadata', 'extensions', 'vnfConfigurableProperties'] as const;

/** What the scripts of an instance set, kept at `instantiatedVnfInfo.metadata.mgmt["tacker-script"]`. */
export interface TackerScriptRecord {
  /** The kept fields of `vnf_instance`, as the scripts last set each. */
  vnf_instance?: Record<string, unknown>;
  user_script_err_handling_data?: Record<string, unknown>;
}

export const TACKER_RECORD_KEY = 'tacker-script';

const isObject = (v: unknown): v is Record<string, unknown> => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

/** The record kept on an instance by earlier operations. */
export function tackerRecordOf(instance: VnfInstance | undefined): TackerScriptRecord {
  const r = instance?.instantiatedVnfInfo?.metadata.mgmt?.[TACKER_RECORD_KEY];
  return isObject(r) ? (r as TackerScriptRecord) : {};
}

/**
 * The `vnf_instance` a Tacker script is given: the instance as vnfm keeps
 * it, with what earlier scripts set, and without anything secret (vnfm
 * keeps no accessInfo on the instance; dropped here too, should one be).
 */
export function tackerInstance(instance: VnfInstance, record: TackerScriptRecord): Record<string, unknown> {
  const doc = JSON.parse(JSON.stringify(instance)) as Record<string, unknown>;
  const vims = doc['vimConnectionInfo'];
  if (isObject(vims)) for (const v of Object.values(vims)) if (isObject(v)) delete v['accessInfo'];
  return { ...doc, ...(record.vnf_instance ?? {}) };
}

/**
 * Merges a script's output into the record: each kept field the script's
 * `vnf_instance` carries replaces the one before, as Tacker replaces the
 * instance's attributes; `user_script_err_handling_data` is merged key by
 * key, as Tacker updates it. Returns the new record and the fields the
 * script changed that vnfm does not take.
 */
export function mergeTackerOutput(
  record: TackerScriptRecord,
  given: Record<string, unknown>,
  output: TackerScriptResult['output'],
): { record: TackerScriptRecord; refused: string[]; notes: string[] } {
  const next: TackerScriptRecord = { ...record };
  const refused: string[] = [];
  const notes: string[] = [];
  const inst = output?.vnf_instance;
  if (inst !== undefined) {
    if (!isObject(inst)) {
      notes.push(`its vnf_instance is not a dict: ignored`);
    } else {
      const kept: Record<string, unknown> = { ...(record.vnf_instance ?? {}) };
      for (const [k, v] of Object.entries(inst)) {
        const changed = JSON.stringify(v) !== JSON.stringify(given[k]);
        // A script hands the whole instance back: only what it changed (or set before) is kept.
        if ((TACKER_KEPT_FIELDS as readonly string[]).includes(k)) {
          if (changed || k in kept) kept[k] = v;
        } else if (changed) refused.push(k);
      }
      if (Object.keys(kept).length) next.vnf_instance = kept;
    }
  }
  const data = output?.user_script_err_handling_data;
  if (data !== undefined) {
    if (isObject(data)) next.user_script_err_handling_data = { ...(record.user_script_err_handling_data ?? {}), ...data };
    else notes.push('its user_script_err_handling_data is not a dict: ignored');
  }
  return { record: next, refused, notes };
}

/** python3 on `path` (the PATH the script gets), or undefined. */
export function findPython(path: string | undefined): string | undefined {
  for (const dir of (path || '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'python3');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
