import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { answer, FLAG_SLOTS, INTERRUPT_GRACE_MS, SyncCaller } from '../../src/store/postgres/sync-call.js';

/** A worker answering each numbered request as the store's worker does (answer, number, wake-up), with `extra` added to its body. */
function workerWith(extra: string): { caller: SyncCaller<unknown, unknown>; worker: Worker } {
  const signal = new SharedArrayBuffer(4 * FLAG_SLOTS);
  const { port1, port2 } = new MessageChannel();
  const body = `
    const { workerData } = require('node:worker_threads');
    const { port, signal } = workerData;
    const flag = new Int32Array(signal);
    const reply = (seq, res) => { port.postMessage({ seq, req: res }); Atomics.store(flag, 0, seq); Atomics.notify(flag, 0); };
    ${extra}`;
  const worker = new Worker(body, { eval: true, workerData: { port: port2, signal }, transferList: [port2] });
  worker.unref();
  port1.unref();
  return { caller: new SyncCaller(port1, signal), worker };
}

let workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.map((w) => w.terminate()));
  workers = [];
});

describe('a synchronous call to the store worker', () => {
  it('is not woken for a later request by an earlier answer arriving late', () => {
    // The first answer's wake-up is repeated 100 ms later, while the second request waits for its own answer (given at 400 ms):
    // this is what a notify that comes after its answer was already read looks like to the next call.
    const { caller, worker } = workerWith(`
      port.on('message', ({ seq, req }) => {
        if (seq === 1) { reply(seq, { to: req }); setTimeout(() => Atomics.notify(flag, 0), 100); }
        else setTimeout(() => reply(seq, { to: req }), 400);
      });`);
    workers.push(worker);
    expect(caller.call('first', 10_000)).toEqual({ answer: { to: 'first' } });
    expect(caller.call('second', 10_000)).toEqual({ answer: { to: 'second' } });
  });

  it('gives each of many quick calls its own answer', () => {
    const { caller, worker } = workerWith(`port.on('message', ({ seq, req }) => reply(seq, { to: req, seq }));`);
    workers.push(worker);
    for (let i = 0; i < 2000; i++) expect(caller.call(i, 10_000)).toEqual({ answer: { to: i, seq: i + 1 } });
  });

  it('answers nothing past the timeout, and the late answer is not taken for the next request', () => {
    // Requests are answered in order, the slow one after 300 ms: its answer always comes before the next one's.
    const { caller, worker } = workerWith(`
      let last = Promise.resolve();
      port.on('message', ({ seq, req }) => {
        last = last.then(() => new Promise((done) => setTimeout(() => { reply(seq, { to: req }); done(); }, req === 'slow' ? 300 : 0)));
      });`);
    workers.push(worker);
    expect(caller.call('slow', 50)).toBeUndefined();
    expect(caller.call('next', 10_000)).toEqual({ answer: { to: 'next' } });
  });

  it('stops waiting when the worker reports a signal the main thread handles, within the grace, and reports which', () => {
    // The worker never answers 'stuck'; 100 ms after it arrives, it reports SIGTERM as the store's worker does (sync-call.ts signalled()).
    const { caller, worker } = workerWith(`
      port.on('message', ({ seq, req }) => {
        if (req === 'stuck') setTimeout(() => { if (Atomics.load(flag, 2) & 2) { Atomics.store(flag, 1, 15); Atomics.notify(flag, 0); } }, 100);
        else reply(seq, { to: req });
      });`);
    workers.push(worker);
    caller.handles({ SIGTERM: true });
    const got = caller.call('stuck', 60_000);
    expect(got).toMatchObject({ interrupted: { signal: 'SIGTERM' } });
    const waited = (got as { waitedMs: number }).waitedMs;
    // Not the call's own 60 s timeout: the signal's grace ended it.
    expect(waited).toBeGreaterThanOrEqual(INTERRUPT_GRACE_MS);
    expect(waited).toBeLessThan(60_000);
    expect(caller.interruption).toEqual({ signal: 'SIGTERM' });
    // A quick statement after the interruption (recording FAILED_TEMP) is still answered.
    expect(caller.call('quick', 60_000)).toEqual({ answer: { to: 'quick' } });
  });

  it("stops a wait at its deadline, as the operation's timer would", () => {
    const { caller, worker } = workerWith(`port.on('message', () => {});`);
    workers.push(worker);
    caller.setDeadline(Date.now() + 50);
    expect(caller.call('stuck', 60_000)).toMatchObject({ interrupted: { deadline: true } });
  });

  it('takes the answer that comes within the grace after a signal', () => {
    const { caller, worker } = workerWith(`
      port.on('message', ({ seq, req }) => {
        Atomics.store(flag, 1, 2); Atomics.notify(flag, 0);
        setTimeout(() => reply(seq, { to: req }), 200);
      });`);
    workers.push(worker);
    caller.handles({ SIGINT: true });
    expect(caller.call('slow', 60_000)).toEqual({ answer: { to: 'slow' } });
    expect(caller.interruption).toEqual({ signal: 'SIGINT' });
  });

  it('never moves the answered number back: a late answer to an abandoned request does not hide a later one', () => {
    const signal = new SharedArrayBuffer(4 * FLAG_SLOTS);
    const { port1, port2 } = new MessageChannel();
    answer(port2, signal, 7, 'seventh');
    answer(port2, signal, 6, 'sixth, late');
    expect(new Int32Array(signal)[0]).toBe(7);
    // Across the wrap from the largest number to 1.
    new Int32Array(signal)[0] = 0x7ffffff0;
    answer(port2, signal, 0x7fffffff, 'last');
    answer(port2, signal, 1, 'first again');
    answer(port2, signal, 0x7ffffffe, 'late');
    expect(new Int32Array(signal)[0]).toBe(1);
    const got: unknown[] = [];
    for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1)) got.push((m.message as { req: unknown }).req);
    expect(got).toEqual(['seventh', 'sixth, late', 'last', 'first again', 'late']);
    port1.close();
  });
});
