import { NotFoundError, UsageError } from '../errors.js';
import type { JournalStep } from '../model/resources.js';
import type { LcmOpOcc, LcmOperationState, PriorState } from '../model/lcm.js';
import type { Db } from './database.js';
import { collect } from './db.js';
import type { Dialect } from './dialect.js';
import { defineLazyJson, RawJson, rawJsonField, type JsonField } from './lazy-json.js';
import type { SecretRepository } from './secret-repository.js';
import { shortTimeSql, storedTimeSql, tableText, uuidSql, type TableRead, type TableText } from './table-text.js';
import { jsonListText, prettyJsonColumn, simpleJsonObject, type SimpleJsonMember } from './json-text.js';
import type { ListRead } from './vnf-instance-repository.js';

interface OpOccRow {
  id: string;
  vnf_instance_id: string;
  operation: LcmOpOcc['operation'];
  operation_state: LcmOperationState;
  state_entered_time: string;
  start_time: string;
  error: string | null;
  is_automatic_invocation: number;
  pid: number | null;
  // lcm_op_occ_details (null where a row has none)
  operation_params: string | null;
  resource_changes: string | null;
  journal: string | null;
  // a summary row's: its instance's name (null without one)
  vnf_instance_name?: string | null;
}

/** The columns of lcm_op_occs. */
const COLUMNS = ['id', 'vnf_instance_id', 'operation', 'operation_state', 'state_entered_time', 'start_time', 'error', 'is_automatic_invocation', 'pid'];
/**
 * What a table of occurrences shows (-o wide's columns too), and its
 * instance's name in the same query: not isAutomaticInvocation or pid.
 */
const SUMMARY_SELECT = `SELECT ${COLUMNS.filter((c) => c !== 'is_automatic_invocation' && c !== 'pid')
  .map((c) => 'o.' + c)
  .join(', ')}, i.name AS vnf_instance_name FROM lcm_op_occs o LEFT JOIN vnf_instances i ON i.id = o.vnf_instance_id`;
/**
 * An operation's journal as one JSON array: its steps' text (migration 14,
 * a row a step) joined in their order. `op` is the SQL of the operation's id.
 */
export const journalText = (op: string): string =>
  `(SELECT '[' || coalesce(string_agg(s.step, ',' ORDER BY s.seq), '') || ']' FROM lcm_op_occ_journal_steps s WHERE s.op_id = ${op})`;
/** Appends a step (its JSON text) to an operation's journal: the parameters are the operation's id, twice, and the step. */
const APPEND_JOURNAL_STEP = 'INSERT INTO lcm_op_occ_journal_steps (op_id, seq, step) SELECT ?, coalesce(max(seq) + 1, 0), ? FROM lcm_op_occ_journal_steps WHERE op_id = ?';

/** The JSON columns, by the attribute each holds: error in lcm_op_occs, the journal in its steps, the others in lcm_op_occ_details. */
const JSON_COLUMNS: [attribute: string, column: string, as: string][] = [
  ['operationParams', 'd.operation_params', 'operation_params'],
  ['error', 'o.error', 'error'],
  ['resourceChanges', 'd.resource_changes', 'resource_changes'],
  ['journal', journalText('o.id'), 'journal'],
];
const SCALAR_COLUMNS = COLUMNS.filter((c) => c !== 'error').map((c) => 'o.' + c);

/**
 * The SELECT of whole rows (the row and its details, migration 12; not the
 * prior state, which only a rollback reads: priorState()), or of the scalar
 * columns and the JSON columns of the attributes `keeps` names; `pretty`:
 * those pretty-printed (ListRead.rawJson). The details are joined only when
 * one of theirs is read.
 */
function selectOf(keeps: ((attribute: string) => boolean) | undefined, pretty: boolean, d?: Dialect): string {
  const read = JSON_COLUMNS.filter(([attribute]) => !keeps || keeps(attribute));
  // The journal is JSON as its steps were written (JSON.stringify's): valid, and printed as it is.
  const json = read.map(([attribute, column, as]) =>
    !pretty || !d ? `${column} AS ${as}` : attribute === 'journal' ? `${d.prettyBuilt(column)} AS ${as}` : prettyJsonColumn(d, column, as),
  );
  const join = read.some(([, column]) => column.startsWith('d.')) ? ' LEFT JOIN lcm_op_occ_details d ON d.id = o.id' : '';
  return `SELECT ${[...SCALAR_COLUMNS, ...json].join(', ')} FROM lcm_op_occs o${join}`;
}
const READ_WHOLE = selectOf(undefined, false);
/**
 * An occurrence's simple attributes as JSON (ListRead.simpleJson), in the
 * order its JSON form prints them; vnfm cancels no operation, so SOL003's
 * mandatory isCancelPending is false.
 */
const SIMPLE_JSON: SimpleJsonMember[] = [
  { key: 'id', column: 'o.id' },
  { key: 'operationState', column: 'o.operation_state' },
  { key: 'stateEnteredTime', column: 'o.state_entered_time' },
  { key: 'startTime', column: 'o.start_time' },
  { key: 'vnfInstanceId', column: 'o.vnf_instance_id' },
  { key: 'operation', column: 'o.operation' },
  { key: 'isAutomaticInvocation', column: 'o.is_automatic_invocation', boolean: true },
  { key: 'isCancelPending', column: '0', boolean: true },
];
const simpleJsonSelect = (d: Dialect): string => `SELECT ${simpleJsonObject(d, SIMPLE_JSON, 'item')}, o.start_time FROM lcm_op_occs o`;
/**
 * Rows per page a list reads at once: few enough that a page's text (a few
 * hundred KB) is garbage before V8 moves it out of its young generation.
 */
const PAGE = 100;
/** Summary rows (and simpleJson items) per page: small rows, so more of them. */
const SUMMARY_PAGE = 2000;

/** What op-list narrows to; `since` (inclusive) and `until` (exclusive) bound the start time, ISO 8601 in UTC as stored. */
export interface OpOccFilter {
  vnfInstanceId?: string;
  state?: LcmOperationState;
  operation?: string;
  since?: string;
  until?: string;
}

function whereOf(filter: OpOccFilter): string[] {
  const where: string[] = [];
  if (filter.vnfInstanceId) where.push('o.vnf_instance_id = @vnfInstanceId');
  if (filter.state) where.push('o.operation_state = @state');
  if (filter.operation) where.push('o.operation = @operation');
  if (filter.since) where.push('o.start_time >= @since');
  if (filter.until) where.push('o.start_time < @until');
  return where;
}

function toOpOcc(r: OpOccRow, json: JsonField = defineLazyJson): LcmOpOcc {
  // Built in the order the fields are printed; the JSON blobs (the journal above all) parsed when first read.
  const o: Record<string, unknown> = {
    id: r.id,
    vnfInstanceId: r.vnf_instance_id,
    operation: r.operation,
    operationState: r.operation_state,
    stateEnteredTime: r.state_entered_time,
    startTime: r.start_time,
  };
  // A summary row (a table's) has no operation_params, resource_changes or journal.
  if (r.operation_params !== undefined) json(o, 'operationParams', r.operation_params ?? '{}');
  if (r.error != null) json(o, 'error', r.error);
  if (r.resource_changes != null) json(o, 'resourceChanges', r.resource_changes);
  if (r.journal !== undefined) json(o, 'journal', r.journal ?? '[]');
  // A summary row has neither.
  if (r.is_automatic_invocation !== undefined) o['isAutomaticInvocation'] = r.is_automatic_invocation === 1;
  if (r.pid != null) o['pid'] = r.pid;
  // A summary item's, for the table's VNF column ('' for an instance without a name).
  if (r.vnf_instance_name !== undefined) o['vnfInstanceName'] = r.vnf_instance_name ?? '';
  return o as unknown as LcmOpOcc;
}

/**
 * Who holds an instance's operation lock: the process (pid and start time),
 * its boot and its host. Locks taken before migration 6 have the pid alone.
 */
export interface VnfLock {
  vnfInstanceId: string;
  opId: string;
  pid: number;
  acquiredAt: string;
  hostName?: string;
  hostId?: string;
  bootId?: string;
  startTime?: string;
}

interface LockRow {
  vnf_instance_id: string;
  op_id: string;
  pid: number;
  acquired_at: string;
  host_name: string | null;
  host_id: string | null;
  boot_id: string | null;
  start_time: string | null;
}

/**
 * LCM operation occurrences and the per-instance operation locks. Journal
 * steps are appended with one statement each, so a step is on disk before
 * the driver takes it.
 */
export class LcmOpOccRepository {
  /** `secrets`: seals a request's sealed values again under the active key if a rotation ran since; refuses locks during a rotation. */
  constructor(
    private readonly db: Db,
    private readonly secrets?: SecretRepository,
  ) {}

  /** Runs `fn` in an IMMEDIATE transaction: the write lock is taken first, so check-then-write is atomic across processes. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.db.transaction(fn).immediate();
  }

  /** `since` (inclusive) and `until` (exclusive) bound the start time, ISO 8601 in UTC as stored. */
  async list(filter: OpOccFilter = {}): Promise<LcmOpOcc[]> {
    return collect(this.read(filter));
  }

  /**
   * The occurrences in pages of PAGE rows (oldest first), so a list of 20 000
   * never holds them all. With `summary` each carries what a table shows:
   * not its operation parameters, resource changes or journal, and its
   * instance's name as `vnfInstanceName` ('' for none). With `simpleJson`
   * each is a RawJson (ListRead), not an occurrence.
   */
  async *read(filter: OpOccFilter = {}, how: ListRead = {}): AsyncGenerator<LcmOpOcc> {
    const where = whereOf(filter);
    // Keyset pages (index lcm_op_occs_start): each starts after the last row of the one before.
    const select = how.summary ? SUMMARY_SELECT : how.simpleJson ? simpleJsonSelect(this.db.dialect) : selectOf(how.attributes, Boolean(how.rawJson), this.db.dialect);
    const convert = how.simpleJson
      ? (r: OpOccRow) => new RawJson((r as unknown as { item: string }).item) as unknown as LcmOpOcc
      : (r: OpOccRow) => toOpOcc(r, how.rawJson ? rawJsonField : defineLazyJson);
    const page = (after: boolean) => {
      const conds = after ? [...where, '(o.start_time, o.rowid) > (@afterTime, @afterRow)'] : where;
      return `${select.replace('SELECT ', 'SELECT o.rowid AS row_id, ')} ${conds.length ? 'WHERE ' + conds.join(' AND ') : ''} ORDER BY o.start_time, o.rowid LIMIT @pageSize`;
    };
    // Prepared once: a list of 20 000 is 200 pages.
    const first = this.db.prepare(page(false));
    const next = this.db.prepare(page(true));
    let left = how.limit ?? Infinity;
    let last: (OpOccRow & { row_id: number }) | undefined;
    while (left > 0) {
      const size = Math.min(how.summary || how.simpleJson ? SUMMARY_PAGE : PAGE, left);
      const rows = (await (last === undefined ? first : next).all({
        ...filter,
        pageSize: size,
        ...(last ? { afterTime: last.start_time, afterRow: last.row_id } : {}),
      })) as (OpOccRow & { row_id: number })[];
      for (const r of rows) yield convert(r);
      if (rows.length < size) return;
      left -= rows.length;
      last = rows[rows.length - 1];
    }
  }

  /**
   * op-list's table (opListView's columns, -o wide's too) as SQLite writes
   * it (TableText), or undefined where the printer's table must print it.
   */
  tableText(filter: OpOccFilter, how: TableRead): TableText | undefined {
    const nameless = "(i.name IS NULL OR i.name = '')";
    const vnf = `CASE WHEN ${nameless} THEN substr(o.vnf_instance_id, 1, 8) ELSE i.name END`;
    // An instance without a name shown by its short id: not a uuid, it is shown whole.
    const odd = [`(${nameless} AND NOT ${uuidSql('o.vnf_instance_id')})`];
    const error = "CASE WHEN json_valid(o.error) AND json_type(o.error, '$.title') = 'text' THEN json_extract(o.error, '$.title') END";
    const cells = how.wide
      ? ['o.id', 'o.operation', 'o.operation_state', vnf, 'o.start_time', 'o.vnf_instance_id', 'o.state_entered_time', `CASE WHEN o.error IS NULL THEN '' ELSE ${error} END`]
      : ['substr(o.id, 1, 8)', 'o.operation', 'o.operation_state', vnf, shortTimeSql('o.start_time')];
    if (how.wide) {
      // An error JSON.parse reads otherwise than SQLite: no string title, or a surrogate escaped.
      odd.push(`(o.error IS NOT NULL AND (${error}) IS NULL)`, "instr(lower(o.error), '\\ud') > 0");
    } else {
      odd.push(`NOT ${uuidSql('o.id')}`, `NOT ${storedTimeSql('o.start_time')}`);
    }
    const where = whereOf(filter);
    const from = `lcm_op_occs o LEFT JOIN vnf_instances i ON i.id = o.vnf_instance_id${where.length ? ' WHERE ' + where.join(' AND ') : ''}`;
    return tableText(this.db, {
      cells,
      // Operations and states are the schema's (CHECK), short ids and times ASCII unless the row is odd.
      anyText: how.wide ? [0, 3, 4, 5, 6, 7] : [3],
      odd,
      from,
      order: 'o.start_time, o.rowid',
      params: { ...filter },
      ...(how.limit === undefined ? {} : { limit: how.limit }),
      trim: how.wide,
    });
  }

  /**
   * op-list's default -o json (each occurrence's simple attributes, ListRead.simpleJson's
   * items) as SQLite writes it (jsonListText), or undefined on PostgreSQL.
   */
  jsonText(filter: OpOccFilter, how: { limit?: number }): Iterable<string> | undefined {
    return jsonListText(this.db, {
      kept: { table: 'lcm_op_occ_json_items', keys: ['start_time', 'row_id'], on: 'o.rowid = k.row_id' },
      from: 'lcm_op_occs o',
      where: whereOf(filter),
      params: { ...filter },
      ...(how.limit === undefined ? {} : { limit: how.limit }),
    });
  }

  /** By id, or by a unique id prefix (at least 8 characters), as uuids are long to type. */
  async find(ref: string): Promise<LcmOpOcc | undefined> {
    const exact = (await this.db.prepare(`${READ_WHOLE} WHERE o.id = ?`).get(ref)) as OpOccRow | undefined;
    if (exact) return toOpOcc(exact);
    if (ref.length < 8) return undefined;
    const rows = (await this.db.prepare(`${READ_WHOLE} WHERE o.id LIKE ? ESCAPE '\\' LIMIT 2`).all(ref.replace(/[%_\\]/g, '\\$&') + '%')) as OpOccRow[];
    if (rows.length > 1) throw new UsageError(`"${ref}" is the start of several occurrence ids`, { hint: 'give the whole id (vnfm op-list)' });
    return rows[0] && toOpOcc(rows[0]);
  }

  async get(ref: string): Promise<LcmOpOcc> {
    const found = await this.find(ref);
    if (!found) throw new NotFoundError(`lcm operation occurrence "${ref}" not found`, { hint: 'list them with: vnfm op-list' });
    return found;
  }

  async insert(op: LcmOpOcc, prior: PriorState): Promise<void> {
    await this.db
      .transaction(async () => this.insertRow(this.secrets ? await this.secrets.sealForWrite(op) : op, this.secrets ? await this.secrets.sealForWrite(prior) : prior))
      .immediate();
  }

  private async insertRow(op: LcmOpOcc, prior: PriorState): Promise<void> {
    await this.db.prepare(`INSERT INTO lcm_op_occs (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`).run({
      id: op.id,
      vnf_instance_id: op.vnfInstanceId,
      operation: op.operation,
      operation_state: op.operationState,
      state_entered_time: op.stateEnteredTime,
      start_time: op.startTime,
      error: op.error ? JSON.stringify(op.error) : null,
      is_automatic_invocation: op.isAutomaticInvocation ? 1 : 0,
      pid: op.pid ?? null,
    });
    await this.db
      .prepare('INSERT INTO lcm_op_occ_details (id, operation_params, resource_changes) VALUES (?, ?, ?)')
      .run(op.id, JSON.stringify(op.operationParams), op.resourceChanges ? JSON.stringify(op.resourceChanges) : null);
    for (const step of op.journal) await this.appendStep(op.id, JSON.stringify(step));
    await this.db.prepare('INSERT INTO lcm_op_occ_prior_states (id, prior_state) VALUES (?, ?)').run(op.id, JSON.stringify(prior));
  }

  /** Moves the occurrence to `state`; `error` and `resourceChanges` are replaced when given (null clears). */
  async setState(
    id: string,
    state: LcmOperationState,
    now: string,
    more: { error?: LcmOpOcc['error'] | null; resourceChanges?: LcmOpOcc['resourceChanges']; pid?: number | null } = {},
  ): Promise<LcmOpOcc> {
    const sets = ['operation_state = @state', 'state_entered_time = @now'];
    if (more.error !== undefined) sets.push('error = @error');
    if (more.pid !== undefined) sets.push('pid = @pid');
    // One transaction (a savepoint inside the caller's): the state and the resource changes move together.
    await this.db
      .transaction(async () => {
        const r = await this.db.prepare(`UPDATE lcm_op_occs SET ${sets.join(', ')} WHERE id = @id`).run({
          id,
          state,
          now,
          ...(more.error !== undefined ? { error: more.error ? JSON.stringify(more.error) : null } : {}),
          ...(more.pid !== undefined ? { pid: more.pid ?? null } : {}),
        });
        if (r.changes === 0) throw new NotFoundError(`lcm operation occurrence "${id}" not found`);
        if (more.resourceChanges !== undefined) {
          await this.db.prepare('UPDATE lcm_op_occ_details SET resource_changes = ? WHERE id = ?').run(more.resourceChanges ? JSON.stringify(more.resourceChanges) : null, id);
        }
      })
      .immediate();
    return this.get(id);
  }

  /** One step more in the occurrence's journal: a row of its own, whatever the journal holds already (migration 14). */
  async appendJournal(id: string, step: JournalStep): Promise<void> {
    await this.appendStep(id, JSON.stringify(step));
  }

  private async appendStep(id: string, text: string): Promise<void> {
    await this.db.prepare(APPEND_JOURNAL_STEP).run(id, text, id);
  }

  /**
   * Steps of the occurrence's journal at the places (seq) given, by one
   * statement: atomic alone, and on SQLite already run when this returns its
   * promise (the engine's journal relies on it: a step is on disk before the
   * driver takes it).
   */
  insertJournalSteps(id: string, steps: readonly { seq: number; step: JournalStep }[]): Promise<unknown> {
    return this.db
      .prepare(`INSERT INTO lcm_op_occ_journal_steps (op_id, seq, step) VALUES ${steps.map(() => '(?, ?, ?)').join(', ')}`)
      .run(...steps.flatMap(({ seq, step }) => [id, seq, JSON.stringify(step)]));
  }

  async journal(id: string): Promise<JournalStep[]> {
    const rows = (await this.db.prepare('SELECT step FROM lcm_op_occ_journal_steps WHERE op_id = ? ORDER BY seq').all(id)) as { step: string }[];
    return rows.map((r) => JSON.parse(r.step) as JournalStep);
  }

  async priorState(id: string): Promise<PriorState | undefined> {
    const row = (await this.db.prepare('SELECT prior_state FROM lcm_op_occ_prior_states WHERE id = ?').get(id)) as { prior_state: string | null } | undefined;
    return row?.prior_state ? (JSON.parse(row.prior_state) as PriorState) : undefined;
  }

  /** Occurrences of the instance that are not finished (anything but COMPLETED, FAILED, ROLLED_BACK). */
  async unfinished(vnfInstanceId: string): Promise<LcmOpOcc[]> {
    return (
      (await this.db
        .prepare(`${READ_WHOLE} WHERE o.vnf_instance_id = ? AND o.operation_state NOT IN ('COMPLETED', 'FAILED', 'ROLLED_BACK') ORDER BY o.start_time, o.rowid`)
        .all(vnfInstanceId)) as OpOccRow[]
    ).map((r) => toOpOcc(r));
  }

  async lock(vnfInstanceId: string): Promise<VnfLock | undefined> {
    const row = (await this.db.prepare('SELECT * FROM vnf_locks WHERE vnf_instance_id = ?').get(vnfInstanceId)) as LockRow | undefined;
    return (
      row && {
        vnfInstanceId: row.vnf_instance_id,
        opId: row.op_id,
        pid: row.pid,
        acquiredAt: row.acquired_at,
        ...(row.host_name === null ? {} : { hostName: row.host_name }),
        ...(row.host_id === null ? {} : { hostId: row.host_id }),
        ...(row.boot_id === null ? {} : { bootId: row.boot_id }),
        ...(row.start_time === null ? {} : { startTime: row.start_time }),
      }
    );
  }

  /** The instances that hold a lock now. */
  async lockedInstances(): Promise<string[]> {
    return ((await this.db.prepare('SELECT vnf_instance_id AS id FROM vnf_locks').all()) as { id: string }[]).map((r) => r.id);
  }

  /** Takes the lock; the caller has checked, in the same exclusive transaction, that none is held. */
  async takeLock(lock: VnfLock): Promise<void> {
    // An operation copies sealed values it read into what it writes at its end; no rotation may retire their key meanwhile.
    await this.secrets?.assertNoRotation();
    await this.db
      .prepare('INSERT INTO vnf_locks (vnf_instance_id, op_id, pid, acquired_at, host_name, host_id, boot_id, start_time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(lock.vnfInstanceId, lock.opId, lock.pid, lock.acquiredAt, lock.hostName ?? null, lock.hostId ?? null, lock.bootId ?? null, lock.startTime ?? null);
  }

  async releaseLock(vnfInstanceId: string, opId: string): Promise<void> {
    await this.db.prepare('DELETE FROM vnf_locks WHERE vnf_instance_id = ? AND op_id = ?').run(vnfInstanceId, opId);
  }
}
