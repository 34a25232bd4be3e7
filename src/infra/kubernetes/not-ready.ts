/**
 * What a timeout found not ready, told in its error: for each object still
 * awaited, its pods (or Machines) not ready with what each waits for, and
 * the last Warning event of each (a failed readiness probe, an image that
 * cannot be pulled, a pod that cannot be scheduled), read once, briefly,
 * after the operation's own signal has ended.
 */
import { TimeoutError } from '../../errors.js';
import type { ResourceRef } from '../driver.js';
import type { KubeClient } from './client.js';
import { LiveReader, type LiveEvent, type LiveObject } from './describe.js';
import { describeRef, type Discovery } from './discovery.js';

/** How long the reading may take: the operation has timed out already. */
export const ACCOUNT_READ_MS = 5000;
/** Objects, and pods of each, that the account names. */
const MAX_OBJECTS = 5;
const MAX_PODS = 3;

/**
 * A kubelet's `Failed` event whose message is only `Error: ImagePullBackOff`
 * (or ErrImagePull, CrashLoopBackOff...) repeats the container's state,
 * which the pod's line already says; the warning before it tells why.
 */
const echoesState = (e: LiveEvent): boolean => /^Error: [A-Z][A-Za-z]+$/.test(e.message);

/** The last warning that says something; the last one when all only echo the state. */
const lastWarning = (events: readonly LiveEvent[]): LiveEvent | undefined => {
  const warnings = events.filter((e) => e.type === 'Warning');
  return warnings.findLast((e) => !echoesState(e)) ?? warnings.at(-1);
};
/** Longest warning message told; a longer one keeps its start and its end, where a wrapped error names its cause (`… lookup registry.example: no such host`). */
const WARNING_CHARS = 200;
const clip = (text: string): string => (text.length <= WARNING_CHARS ? text : `${text.slice(0, 90)} … ${text.slice(-(WARNING_CHARS - 93))}`);
const warningText = (e: LiveEvent) => `last warning ${e.reason}${e.count > 1 ? ` (x${e.count})` : ''}: ${clip(e.message.replace(/\s+/g, ' '))}`;

function flatten(nodes: readonly LiveObject[]): LiveObject[] {
  return nodes.flatMap((n) => [n, ...flatten(n.children)]);
}

/** One object's line: its units not ready, each with its reason and last warning, and its own last warning; undefined when it has neither to tell. */
function objectLine(top: LiveObject): string | undefined {
  if (top.exists && top.ready) return undefined;
  const units = flatten(top.children).filter((n) => (n.ref.kind === 'Pod' || n.ref.kind === 'Machine') && !n.ready);
  const own = lastWarning(
    flatten([top])
      .filter((n) => n.ref.kind !== 'Pod' && n.ref.kind !== 'Machine')
      .flatMap((n) => n.events),
  );
  const parts = units.slice(0, MAX_PODS).map((u) => {
    const warning = lastWarning(u.events);
    return `${u.ref.kind.toLowerCase()} ${u.ref.name} (${u.reason}${warning ? `; ${warningText(warning)}` : ''})`;
  });
  if (units.length > MAX_PODS) parts.push(`${units.length - MAX_PODS} more not ready`);
  if (own) parts.push(warningText(own));
  return parts.length ? `${describeRef(top.ref)}: ${parts.join(', ')}` : undefined;
}

/**
 * `stopped` (the timeout naming what was awaited) with the account of what
 * is not ready appended; `stopped` itself for an interruption, when nothing
 * was awaited, or when the cluster cannot be read in time.
 */
export async function withNotReadyAccount(
  stopped: Error,
  awaited: ReadonlyArray<{ ref: ResourceRef }>,
  read: { client: KubeClient; discovery: Discovery; limit: number; namespace: string },
): Promise<Error> {
  if (!(stopped instanceof TimeoutError) || awaited.length === 0) return stopped;
  let lines: string[];
  try {
    const reader = new LiveReader(read.client, read.discovery, AbortSignal.timeout(ACCOUNT_READ_MS), read.limit);
    const live = await reader.describe({ resources: awaited.slice(0, MAX_OBJECTS).map((a) => a.ref), namespace: read.namespace, events: 10 });
    lines = live.flatMap((top) => objectLine(top) ?? []);
  } catch {
    return stopped;
  }
  if (lines.length === 0) return stopped;
  return new TimeoutError(`${stopped.message}. Not ready: ${lines.join('. ')}`, {
    ...(stopped instanceof TimeoutError && stopped.hint ? { hint: stopped.hint } : {}),
    ...(stopped.cause !== undefined ? { cause: stopped.cause } : {}),
  });
}
