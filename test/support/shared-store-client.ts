/**
 * A second vnfm client for the shared-store tests, run as its own process
 * (bundled by bundleTestProgram): it opens the store on PostgreSQL and
 * starts an operation on an instance the way the engine does (the check and
 * the lock in one exclusive transaction), then holds the lease until it is
 * killed. `VNFM_TEST_HOST` names the machine it stands for, so that its
 * lock is one this test process cannot check by pid.
 *
 *   node client.cjs hold URL INSTANCE_ID   prints HELD <opId>, or exits with the error's exit code
 *   node client.cjs open URL               opens the store (applying migrations) and prints the schema version
 */
import { randomUUID } from 'node:crypto';
import { assertInstanceFree, type LcmDeps } from '../../src/lcm/engine.js';
import { holderOf, type HostFacts } from '../../src/lcm/lock-holder.js';
import { VnfmError } from '../../src/errors.js';
import { connectStore } from '../../src/store/index.js';

const [cmd, url, instanceId] = process.argv.slice(2);
const home = process.env['VNFM_HOME']!;
const leaseTimeoutMs = Number(process.env['VNFM_LEASE_TIMEOUT'] ?? '60') * 1000;
const machine = process.env['VNFM_TEST_HOST'] ?? 'machine-b';
const host: HostFacts = { hostName: machine, hostId: `${machine}-id`, bootId: `${machine}-boot`, pidAlive: () => true, startTimeOf: () => '1' };

async function run(): Promise<number> {
  const store = await connectStore(home, { databaseUrl: url, leaseTimeoutMs });
  if (cmd === 'open') {
    process.stdout.write(`OPEN ${String(await (store.db as unknown as { schemaVersion(): Promise<number> }).schemaVersion())}\n`);
    await store.close();
    return 0;
  }
  const deps = { store, home, now: () => new Date(), host } as unknown as LcmDeps;
  const ops = store.opOccs;
  const opId = randomUUID();
  await ops.exclusive(async () => {
    await assertInstanceFree(deps, instanceId!);
    const now = new Date().toISOString();
    const instance = await store.instances.get(instanceId!);
    await ops.insert(
      {
        id: opId,
        vnfInstanceId: instanceId!,
        operation: 'SCALE',
        operationState: 'PROCESSING',
        stateEnteredTime: now,
        startTime: now,
        operationParams: { type: 'SCALE_OUT', aspectId: 'a' } as never,
        journal: [],
        isAutomaticInvocation: false,
        pid: process.pid,
      },
      { vnfPkgId: instance.vnfPkgId, vnfdId: instance.vnfdId, instantiationState: instance.instantiationState },
    );
    await ops.takeLock({ vnfInstanceId: instanceId!, opId, acquiredAt: now, ...holderOf(process.pid, host) });
  });
  process.stdout.write(`HELD ${opId}\n`);
  // Runs until killed, its heartbeat keeping the lease.
  setInterval(() => undefined, 1 << 30);
  return new Promise(() => undefined);
}

run().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(err instanceof VnfmError ? err.exitCode : 1);
  },
);
