/**
 * Progress of an LCM operation on stderr. On a terminal, a live view
 * redrawn in place: the operation and its total time, one line per step
 * (each resource, each hook) with the time it took or has taken so far, and
 * the last lines a running package script or remote command printed. When
 * stderr is not a terminal, plain timestamped lines a log collector can
 * keep (their format does not change: script output stays in `vnfm op-log`),
 * written a burst at a time (at most PLAIN_FLUSH_MS after the first line of
 * the burst).
 */
import type { LcmEvent } from '../../lcm/index.js';
import type { IO } from '../io.js';
import { terminalSafe } from '../terminal-text.js';

export interface Progress {
  onEvent(event: LcmEvent): void;
  /** Leaves the last frame on screen. */
  stop(): void;
}

export interface ProgressOptions {
  /** No live view on a terminal (-q, or a format for programs: -o json|yaml|value|name|jsonpath). */
  quiet?: boolean;
  /** Redraws of the elapsed times; tests give none. Default 1000 ms. */
  tickMs?: number;
  /** Not a terminal: how long a line may wait to be written with the next ones (0: at once). Default PLAIN_FLUSH_MS. */
  plainFlushMs?: number;
}

/** Not a terminal: the longest a plain line waits to share one write with those that follow it. */
export const PLAIN_FLUSH_MS = 50;

/** Lines of script or command output the live view keeps. */
export const OUTPUT_TAIL_LINES = 5;

const resourceName = (r: { kind: string; name: string; namespace?: string }) => `${r.kind}/${r.name}${r.namespace ? ` (${r.namespace})` : ''}`;

/**
 * The event's step and text, safe for a terminal (terminal-text.ts): they
 * quote names, VIM messages and script output. `oneLine` for the live view,
 * whose lines are counted to be redrawn.
 */
function describe(event: LcmEvent, oneLine: boolean): { key?: string; text: string; done?: boolean } {
  const d = described(event);
  const safe = (text: string) => terminalSafe(text, { oneLine });
  return { ...d, ...(d.key !== undefined ? { key: safe(d.key) } : {}), text: safe(d.text) };
}

function described(event: LcmEvent): { key?: string; text: string; done?: boolean } {
  switch (event.type) {
    case 'occurrence':
      return { text: `${event.opOcc.operation} ${event.opOcc.operationState} (occurrence ${event.opOcc.id})` };
    case 'hook':
      return { text: `hook ${event.hook}` };
    case 'output':
      return { text: `[${event.hook}] ${event.line}` };
    case 'notice':
      return { text: event.message };
    case 'driver': {
      const r = event.event.resource;
      return r ? { key: resourceName(r), text: event.event.message, done: event.event.done } : { text: event.event.message };
    }
  }
}

/** 0.4s, 12s, 3m05s, 1h02m. */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)}s`;
  if (s < 60) return `${Math.floor(s)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

interface Step {
  text: string;
  done: boolean;
  /** Still not done when the operation failed: where it stopped. */
  failed?: boolean;
  started: number;
  ended?: number;
}

/** What a hook's row says while it runs; a finished hook's row says only its time. */
const RUNNING = 'running';

export function createProgress(io: IO, now: () => Date, opts: ProgressOptions = {}): Progress {
  const stderr = io.streams.stderr as NodeJS.WritableStream & { isTTY?: boolean; rows?: number; columns?: number };
  if (!stderr.isTTY) {
    // Each line is stamped when its event happens and written within PLAIN_FLUSH_MS: the events of
    // fifty objects come in bursts, and one write per line (a system call each, waking the reader of
    // the pipe) was a twentieth of vnfm's CPU for an instantiate. stop() writes what is left, as does
    // the process's exit if the command never reaches it.
    let pending = '';
    let timer: NodeJS.Timeout | undefined;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      process.removeListener('exit', flush);
      if (!pending) return;
      const text = pending;
      pending = '';
      stderr.write(text);
    };
    return {
      onEvent(event) {
        // Script output is in the operation's log (vnfm op-log); the plain lines stay as they were.
        if (event.type === 'output') return;
        const d = describe(event, false);
        pending += `${now().toISOString()} ${d.key ? `${d.key}: ` : ''}${d.text}\n`;
        if (timer || opts.plainFlushMs === 0) {
          if (!timer) flush();
          return;
        }
        timer = setTimeout(flush, opts.plainFlushMs ?? PLAIN_FLUSH_MS);
        process.once('exit', flush);
      },
      stop: flush,
    };
  }
  if (opts.quiet) return { onEvent() {}, stop() {} };
  const c = io.color;
  const t = () => now().getTime();
  const steps = new Map<string, Step>();
  const tail: string[] = [];
  let header = '';
  let begun: number | undefined;
  let finished: number | undefined;
  /** The hook running now: it ends when the driver or the next hook starts, or the operation ends. */
  let hook: string | undefined;
  /** The hook whose output the tail shows. */
  let lastHook: string | undefined;
  let drawn = 0;
  /** Ends the hook running; `failed`: the operation stopped short, and each step not done (a hook, an object awaited) is where. */
  const endSteps = (at: number, failed = false) => {
    for (const [k, step] of steps)
      if (!step.done && (failed || k === hook)) Object.assign(step, failed ? { failed } : { done: true }, { ended: at, text: step.text === RUNNING ? '' : step.text });
    hook = undefined;
  };
  /** The frame last written: a redraw that would write the same is skipped. */
  let lastFrame = '';
  /** The line cut to the terminal's width, before colour is added (escape codes take no columns). */
  const fit = (line: string, indent = 0) => {
    const width = (stderr.columns || 80) - indent;
    return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
  };
  const draw = () => {
    if (begun === undefined) return;
    const at = finished ?? t();
    const rows = Math.max(6, (stderr.rows || 24) - 2);
    const all = [...steps.entries()];
    const pending = all.filter(([, s]) => !s.done);
    const room = rows - 1 - (tail.length ? tail.length + 1 : 0);
    // Past the screen height, finished steps fold into one count line.
    const shown = all.length <= room ? all : pending.slice(-Math.max(1, room - 1));
    const folded = all.length - shown.length;
    const took = (s: Step) => formatElapsed((s.ended ?? at) - s.started);
    const frame = [
      c.bold(fit(`${header}  ${formatElapsed(at - begun)}`)),
      ...(folded > 0 ? [c.dim(fit(`  ✓ ${folded} steps done`))] : []),
      ...shown.map(([k, s]) => `  ${s.done ? c.green('✓') : s.failed ? c.red('✗') : c.yellow('…')} ${fit([k, s.text, took(s)].filter(Boolean).join('  '), 4)}`),
      ...(tail.length ? [c.dim(fit(`  output of ${lastHook ?? 'the hook'}:`)), ...tail.map((l) => c.dim(fit(`  │ ${l}`)))] : []),
    ];
    const text = frame.join('\n') + '\n';
    if (drawn && text === lastFrame) return;
    stderr.write((drawn ? `\x1b[${drawn}F\x1b[J` : '') + text);
    lastFrame = text;
    drawn = frame.length;
  };
  // The elapsed times move on between events too.
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    if (timer || opts.tickMs === 0 || finished !== undefined) return;
    timer = setInterval(draw, opts.tickMs ?? 1000);
    timer.unref();
  };
  return {
    onEvent(event) {
      const at = t();
      begun ??= at;
      if (event.type === 'output') {
        tail.push(terminalSafe(event.line, { oneLine: true }));
        if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
      } else if (event.type === 'hook') {
        endSteps(at);
        hook = describe(event, true).text;
        lastHook = hook;
        steps.set(hook, { text: RUNNING, done: false, started: at });
        tail.length = 0;
      } else if (event.type === 'occurrence') {
        header = describe(event, true).text;
        // ROLLED_BACK is where a rollback completes.
        if (['COMPLETED', 'ROLLED_BACK'].includes(event.opOcc.operationState)) endSteps(at);
        else if (['FAILED_TEMP', 'FAILED'].includes(event.opOcc.operationState)) endSteps(at, true);
        if (['COMPLETED', 'FAILED_TEMP', 'FAILED', 'ROLLED_BACK'].includes(event.opOcc.operationState)) finished = at;
      } else {
        const d = describe(event, true);
        if (d.key) {
          endSteps(at);
          const step = steps.get(d.key);
          if (step) Object.assign(step, { text: d.text, done: Boolean(d.done), ...(d.done && !step.done ? { ended: at } : {}) });
          else steps.set(d.key, { text: d.text, done: Boolean(d.done), started: at, ...(d.done ? { ended: at } : {}) });
        } else if (hook && steps.has(hook)) {
          steps.get(hook)!.text = d.text;
        } else header = d.text;
      }
      draw();
      tick();
    },
    // Before a question, and at the end: the frame stays on screen, and what comes next is written below it.
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      // The last frame again only when it changed (the time moved on since): once finished, it is on screen already.
      if (drawn) draw();
      drawn = 0;
      lastFrame = '';
    },
  };
}
