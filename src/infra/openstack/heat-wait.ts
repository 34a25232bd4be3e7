/**
 * Waiting for a Heat stack action to end. Heat has no watch: the wait
 * follows the stack's events from the last one seen, with a pause that grows
 * while nothing happens, checks the stack's own status now and then (events
 * can be missed), rides out Heat or Keystone not answering for a while, and
 * tells a restarted engine that dropped the work (StackStalledError).
 */
import type { Sleep } from '../../clock.js';
import { InterruptedError, TimeoutError, VnfmError } from '../../errors.js';
import type { HeatSession } from './heat.js';
import { HeatError, type HeatEvent, type HeatStack, type StackRef } from './heat-wire.js';
import { ServiceUnreachableError } from './openstack-http.js';

export interface WaitOptions {
  /** The action whose end is awaited. */
  action: 'CREATE' | 'UPDATE' | 'DELETE';
  /** Events up to this one are history (from `lastEventId` before the action started). */
  since?: string;
  onEvent?(event: HeatEvent): void;
}

/**
 * Heat stopped answering during an action and, once it answered again, the
 * stack stayed `<action>_IN_PROGRESS` with no event: the engine that ran the
 * action is gone. A convergence Heat (the default since Queens) never marks
 * such a stack FAILED by itself (only stacks of the legacy engine are reset on
 * engine start); an update of the stack, even while IN_PROGRESS, takes the
 * work over and steals the dead engine's resource locks.
 */
export class StackStalledError extends VnfmError {
  constructor(
    readonly heatStack: HeatStack,
    readonly action: 'CREATE' | 'UPDATE' | 'DELETE',
    quietMs: number,
  ) {
    super(
      `Heat stopped answering during the ${action} of stack ${heatStack.name}, and since it answers again the stack has stayed ${heatStack.status} with no event for ${Math.round(quietMs / 1000)} s: the Heat engine that ran it was restarted and dropped the work`,
      { hint: `retry the operation (op-retry): vnfm then updates stack ${heatStack.name}, which makes Heat take the work over` },
    );
  }
}

/** The wait's clock and pacing (HeatSessionOptions). */
export interface WaitTiming {
  /** Milliseconds since the epoch. */
  now(): number;
  sleep: Sleep;
  /** Pauses between polls: the first, and the longest it grows to. */
  poll: { min: number; max: number };
  /** How long Heat or Keystone may not answer before the wait gives up. */
  grace: number;
  /** After an outage, how long the stack may stay IN_PROGRESS with no event before its work counts as dropped. */
  resumeQuiet: number;
}

export async function waitForStack(
  api: Pick<HeatSession, 'listEvents' | 'getStack'>,
  ref: StackRef,
  w: WaitOptions,
  signal: AbortSignal,
  t: WaitTiming,
): Promise<HeatStack | undefined> {
  let marker = w.since;
  let pause = t.poll.min;
  let polls = 0;
  let unreachableSince: number | undefined;
  // When Heat answered again after an outage; cleared by the next event (its engine is at work).
  let backSince: number | undefined;
  for (;;) {
    throwIfAborted(signal);
    let sawEvent = false;
    try {
      const events = await api.listEvents(ref, marker ? { marker } : {}, signal);
      let ended = false;
      for (const e of events) {
        marker = e.id;
        sawEvent = true;
        w.onEvent?.(e);
        if (e.resourceName === ref.name && e.physicalResourceId === ref.id && e.status.startsWith(`${w.action}_`) && !e.status.endsWith('_IN_PROGRESS')) ended = true;
      }
      // The first answer after an outage brings the backlog (what the old engine did before it went): only later events are progress.
      if (unreachableSince !== undefined) backSince = t.now();
      else if (sawEvent) backSince = undefined;
      unreachableSince = undefined;
      const stalled = backSince !== undefined && t.now() - backSince >= t.resumeQuiet;
      // Events can be missed (Heat restarted, a marker it no longer knows): the stack's own status decides, checked now and then.
      if (ended || stalled || polls % 5 === 4) {
        const stack = await api.getStack(ref, signal);
        if (!stack) {
          if (w.action === 'DELETE') return undefined;
          throw new HeatError(`stack ${ref.name} (${ref.id}) disappeared while vnfm waited for its ${w.action}`, 404, undefined, 'stack not found');
        }
        if (stack.status === `${w.action}_COMPLETE` || stack.status === `${w.action}_FAILED`) {
          // Ended between the events read and the stack read: show the events that came with the end.
          if (!ended) for (const e of await api.listEvents(ref, marker ? { marker } : {}, signal).catch(() => [])) w.onEvent?.(e);
          return stack;
        }
        if (w.action === 'DELETE' && stack.status === 'DELETE_COMPLETE') return undefined;
        if (stalled && stack.status === `${w.action}_IN_PROGRESS`) throw new StackStalledError(stack, w.action, t.now() - backSince!);
      }
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const transient = err instanceof ServiceUnreachableError || (err instanceof HeatError && err.status >= 502);
      if (!transient) throw err;
      unreachableSince ??= t.now();
      if (t.now() - unreachableSince > t.grace) throw err;
    }
    polls++;
    pause = sawEvent ? t.poll.min : Math.min(t.poll.max, Math.round(pause * 1.5));
    await t.sleep(pause, signal);
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (!signal.aborted) return;
  const r = signal.reason as unknown;
  throw r instanceof TimeoutError || r instanceof InterruptedError ? r : new InterruptedError('interrupted');
}
