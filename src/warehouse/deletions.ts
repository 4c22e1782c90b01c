import type { Sql, TransactionSql } from 'postgres';
import type { Warehouse } from './connection.ts';
import { keyText, tableInfo, type Row, type TableInfo } from './rows.ts';
import { retryThroughOutage } from './outage.ts';
import { transaction } from './pipeline.ts';
import { sendFenceCheck } from './fencing.ts';
import type { Target } from './targets.ts';

/** The window a complete read covered: rows whose start lies in [from, to) (and whose end ≤ to). */
export interface RangeFilter {
  startColumn: string;
  endColumn?: string;
  from: Date;
  to: Date;
}

export interface MarkMissingOptions {
  target: Target;
  companyKey: string;
  /** Key text (rows.ts keyText) of every record the complete read returned, rejects included where keyed. */
  seen: ReadonlySet<string>;
  range?: RangeFilter;
  /** Query parameters of the partition read (FormId, RunTypeId...), mapped by the target's partitionColumns. */
  partition?: Record<string, unknown>;
  /** Filters on columns of the target's table: a value for equality, an array for any of its values, null for none. */
  where?: Record<string, unknown>;
  /** Columns that must hold a value. */
  notNull?: readonly string[];
  /** Rows whose `column` is at or after `from`. */
  since?: { column: string; from: Date };
}

export interface MarkByKeyOptions {
  target: Target;
  companyKey: string;
  /** Key column values (after company_key), e.g. `{ shift_assignment_id: 12 }`. */
  keys: readonly Record<string, unknown>[];
  deletedAt?: Date;
}

type Tx = Sql | TransactionSql;

function column(table: TableInfo, name: string): string {
  if (!table.byName.has(name)) throw new Error(`table ${table.name} has no column "${name}"`);
  return name;
}

function partitionFilters(target: Target, partition: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [param, value] of Object.entries(partition ?? {})) {
    const col = target.partitionColumns?.[param];
    if (!col) throw new Error(`target ${target.resource} cannot filter by partition parameter "${param}"`);
    out[col] = value;
  }
  return out;
}

/** Sets `_deleted_at` on the target's live rows in the read's scope that a complete read did not return. Returns how many. */
export async function markMissingDeleted(wh: Warehouse, o: MarkMissingOptions): Promise<number> {
  const live = await liveKeys(wh, o);
  const gone = live.filter((k) => !o.seen.has(keyText(k, o.target.key)));
  return markDeletedByKey(wh, { target: o.target, companyKey: o.companyKey, keys: gone });
}

/** Key values (as text) of the target's live rows in a read's scope. */
export function liveKeys(wh: Warehouse, o: LiveRowsOptions): Promise<Row[]> {
  return liveRows(wh, o, o.target.key);
}

export type LiveRowsOptions = Omit<MarkMissingOptions, 'seen'>;

/** Columns (as text; timestamps as ISO text) of the target's live rows in a scope. */
export async function liveRows(wh: Warehouse, o: LiveRowsOptions, columns: readonly string[]): Promise<Row[]> {
  const { sql, schema } = wh;
  const table = tableInfo(o.target.table);
  const filters = { ...partitionFilters(o.target, o.partition), ...o.where };
  const conds = [sql`company_key = ${o.companyKey}`, sql`_deleted_at is null`];
  for (const [col, value] of Object.entries(filters)) {
    const c = sql(column(table, col));
    if (value === null) conds.push(sql`${c} is null`);
    else if (Array.isArray(value)) conds.push(sql`${c}::text = any(${value.map(String)})`);
    else conds.push(sql`${c}::text = ${String(value)}`);
  }
  for (const col of o.notNull ?? []) conds.push(sql`${sql(column(table, col))} is not null`);
  if (o.since) conds.push(sql`${sql(column(table, o.since.column))} >= ${o.since.from}`);
  if (o.range) {
    const start = sql(column(table, o.range.startColumn));
    conds.push(sql`${start} >= ${o.range.from}`, sql`${start} < ${o.range.to}`);
    if (o.range.endColumn) conds.push(sql`${sql(column(table, o.range.endColumn))} <= ${o.range.to}`);
  }
  const where = conds.reduce((a, c) => sql`${a} and ${c}`);
  const asText = (c: string) =>
    table.byName.get(c)?.sqlType.startsWith('timestamp') ? sql`to_json(${sql(column(table, c))})#>>'{}'` : sql`${sql(column(table, c))}::text`;
  const select = columns.map((k) => sql`${asText(k)} as ${sql(k)}`).reduce((a, c) => sql`${a}, ${c}`);
  return sql<Row[]>`select ${select} from ${sql(schema)}.${sql(table.name)} where ${where}`;
}

/** Marks the given rows deleted (e.g. shift assignments named by `Deleted` change records). Returns how many. */
export async function markDeletedByKey(wh: Warehouse, o: MarkByKeyOptions): Promise<number> {
  if (o.keys.length === 0) return 0;
  const { sql, schema } = wh;
  const table = tableInfo(o.target.table);
  const key = o.target.key;
  const at = o.deletedAt ?? new Date();
  const arrays = key.map((k) => o.keys.map((r) => (r[k] == null ? null : String(r[k]))));
  const on = key.map((k, i) => `x."${column(table, k)}"::text = k.c${i}`).join(' and ');
  const unnest = key.map((_, i) => `$${i + 3}::text[]`).join(', ');
  return inTransaction(wh, async (tx) => {
    const gone = await tx.unsafe(
      `update "${schema}"."${table.name}" x set _deleted_at = $2 from unnest(${unnest}) as k(${key.map((_, i) => `c${i}`).join(', ')})
       where x.company_key = $1 and x._deleted_at is null and ${on} returning ${key.map((k) => `x."${k}"`).join(', ')}`,
      [o.companyKey, at, ...arrays] as never[],
    );
    await afterDelete(tx, schema, o.target, o.companyKey, gone, at);
    return gone.length;
  }) as Promise<number>;
}

/** One transaction on a session that survives a restart of the warehouse, run again if the warehouse went away. */
function inTransaction<T>(wh: Warehouse, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const once = () =>
    transaction(wh.sessions, async (pipe) => {
      sendFenceCheck(pipe, wh);
      await pipe.flush();
      return fn(pipe.tx);
    });
  return retryThroughOutage(once, wh.outage);
}

/** Child rows follow their parent; the parent's open history version ends. */
async function afterDelete(tx: Tx, schema: string, target: Target, companyKey: string, gone: readonly Record<string, unknown>[], at: Date): Promise<void> {
  if (gone.length === 0) return;
  const key = target.key;
  const arrays = key.map((k) => gone.map((r) => String(r[k])));
  const unnest = key.map((_, i) => `$${i + 3}::text[]`).join(', ');
  const match = (cols: readonly string[]) => cols.map((c, i) => `x."${c}"::text = k.c${i}`).join(' and ');
  const from = `unnest(${unnest}) as k(${key.map((_, i) => `c${i}`).join(', ')})`;
  for (const child of target.children ?? []) {
    await tx.unsafe(
      `update "${schema}"."${child.table}" x set _deleted_at = $2 from ${from} where x.company_key = $1 and ${match(child.parentColumns ?? key)}`,
      [companyKey, at, ...arrays] as never[],
    );
  }
  if (target.history) {
    await tx.unsafe(
      `update "${schema}"."${target.history}" x set valid_to = $2 from ${from} where x.company_key = $1 and x.valid_to is null and ${match(key)}`,
      [companyKey, at, ...arrays] as never[],
    );
  }
}
