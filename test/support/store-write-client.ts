/**
 * A vnfm client that ends an operation the way the engine does
 * (lcm/engine.ts's execute): the instance, the occurrence's final state and
 * the lock's release in one write transaction; when that fails, FAILED_TEMP
 * and the release in another. It stops inside the final transaction, after
 * its first writes, until a line arrives on stdin, so that the test can
 * restart the database server under it. Bundled by bundleTestProgram.
 *
 *   node client.cjs URL INSTANCE_ID
 *
 * prints STARTED <opId>, IN_TX, then COMPLETED, or FAILED <exit code> <message>
 * followed by FAILED_TEMP (or FAILED_TEMP_NOT_RECORDED <exit code>).
 */
import { randomUUID } from 'node:crypto';
import { readSync } from 'node:fs';
import { VnfmError } from '../../src/errors.js';
import { connectStore } from '../../src/store/index.js';

const [url, instanceId] = process.argv.slice(2) as [string, string];
const say = (line: string) => process.stdout.write(`${line}\n`);
const exitCodeOf = (err: unknown) => (err instanceof VnfmError ? err.exitCode : 1);

/** Blocks until a line (or end of input) arrives on stdin. */
function waitForLine(): void {
  const buf = Buffer.alloc(1);
  for (;;) {
    try {
      if (readSync(0, buf, 0, 1, null) === 0 || buf[0] === 0x0a) return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
}

async function run(): Promise<void> {
  const store = await connectStore(process.env['VNFM_HOME']!, { databaseUrl: url, leaseTimeoutMs: 60_000 });
  const ops = store.opOccs;
  const opId = randomUUID();
  const now = () => new Date().toISOString();
  await ops.exclusive(async () => {
    const instance = await store.instances.get(instanceId);
    await ops.insert(
      {
        id: opId,
        vnfInstanceId: instanceId,
        operation: 'SCALE',
        operationState: 'PROCESSING',
        stateEnteredTime: now(),
        startTime: now(),
        operationParams: {} as never,
        journal: [],
        isAutomaticInvocation: false,
        pid: process.pid,
      },
      { vnfPkgId: instance.vnfPkgId, vnfdId: instance.vnfdId, instantiationState: instance.instantiationState },
    );
    await ops.takeLock({ vnfInstanceId: instanceId, opId, acquiredAt: now(), pid: process.pid, hostId: 'writer-host', startTime: '1' });
  });
  say(`STARTED ${opId}`);
  try {
    await ops.exclusive(async () => {
      await store.instances.update({ ...(await store.instances.get(instanceId)), vnfInstanceDescription: 'written by the final transaction', updatedAt: now() });
      await ops.setState(opId, 'COMPLETED', now(), { error: null, pid: null });
      say('IN_TX');
      waitForLine();
      await ops.releaseLock(instanceId, opId);
    });
    say('COMPLETED');
  } catch (err) {
    say(`FAILED ${exitCodeOf(err)} ${(err as Error).message.split('\n')[0]}`);
    try {
      await ops.exclusive(async () => {
        await ops.setState(opId, 'FAILED_TEMP', now(), { error: { status: 500, detail: (err as Error).message } as never, pid: null });
        await ops.releaseLock(instanceId, opId);
      });
      say('FAILED_TEMP');
    } catch (again) {
      say(`FAILED_TEMP_NOT_RECORDED ${exitCodeOf(again)}`);
    }
  }
  await store.close();
}

run().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(exitCodeOf(err));
  },
);
