import type { Sql, TransactionSql } from 'postgres';
import type { Warehouse } from './connection.ts';
import { columnOf, tableInfo, type Row, type TableInfo } from './catalog.ts';
import { keyText } from './record-keys.ts';
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
  /** Key text (record-keys.ts keyText) of every record the complete read returned, rejects included where keyed. */
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
  /** Only rows still in this scope when marked (a complete read's: see markMissingDeleted). */
  stillIn?: Omit<LiveRowsOptions, 'target' | 'companyKey'>;
}

type Tx = Sql | TransactionSql;

function partitionFilters(target: Target, partition: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [param, value] of Object.entries(partition ?? {})) {
    const col = target.partitionColumns?.[param];
    if (!col) throw new Error(`target ${target.resource} cannot filter by partition parameter "${param}"`);
    out[col] = value;
  }
  return out;
}

/**
 * Sets `_deleted_at` on the target's live rows in the read's scope that a complete read did not return. Returns how
 * many. A row is marked only if it is still in the scope when marked: a read of another window running beside this
 * one may meanwhile have written it with a start that moved out of this window.
 */
export async function markMissingDeleted(wh: Warehouse, o: MarkMissingOptions): Promise<number> {
  const live = await liveKeys(wh, o);
  const gone = live.filter((k) => !o.seen.has(keyText(k, o.target.key)));
  return markDeletedByKey(wh, { target: o.target, companyKey: o.companyKey, keys: gone, stillIn: o });
}

/** Key values (as text) of the target's live rows in a read's scope. */
export function liveKeys(wh: Warehouse, o: LiveRowsOptions): Promise<Row[]> {
  return liveRows(wh, o, o.target.key);
}

export type LiveRowsOptions = Omit<MarkMissingOptions, 'seen'>;

/** The conditions of a scope on a table's columns, as SQL text with parameters from `$first` on. */
function scopeConditions(table: TableInfo, o: LiveRowsOptions, first: number): { conds: string[]; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${first + params.push(value) - 1}`;
  const col = (name: string) => `"${columnOf(table, name)}"`;
  const conds = [`company_key = ${param(o.companyKey)}`, '_deleted_at is null'];
  for (const [name, value] of Object.entries({ ...partitionFilters(o.target, o.partition), ...o.where })) {
    if (value === null) conds.push(`${col(name)} is null`);
    else if (Array.isArray(value)) conds.push(`${col(name)}::text = any(${param(value.map(String))}::text[])`);
    else conds.push(`${col(name)}::text = ${param(String(value))}`);
  }
  for (const name of o.notNull ?? []) conds.push(`${col(name)} is not null`);
  if (o.since) conds.push(`${col(o.since.column)} >= ${param(o.since.from.toISOString())}::timestamptz`);
  if (o.range) {
    const start = col(o.range.startColumn);
    conds.push(
      `${start} >= ${param(o.range.from.toISOString())}::timestamptz`,
      `${start} < ${param(o.range.to.toISOString())}::timestamptz`,
    );
    if (o.range.endColumn) conds.push(`${col(o.range.endColumn)} <= ${param(o.range.to.toISOString())}::timestamptz`);
  }
  return { conds, params };
}

/** Columns (as text; timestamps as ISO text) of the target's live rows in a scope. */
export async function liveRows(wh: Warehouse, o: LiveRowsOptions, columns: readonly string[]): Promise<Row[]> {
  const table = tableInfo(o.target.table);
  const { conds, params } = scopeConditions(table, o, 1);
  const asText = (c: string) =>
    `${table.byName.get(c)?.sqlType.startsWith('timestamp') ? `to_json("${columnOf(table, c)}")#>>'{}'` : `"${columnOf(table, c)}"::text`} as "${c}"`;
  return (await wh.sql.unsafe(
    `select ${columns.map(asText).join(', ')} from "${wh.schema}"."${table.name}" where ${conds.join(' and ')}`,
    params as never[],
  )) as unknown as Row[];
}

/** Whether the target holds any live row in a read's scope: the scan stops at the first. */
export async function anyLiveRow(wh: Warehouse, o: LiveRowsOptions): Promise<boolean> {
  const table = tableInfo(o.target.table);
  const { conds, params } = scopeConditions(table, o, 1);
  const found = await wh.sql.unsafe(
    `select 1 from "${wh.schema}"."${table.name}" where ${conds.join(' and ')} limit 1`,
    params as never[],
  );
  return found.length > 0;
}

/** Marks the given rows deleted (e.g. shift assignments named by `Deleted` change records). Returns how many. */
export async function markDeletedByKey(wh: Warehouse, o: MarkByKeyOptions): Promise<number> {
  if (o.keys.length === 0) return 0;
  const { schema } = wh;
  const table = tableInfo(o.target.table);
  const key = o.target.key;
  const at = o.deletedAt ?? new Date();
  const arrays = key.map((k) => o.keys.map((r) => (r[k] == null ? null : String(r[k]))));
  const on = key.map((k, i) => `x."${columnOf(table, k)}"::text = k.c${i}`).join(' and ');
  const unnest = key.map((_, i) => `$${i + 3}::text[]`).join(', ');
  // Unqualified columns of the scope are the table's: the unnested keys are named c0, c1, ...
  const scope = o.stillIn
    ? scopeConditions(table, { ...o.stillIn, target: o.target, companyKey: o.companyKey }, key.length + 3)
    : undefined;
  return inTransaction(wh, async (tx) => {
    const gone = await tx.unsafe(
      `update "${schema}"."${table.name}" x set _deleted_at = $2 from unnest(${unnest}) as k(${key.map((_, i) => `c${i}`).join(', ')})
       where x.company_key = $1 and x._deleted_at is null and ${on}${scope ? ` and ${scope.conds.join(' and ')}` : ''}
       returning ${key.map((k) => `x."${k}"`).join(', ')}`,
      [o.companyKey, at, ...arrays, ...(scope?.params ?? [])] as never[],
    );
    await afterDelete(tx, schema, o, gone, at);
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
async function afterDelete(
  tx: Tx,
  schema: string,
  { target, companyKey }: Pick<MarkByKeyOptions, 'target' | 'companyKey'>,
  gone: readonly Record<string, unknown>[],
  at: Date,
): Promise<void> {
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
