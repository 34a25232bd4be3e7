import { ConflictError, NotFoundError, UsageError } from '../errors.js';
import type { VnfInstance } from '../model/lcm.js';
import type { Db } from './database.js';
import { byIdPrefix } from './id-prefix.js';
import { checkName } from './names.js';
import { defineLazyJson, RawJson, rawJsonField, type JsonField } from './lazy-json.js';
import type { SecretRepository } from './secret-repository.js';
import type { Dialect } from './dialect.js';
export type { VnfInstanceFilter } from './vnf-instance-filter.js';
import { whereOf, type VnfInstanceFilter } from './vnf-instance-filter.js';
import { collect } from './db.js';
import { jsonListText, prettyJsonColumn, simpleJsonObject, type SimpleJsonMember } from './json-text.js';
import { shortIdSql, tableText, uuidSql, type TableRead, type TableText } from './table-text.js';

interface InstanceRow {
  id: string;
  name: string | null;
  description: string;
  vnfd_id: string;
  vnf_pkg_id: string;
  vnf_provider: string;
  vnf_product_name: string;
  vnf_software_version: string;
  vnfd_version: string;
  instantiation_state: VnfInstance['instantiationState'];
  vim_id: string | null;
  vim_connection_info: string | null;
  vnfc_count: number | null;
  created_at: string;
  updated_at: string;
  // vnf_instance_details (migration 12): the large JSON columns
  instantiated_vnf_info: string | null;
  metadata: string | null;
  extensions: string | null;
  vnf_configurable_properties: string | null;
}

/** The columns of vnf_instances; the rest are vnf_instance_details'. */
const COLUMNS: (keyof InstanceRow)[] = [
  'id',
  'name',
  'description',
  'vnfd_id',
  'vnf_pkg_id',
  'vnf_provider',
  'vnf_product_name',
  'vnf_software_version',
  'vnfd_version',
  'instantiation_state',
  'vim_id',
  'vim_connection_info',
  'vnfc_count',
  'created_at',
  'updated_at',
];
const DETAIL_COLUMNS: (keyof InstanceRow)[] = ['id', 'instantiated_vnf_info', 'metadata', 'extensions', 'vnf_configurable_properties'];

/**
 * The JSON columns, by the attribute each holds: vim_connection_info in
 * vnf_instances, the others in vnf_instance_details.
 */
const JSON_COLUMNS: [attribute: string, column: string][] = [
  ['vimConnectionInfo', 'i.vim_connection_info'],
  ['instantiatedVnfInfo', 'd.instantiated_vnf_info'],
  ['metadata', 'd.metadata'],
  ['extensions', 'd.extensions'],
  ['vnfConfigurableProperties', 'd.vnf_configurable_properties'],
];
const SCALAR_COLUMNS = COLUMNS.filter((c) => c !== 'vim_connection_info').map((c) => 'i.' + c);

/**
 * The SELECT of whole rows, or of the scalar columns and the JSON columns of
 * the attributes `keeps` names; `pretty`: those pretty-printed
 * (ListRead.rawJson). The details are joined only when one of theirs is read.
 */
function selectOf(keeps: ((attribute: string) => boolean) | undefined, pretty: boolean, d?: Dialect): string {
  const json = JSON_COLUMNS.filter(([attribute]) => !keeps || keeps(attribute)).map(([, column]) => {
    const as = column.slice(2);
    return pretty && d ? prettyJsonColumn(d, column, as) : column;
  });
  const join = json.some((c) => c.includes('d.')) ? ' LEFT JOIN vnf_instance_details d ON d.id = i.id' : '';
  return `SELECT ${[...SCALAR_COLUMNS, ...json].join(', ')} FROM vnf_instances i${join}`;
}

/** An instance's simple attributes as JSON (ListRead.simpleJson), in the order toInstance gives them; a name or VIM id '' is left out, as the view leaves it out. */
const SIMPLE_JSON: SimpleJsonMember[] = [
  { key: 'id', column: 'i.id' },
  { key: 'vnfInstanceName', column: 'i.name', optional: true },
  { key: 'vnfInstanceDescription', column: 'i.description' },
  { key: 'vnfdId', column: 'i.vnfd_id' },
  { key: 'vnfPkgId', column: 'i.vnf_pkg_id' },
  { key: 'vnfProvider', column: 'i.vnf_provider' },
  { key: 'vnfProductName', column: 'i.vnf_product_name' },
  { key: 'vnfSoftwareVersion', column: 'i.vnf_software_version' },
  { key: 'vnfdVersion', column: 'i.vnfd_version' },
  { key: 'instantiationState', column: 'i.instantiation_state' },
  { key: 'vimId', column: 'i.vim_id', optional: true },
  { key: 'createdAt', column: 'i.created_at' },
  { key: 'updatedAt', column: 'i.updated_at' },
];
const simpleJsonSelect = (d: Dialect): string => `SELECT ${simpleJsonObject(d, SIMPLE_JSON, 'item')}, i.created_at, i.id FROM vnf_instances i`;

/** A whole instance: its row and its details. */
const SELECT_WHOLE = selectOf(undefined, false);

const textOf = (o: Record<string, unknown> | undefined): string | null => (o && Object.keys(o).length ? JSON.stringify(o) : null);

function toInstance(r: InstanceRow, json: JsonField = defineLazyJson): VnfInstance {
  // Built in the order the fields are printed; the JSON blobs parsed when first read.
  const i: Record<string, unknown> = { id: r.id };
  if (r.name !== null) i['vnfInstanceName'] = r.name;
  Object.assign(i, {
    vnfInstanceDescription: r.description,
    vnfdId: r.vnfd_id,
    vnfPkgId: r.vnf_pkg_id,
    vnfProvider: r.vnf_provider,
    vnfProductName: r.vnf_product_name,
    vnfSoftwareVersion: r.vnf_software_version,
    vnfdVersion: r.vnfd_version,
    instantiationState: r.instantiation_state,
  });
  if (r.vim_id !== null) i['vimId'] = r.vim_id;
  if (r.vim_connection_info != null) json(i, 'vimConnectionInfo', r.vim_connection_info);
  if (r.instantiated_vnf_info != null) json(i, 'instantiatedVnfInfo', r.instantiated_vnf_info);
  if (r.metadata != null) json(i, 'metadata', r.metadata);
  if (r.extensions != null) json(i, 'extensions', r.extensions);
  if (r.vnf_configurable_properties != null) json(i, 'vnfConfigurableProperties', r.vnf_configurable_properties);
  i['createdAt'] = r.created_at;
  i['updatedAt'] = r.updated_at;
  return i as unknown as VnfInstance;
}

/** How a list is read: whole rows or a table's summary, and at most how many. */
export interface ListRead {
  summary?: boolean;
  limit?: number;
  /**
   * Whole rows for a list's `-o json` writer: each JSON column is a RawJson
   * value, not parsed, and SQLite hands its text already pretty-printed as
   * JSON.stringify(value, null, 2) prints it (json_pretty), which is what the
   * writer would otherwise do to it in JavaScript. A column that is not valid
   * JSON, and every column on PostgreSQL, comes as stored (compact).
   */
  rawJson?: boolean;
  /**
   * The complex attributes (JSON columns) to read, by name
   * (`instantiatedVnfInfo`, `operationParams`...); absent: all. The others
   * are left out of the items, and a list that keeps none reads no side
   * table.
   */
  attributes?: (attribute: string) => boolean;
  /**
   * Each item a RawJson, not a record: the record's simple attributes (no
   * JSON column) as its JSON form prints them, built by the database in the
   * same pass as the read — what a list's -o json prints by default (SOL013's
   * complex attributes left out), with no object made per row, as
   * JSON.stringify(value, null, 2) prints it (simpleJsonObject).
   */
  simpleJson?: boolean;
}

/**
 * Rows per page a list reads at once: few enough that a page's text (a few
 * hundred KB) is garbage before V8 moves it out of its young generation (an
 * instance's info is some 5 KB pretty-printed: at 100 a page, vnf-list -o json
 * over 10 000 peaked at 95 MiB, at 50 at 70 MiB, for the same CPU).
 */
const PAGE = 50;
/** Summary rows (and simpleJson items) per page: small rows, so more of them. */
const SUMMARY_PAGE = 2000;

/**
 * What a table of instances shows (vnf-list's columns, -o wide's too): the
 * VNFC count is kept beside the instance info (vnfc_count), so a table reads
 * vnf_instances alone, whose rows are small.
 */
const SUMMARY_SELECT = [
  'id',
  'name',
  'vnfd_id',
  'vnf_pkg_id',
  'vnf_product_name',
  'vnf_software_version',
  'instantiation_state',
  'vim_id',
  'CASE WHEN vim_id IS NULL THEN vim_connection_info END AS vim_connection_info',
  'vnfc_count',
  'created_at',
].join(', ');

type SummaryRow = Pick<
  InstanceRow,
  'id' | 'name' | 'vnfd_id' | 'vnf_pkg_id' | 'vnf_product_name' | 'vnf_software_version' | 'instantiation_state' | 'vim_id' | 'vim_connection_info' | 'vnfc_count' | 'created_at'
>;

/** The length of instantiatedVnfInfo.vnfcInfo, as SQLite's json_array_length counts it (null without it, 0 for a non-array). */
function vnfcCountOf(i: VnfInstance): number | null {
  const vnfcs = (i.instantiatedVnfInfo as { vnfcInfo?: unknown } | undefined)?.vnfcInfo;
  if (vnfcs === undefined || vnfcs === null) return null;
  return Array.isArray(vnfcs) ? vnfcs.length : 0;
}

/** A summary row as an instance: the fields a table reads, and `vnfcCount` (null when not instantiated). */
function toSummary(r: SummaryRow): VnfInstance {
  const i = {
    id: r.id,
    vnfInstanceName: r.name ?? undefined,
    vnfdId: r.vnfd_id,
    vnfPkgId: r.vnf_pkg_id,
    vnfProductName: r.vnf_product_name,
    vnfSoftwareVersion: r.vnf_software_version,
    instantiationState: r.instantiation_state,
    vimId: r.vim_id ?? undefined,
    createdAt: r.created_at,
    vnfcCount: r.vnfc_count,
  };
  if (r.vim_connection_info !== null) defineLazyJson(i, 'vimConnectionInfo', r.vim_connection_info);
  return i as unknown as VnfInstance;
}

function toRow(i: VnfInstance): InstanceRow {
  return {
    id: i.id,
    name: i.vnfInstanceName ?? null,
    description: i.vnfInstanceDescription,
    vnfd_id: i.vnfdId,
    vnf_pkg_id: i.vnfPkgId,
    vnf_provider: i.vnfProvider,
    vnf_product_name: i.vnfProductName,
    vnf_software_version: i.vnfSoftwareVersion,
    vnfd_version: i.vnfdVersion,
    instantiation_state: i.instantiationState,
    vim_id: i.vimId ?? null,
    vim_connection_info: i.vimConnectionInfo ? JSON.stringify(i.vimConnectionInfo) : null,
    vnfc_count: vnfcCountOf(i),
    instantiated_vnf_info: i.instantiatedVnfInfo ? JSON.stringify(i.instantiatedVnfInfo) : null,
    metadata: textOf(i.metadata),
    extensions: textOf(i.extensions),
    vnf_configurable_properties: textOf(i.vnfConfigurableProperties),
    created_at: i.createdAt,
    updated_at: i.updatedAt,
  };
}

function pick(row: InstanceRow, columns: (keyof InstanceRow)[]): Record<string, unknown> {
  return Object.fromEntries(columns.map((c) => [c, row[c]]));
}

/**
 * VNF instances. A package's usage state follows its instances: creating one
 * makes the package IN_USE, deleting its last one NOT_IN_USE, in the same
 * transaction.
 */
export class VnfInstanceRepository {
  /** `secrets`: seals the sealed values an instance keeps again under the active key if a rotation ran since they were sealed. */
  constructor(
    private readonly db: Db,
    private readonly secrets?: SecretRepository,
  ) {}

  /** The row to write, inside the write transaction (see SecretRepository.sealForWrite). */
  private async rowOf(instance: VnfInstance): Promise<InstanceRow> {
    return toRow(this.secrets ? await this.secrets.sealForWrite(instance) : instance);
  }

  async list(filter: VnfInstanceFilter = {}): Promise<VnfInstance[]> {
    return collect(this.read(filter));
  }

  /**
   * The instances in pages of PAGE rows (oldest first), so a list of 10 000
   * never holds them all. With `summary` each carries what a table shows and
   * not the rest (instantiatedVnfInfo, metadata...; vimConnectionInfo only
   * where no vimId names the VIM): `vnfcCount` stands for the VNFC column.
   * With `simpleJson` each is a RawJson (ListRead), not an instance.
   */
  async *read(filter: VnfInstanceFilter = {}, how: ListRead = {}): AsyncGenerator<VnfInstance> {
    const { where, params } = whereOf(filter, this.db.dialect);
    // Keyset pages (index vnf_instances_created): each starts after the last row of the one before.
    const select = how.summary
      ? `SELECT ${SUMMARY_SELECT} FROM vnf_instances i`
      : how.simpleJson
        ? simpleJsonSelect(this.db.dialect)
        : selectOf(how.attributes, Boolean(how.rawJson), this.db.dialect);
    const page = (after: boolean) => {
      const conds = after ? [...where, '(i.created_at, i.id) > (@afterTime, @afterId)'] : where;
      return `${select} ${conds.length ? 'WHERE ' + conds.join(' AND ') : ''} ORDER BY i.created_at, i.id LIMIT @pageSize`;
    };
    const convert = how.summary
      ? (r: InstanceRow) => toSummary(r)
      : how.simpleJson
        ? (r: InstanceRow) => new RawJson((r as unknown as { item: string }).item) as unknown as VnfInstance
        : (r: InstanceRow) => toInstance(r, how.rawJson ? rawJsonField : defineLazyJson);
    // Prepared once: a list of 20 000 is 200 pages.
    const first = this.db.prepare(page(false));
    const next = this.db.prepare(page(true));
    let left = how.limit ?? Infinity;
    let last: InstanceRow | undefined;
    while (left > 0) {
      const size = Math.min(how.summary || how.simpleJson ? SUMMARY_PAGE : PAGE, left);
      const rows = (await (last === undefined ? first : next).all({
        ...params,
        pageSize: size,
        ...(last ? { afterTime: last.created_at, afterId: last.id } : {}),
      })) as InstanceRow[];
      for (const r of rows) yield convert(r);
      if (rows.length < size) return;
      left -= rows.length;
      last = rows[rows.length - 1];
    }
  }

  /**
   * vnf-list's table (vnfListView's columns, -o wide's too) as SQLite writes
   * it (TableText), or undefined where the printer's table must print it.
   */
  tableText(filter: VnfInstanceFilter, how: TableRead): TableText | undefined {
    // The VIM named at instantiation (its name, else its short id); a VIM given inline goes through the printer.
    const vim = `CASE WHEN i.vim_id IS NULL OR i.vim_id = '' THEN '' WHEN v.id IS NOT NULL THEN v.name ELSE ${shortIdSql('i.vim_id')} END`;
    const pkg = 'CASE WHEN p.id IS NOT NULL THEN coalesce(p.name, p.vnf_product_name) ELSE i.vnf_product_name END';
    const vnfcs = "coalesce(CAST(i.vnfc_count AS TEXT), '')";
    const head = [how.wide ? 'i.id' : 'substr(i.id, 1, 8)', "coalesce(i.name, '')", 'i.instantiation_state', vim, pkg, vnfcs];
    const wide = ["coalesce(i.vim_id, '')", 'i.vnf_pkg_id', 'i.vnf_product_name', 'i.vnf_software_version', 'i.vnfd_id', 'i.created_at'];
    const odd = ['(i.vim_id IS NULL AND i.vim_connection_info IS NOT NULL)', ...(how.wide ? [] : [`NOT ${uuidSql('i.id')}`])];
    const { where, params } = whereOf(filter, this.db.dialect);
    const from = `vnf_instances i LEFT JOIN vims v ON v.id = i.vim_id LEFT JOIN vnf_packages p ON p.id = i.vnf_pkg_id${where.length ? ' WHERE ' + where.join(' AND ') : ''}`;
    const cells = how.wide ? [...head, ...wide] : head;
    // The state is the schema's (CHECK), the VNFC count digits, the short id ASCII unless the row is odd.
    const anyText = cells.map((_, n) => n).filter((n) => n !== 2 && n !== 5 && (how.wide || n !== 0));
    return tableText(this.db, { cells, anyText, odd, from, order: 'i.created_at, i.id', params, ...(how.limit === undefined ? {} : { limit: how.limit }), trim: true });
  }

  /**
   * vnf-list's default -o json (each instance's simple attributes, ListRead.simpleJson's
   * items) as SQLite writes it (jsonListText), or undefined on PostgreSQL.
   */
  jsonText(filter: VnfInstanceFilter, how: { limit?: number }): Iterable<string> | undefined {
    const { where, params } = whereOf(filter, this.db.dialect);
    return jsonListText(this.db, {
      kept: { table: 'vnf_instance_json_items', keys: ['created_at', 'id'], on: 'i.id = k.id' },
      from: 'vnf_instances i',
      where,
      params,
      ...(how.limit === undefined ? {} : { limit: how.limit }),
    });
  }

  /** Each instance's name by id (empty for none), without reading the instances' JSON: for tables that name them. */
  async names(): Promise<Map<string, string>> {
    const rows = (await this.db.prepare('SELECT id, name FROM vnf_instances').all()) as { id: string; name: string | null }[];
    return new Map(rows.map((r) => [r.id, r.name ?? '']));
  }

  /** Finds an instance by id or name; a name shared by several instances is an error. */
  async find(ref: string): Promise<VnfInstance | undefined> {
    const rows = (await this.db.prepare(`${SELECT_WHOLE} WHERE i.id = ? OR i.name = ?`).all(ref, ref)) as InstanceRow[];
    const exact = rows.find((r) => r.id === ref);
    if (exact) return toInstance(exact);
    if (rows.length > 1) {
      throw new UsageError(`"${ref}" names ${rows.length} VNF instances`, { hint: 'use the instance id (vnfm vnf-list)' });
    }
    if (rows[0]) return toInstance(rows[0]);
    const prefixed = await byIdPrefix<InstanceRow>(this.db, 'vnf_instances', ref);
    if (prefixed.length > 1) throw new UsageError(`"${ref}" is the start of several instance ids`, { hint: 'give the whole id (vnfm vnf-list -o wide)' });
    return prefixed[0] && this.byId(prefixed[0].id);
  }

  private async byId(id: string): Promise<VnfInstance | undefined> {
    const row = (await this.db.prepare(`${SELECT_WHOLE} WHERE i.id = ?`).get(id)) as InstanceRow | undefined;
    return row && toInstance(row);
  }

  async get(ref: string): Promise<VnfInstance> {
    const found = await this.find(ref);
    if (!found) throw new NotFoundError(`vnf instance "${ref}" not found`, { hint: 'list the VNF instances with: vnfm vnf-list' });
    return found;
  }

  /** The instance but `exceptId` that has this name, or has it as its id. */
  private async holderOf(name: string, exceptId: string): Promise<{ id: string; name: string | null } | undefined> {
    return (await this.db.prepare('SELECT id, name FROM vnf_instances WHERE (name = ? OR id = ?) AND id <> ? LIMIT 1').get(name, name, exceptId)) as
      { id: string; name: string | null } | undefined;
  }

  /** Whether no instance but `exceptId` has this name (or has it as its id). Inside a write transaction the answer holds until the write. */
  async isNameFree(name: string, exceptId = ''): Promise<boolean> {
    return (await this.holderOf(name, exceptId)) === undefined;
  }

  /** Throws ConflictError (exit 4) where isNameFree is false. */
  async assertNameFree(name: string, exceptId = ''): Promise<void> {
    const other = await this.holderOf(name, exceptId);
    const what = other?.name === name ? `a VNF instance named "${name}" already exists (${other.id})` : `"${name}" is the id of another VNF instance`;
    if (other) throw new ConflictError(what, { hint: 'choose another name (vnfm vnf-list shows the names taken)' });
  }

  /** A name being set: the rules (exit 2) and uniqueness (exit 4), checked in the write's own transaction. */
  private async checkNewName(instance: VnfInstance): Promise<void> {
    if (instance.vnfInstanceName === undefined) return;
    checkName('instance', instance.vnfInstanceName);
    await this.assertNameFree(instance.vnfInstanceName, instance.id);
  }

  /**
   * Inserts the instance and marks its package IN_USE. `checkName` (the use cases): its name must be usable and free,
   * checked in the insert's transaction, so no other client takes it between check and write.
   */
  async insert(instance: VnfInstance, opts: { checkName?: boolean } = {}): Promise<void> {
    await this.db
      .transaction(async () => {
        if (opts.checkName) await this.checkNewName(instance);
        const row = await this.rowOf(instance);
        await this.db.prepare(`INSERT INTO vnf_instances (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((c) => '@' + c).join(', ')})`).run(pick(row, COLUMNS));
        await this.db
          .prepare(`INSERT INTO vnf_instance_details (${DETAIL_COLUMNS.join(', ')}) VALUES (${DETAIL_COLUMNS.map((c) => '@' + c).join(', ')})`)
          .run(pick(row, DETAIL_COLUMNS));
        await this.db.prepare("UPDATE vnf_packages SET usage_state = 'IN_USE', updated_at = ? WHERE id = ?").run(instance.updatedAt, instance.vnfPkgId);
      })
      .immediate();
  }

  /**
   * Writes every field. When the package changed (change of package), the old
   * package becomes NOT_IN_USE if no other instance uses it, and the new one
   * IN_USE. `checkName`: a name other than the stored one must be usable
   * and free, as insert checks it (a name kept is not checked again). Callers
   * run it inside their own transaction where it must go with other writes.
   */
  async update(instance: VnfInstance, opts: { checkName?: boolean } = {}): Promise<void> {
    // Its own transaction (a savepoint inside the caller's): the key and name checks and the write go together.
    await this.db
      .transaction(async () => {
        const before = (await this.db.prepare('SELECT vnf_pkg_id, name FROM vnf_instances WHERE id = ?').get(instance.id)) as
          { vnf_pkg_id: string; name: string | null } | undefined;
        if (!before) throw new NotFoundError(`vnf instance "${instance.id}" not found`);
        if (opts.checkName && (instance.vnfInstanceName ?? null) !== before.name) await this.checkNewName(instance);
        const row = await this.rowOf(instance);
        const sets = COLUMNS.filter((c) => c !== 'id' && c !== 'created_at').map((c) => `${c} = @${c}`);
        await this.db.prepare(`UPDATE vnf_instances SET ${sets.join(', ')} WHERE id = @id`).run(pick(row, COLUMNS));
        const details = DETAIL_COLUMNS.filter((c) => c !== 'id');
        await this.db
          .prepare(
            `INSERT INTO vnf_instance_details (${DETAIL_COLUMNS.join(', ')}) VALUES (${DETAIL_COLUMNS.map((c) => '@' + c).join(', ')}) ` +
              `ON CONFLICT (id) DO UPDATE SET ${details.map((c) => `${c} = excluded.${c}`).join(', ')}`,
          )
          .run(pick(row, DETAIL_COLUMNS));
        if (before.vnf_pkg_id !== instance.vnfPkgId) {
          await this.db.prepare("UPDATE vnf_packages SET usage_state = 'IN_USE', updated_at = ? WHERE id = ?").run(instance.updatedAt, instance.vnfPkgId);
          await this.releasePackage(before.vnf_pkg_id, instance.updatedAt);
        }
      })
      .immediate();
  }

  /** Deletes a NOT_INSTANTIATED instance (and its occurrences); its package is released if this was its last instance. */
  async delete(id: string, now: string): Promise<void> {
    await this.db
      .transaction(async () => {
        const row = (await this.db.prepare('SELECT instantiation_state, vnf_pkg_id FROM vnf_instances WHERE id = ?').get(id)) as
          { instantiation_state: string; vnf_pkg_id: string } | undefined;
        if (!row) throw new NotFoundError(`vnf instance "${id}" not found`);
        if (row.instantiation_state !== 'NOT_INSTANTIATED') {
          throw new ConflictError(`vnf instance ${id} is ${row.instantiation_state}`, { hint: `terminate it first: vnfm vnf-terminate ${id}` });
        }
        await this.db.prepare('DELETE FROM vnf_instances WHERE id = ?').run(id);
        await this.releasePackage(row.vnf_pkg_id, now);
      })
      .immediate();
  }

  async countByPackage(pkgId: string): Promise<number> {
    return ((await this.db.prepare('SELECT count(*) AS n FROM vnf_instances WHERE vnf_pkg_id = ?').get(pkgId)) as { n: number }).n;
  }

  private async releasePackage(pkgId: string, now: string): Promise<void> {
    if ((await this.countByPackage(pkgId)) === 0) {
      await this.db.prepare("UPDATE vnf_packages SET usage_state = 'NOT_IN_USE', updated_at = ? WHERE id = ?").run(now, pkgId);
    }
  }
}
