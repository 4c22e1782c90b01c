import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { DEFAULT_SCHEMA, warehouseTables } from './schema.ts';

/** The warehouse's tables as the write path sees them: columns, keys, what is hashed, and rows of their shape. */

export interface ColumnInfo {
  readonly name: string;
  readonly sqlType: string;
}

export interface TableInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  readonly byName: ReadonlyMap<string, ColumnInfo>;
  readonly primaryKey: readonly string[];
  /** Columns the content hash covers: all but _synced_at, _deleted_at and _hash. */
  readonly hashed: readonly string[];
  /** Date and date-time columns with companions the mapper fills from the text the service sent. */
  readonly localTimes: readonly LocalTimeColumns[];
  /** The companion columns: filled by the mapper, never from an item's field. */
  readonly derived: ReadonlySet<string>;
  /** A new row of this table: every column present, undefined until set (see blankRow). */
  readonly blank: () => Row;
}

/** `x` and what the mapper derives from its text: `x_local_date` or `x_instant`, and `x_utc_offset`. */
export interface LocalTimeColumns {
  readonly column: string;
  readonly utcOffset: string;
  /** Set for a date-time column (timestamptz `x`). */
  readonly localDate?: string;
  /** Set for a date column (`x` is the day written; this is the full value when one was sent). */
  readonly instant?: string;
}

export type Row = Record<string, unknown>;

const tableInfos: ReadonlyMap<string, TableInfo> = new Map(
  Object.values(warehouseTables(DEFAULT_SCHEMA)).map((t) => {
    const info = describeTable(t);
    return [info.name, info];
  }),
);

function describeTable(table: PgTable): TableInfo {
  const cfg = getTableConfig(table);
  const columns = cfg.columns.map((c) => ({ name: c.name, sqlType: c.getSQLType() }));
  const primaryKey =
    cfg.primaryKeys[0]?.columns.map((c) => c.name) ?? cfg.columns.filter((c) => c.primary).map((c) => c.name);
  const hashed = columns.map((c) => c.name).filter((n) => n !== '_synced_at' && n !== '_deleted_at' && n !== '_hash');
  const byName = new Map(columns.map((c) => [c.name, c]));
  const localTimes = columns.flatMap((c): LocalTimeColumns[] => {
    const utcOffset = `${c.name}_utc_offset`;
    if (!byName.has(utcOffset)) return [];
    const localDate = byName.has(`${c.name}_local_date`) ? `${c.name}_local_date` : undefined;
    const instant = byName.has(`${c.name}_instant`) ? `${c.name}_instant` : undefined;
    return [{ column: c.name, utcOffset, localDate, instant }];
  });
  const derived = new Set(localTimes.flatMap((l) => [l.utcOffset, l.localDate ?? l.instant!]));
  return { name: cfg.name, columns, byName, primaryKey, hashed, localTimes, derived, blank: blankRow(columns) };
}

/**
 * Makes rows that hold every column of a table from the start, so that all rows of the table share one shape.
 * A row grown one computed column at a time leaves V8's fast properties after a dozen columns and becomes a hash
 * table: several times the memory, which a page's rows then carry through every collection while they live.
 */
function blankRow(columns: readonly ColumnInfo[]): () => Row {
  const literal = columns.map((c) => `${JSON.stringify(c.name)}: undefined`).join(', ');
  return new Function(`return { ${literal} };`) as () => Row;
}

export function tableInfo(name: string): TableInfo {
  const info = tableInfos.get(name);
  if (!info) throw new Error(`no warehouse table named "${name}"`);
  return info;
}

/** `name`, once `table` is known to have that column: names given in stream definitions fail loudly when wrong. */
export function columnOf(table: TableInfo, name: string): string {
  if (!table.byName.has(name)) throw new Error(`table ${table.name} has no column "${name}"`);
  return name;
}

export function allTableInfos(): readonly TableInfo[] {
  return [...tableInfos.values()];
}
