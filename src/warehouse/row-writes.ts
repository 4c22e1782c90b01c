import { exec, type Pipeline, type Tx } from './pipeline.ts';
import type { Row, TableInfo } from './catalog.ts';
import type { MappedItem } from './mapper.ts';
import { columnsAsArrays, textArray } from './encoding.ts';
import { cells, openingHistoryFrom, rowsPerStatement, valuesStatement } from './citus-writes.ts';
import { insertStatement, lockAndReadStatement, openingHistory, upsertStatement } from './write-sql.ts';

/**
 * Rows of one table into a page's transaction: the stored state of the page's keys locked and read, and rows
 * inserted or upserted, unnested from one array parameter per column a chunk at a time.
 */

/** Rows per statement: bounds the size of one message, not a parameter count. */
export const CHUNK_ROWS = 5000;

export function chunks<T>(items: readonly T[], size = CHUNK_ROWS): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface Previous {
  hash: string;
  wasDeleted: boolean;
}

/** The stored state of the page's keys that exist, by key text; those rows stay locked until the page commits. */
export async function lockAndRead(
  tx: Tx,
  schema: string,
  table: TableInfo,
  mapped: readonly MappedItem[],
): Promise<Map<string, Previous>> {
  const previous = new Map<string, Previous>();
  const key = table.primaryKey.slice(1);
  for (const chunk of chunks(mapped)) {
    const rows = chunk.map((m) => m.row);
    for (const o of await exec(tx, lockAndReadStatement(schema, table), [
      rows[0]!.company_key,
      ...keyArrays(rows, key),
    ])) {
      const keyText = JSON.stringify(key.map((k) => o[k] as string | null));
      previous.set(keyText, { hash: o._hash as string, wasDeleted: o.was_deleted as boolean });
    }
  }
  return previous;
}

/** Where the rows written open their new history version: the history table and the time it is valid from. */
export interface Opens {
  readonly history: TableInfo;
  readonly at: Date;
}

/** A table written in a page's transaction: the pipeline it is sent on and the warehouse's schema. */
export interface TableWrite {
  readonly pipe: Pipeline;
  readonly schema: string;
  readonly table: TableInfo;
  /** The warehouse is on Citus: rows go as router-planned VALUES inserts (citus-writes.ts). */
  readonly distributed?: boolean;
}

/**
 * Sends an INSERT … SELECT over rows unnested from array parameters, a chunk at a time, on the page's pipeline: an
 * upsert or a plain insert. With `opens`, the rows open their history.
 */
function insertFrom(into: TableWrite, rows: readonly Row[], upsert: boolean, opens?: Opens): void {
  if (rows.length === 0) return;
  if (into.distributed) {
    insertRouted(into, rows, upsert, opens);
    return;
  }
  const { pipe, schema, table } = into;
  const write = (upsert ? upsertStatement : insertStatement)(schema, table);
  const send = (params: string[]) => {
    if (!opens) return pipe.send(write, params);
    const at = `$${params.length + 1}`;
    pipe.send(openingHistory(schema, opens.history, write, at), [...params, opens.at.toISOString()]);
  };
  for (const chunk of chunks(rows)) send(columnsAsArrays(chunk, table.columns));
}

/** insertFrom on Citus: VALUES inserts, then the history each chunk's rows open, read back from their shard. */
function insertRouted({ pipe, schema, table }: TableWrite, rows: readonly Row[], upsert: boolean, opens?: Opens): void {
  for (const chunk of chunks(rows, rowsPerStatement(table))) {
    pipe.send(valuesStatement(schema, table, chunk.length, upsert), cells(chunk, table));
    if (opens)
      pipe.send(openingHistoryFrom(schema, table, opens.history), [
        chunk[0]!.company_key,
        opens.at.toISOString(),
        ...keyArrays(chunk, table.primaryKey.slice(1)),
      ]);
  }
}

export const upsertRows = (into: TableWrite, rows: readonly Row[], opens?: Opens) =>
  insertFrom(into, rows, true, opens);
export const insertRows = (into: TableWrite, rows: readonly Row[], opens?: Opens) =>
  insertFrom(into, rows, false, opens);

/** Key values (after company_key) of mapped parents, one text array per key column. */
export function keyArrays(rows: readonly Row[], key: readonly string[]): string[] {
  return key.map((k) => textArray(rows.map((r) => (r[k] == null ? null : String(r[k])))));
}
