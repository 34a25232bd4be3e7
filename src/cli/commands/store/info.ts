import { Command } from 'commander';
import type { StoreInfo, LockInfo } from '../../../store/index.js';
import type { Context } from '../../context.js';
import { withExamples } from '../../help.js';
import { addOutputOptions, printList, printResource, type OutputOptions, type View } from '../../output/printer.js';

/** StoreInfo, and where the database was named (see Context.databaseOrigin). */
type ShownInfo = StoreInfo & { locationFrom?: string };

const infoView: View<ShownInfo> = {
  columns: [],
  toData: (i) => ({
    backend: i.backend,
    location: i.location,
    ...(i.locationFrom ? { locationFrom: i.locationFrom } : {}),
    schemaVersion: i.schemaVersion,
    knownSchemaVersion: i.knownSchemaVersion,
    engineVersion: i.engineVersion,
    locks: i.locks,
  }),
  empty: '',
  name: (i) => i.location,
};

const lockView: View<LockInfo> = {
  columns: [
    { header: 'LOCK', key: 'lock', cell: (l) => l.lock },
    { header: 'OPERATION', key: 'opId', cell: (l) => l.opId ?? '' },
    { header: 'HOLDER', key: 'holder', cell: (l) => `pid ${l.pid} on ${l.hostName ?? '(not recorded)'}` },
    { header: 'SINCE', key: 'since', cell: (l) => l.since },
    { header: 'HEARTBEAT', key: 'heartbeatAt', cell: (l) => l.heartbeatAt ?? '' },
    { header: 'LEASE UNTIL', key: 'leaseExpiresAt', cell: (l) => l.leaseExpiresAt ?? '' },
  ],
  toData: (l) => ({ ...l }),
  empty: 'No locks held.',
  name: (l) => l.lock,
};

export function storeInfoCommand(ctx: Context): Command {
  const cmd = new Command('store-info').description('Show where the state is kept (SQLite file or shared PostgreSQL), its schema version, and who holds locks and leases');
  addOutputOptions(cmd);
  withExamples(cmd, [
    ['the store in use', 'vnfm store-info'],
    ['who holds leases on a shared store', 'VNFM_DATABASE_URL=postgres://vnfm@db/vnfm vnfm store-info -o json'],
  ]);
  return cmd.action(async (flags: OutputOptions) => {
    const stored = await (await ctx.store()).info();
    const from = ctx.databaseOrigin();
    const info: ShownInfo = { ...stored, ...(from ? { locationFrom: from } : {}) };
    const table = flags.output === 'table' || flags.output === 'wide';
    if (!table) {
      await printResource(ctx.io, flags, infoView, info);
      return;
    }
    const { locks: _locks, ...rest } = info;
    await printResource(ctx.io, flags, { ...infoView, toData: () => rest as unknown as Record<string, unknown> }, info);
    if (flags.quiet || flags.column?.length) return;
    ctx.io.out('');
    await printList(ctx.io, { output: flags.output, ...(flags.headers === false ? { headers: false } : {}) }, lockView, info.locks);
  });
}
