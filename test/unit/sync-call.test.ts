import { MessageChannel, Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { SyncCaller } from '../../src/store/postgres/sync-call.js';

/** A worker answering each numbered request as the store's worker does (answer, number, wake-up), with `extra` added to its body. */
function workerWith(extra: string): { caller: SyncCaller<unknown, unknown>; worker: Worker } {
  const signal = new SharedArrayBuffer(4);
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
});
