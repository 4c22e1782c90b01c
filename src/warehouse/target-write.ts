import type { Pipeline } from './pipeline.ts';
import { tableInfo, type Row } from './catalog.ts';
import type { MappedItem } from './mapper.ts';
import type { Target } from './targets.ts';
import { cached, keyJoin, qt } from './write-sql.ts';
import { chunks, insertRows, keyArrays, lockAndRead, type Previous, upsertRows } from './row-writes.ts';

/** One target's mapped rows in a page's transaction: counted, written with their child rows, and their history. */

export interface WriteResult {
  inserted: number;
  updated: number;
  unchanged: number;
  /** Rows this write marked deleted (the target's deletedFlag was true and they were not deleted yet). */
  deleted: number;
}

/**
 * Child rows of the given parents are replaced by the ones in this page. Only parents in `stored` can have child
 * rows to delete: a parent the page inserts has none (had another writer inserted it meanwhile, the parent's
 * INSERT fails and the page is written again as an upsert, which passes every parent as stored).
 */
function replaceChildren(
  { pipe, schema, target, distributed }: TargetWrite,
  parents: readonly MappedItem[],
  stored: readonly MappedItem[],
): void {
  for (const [i, child] of (target.children ?? []).entries()) {
    const table = tableInfo(child.table);
    const parentColumns = child.parentColumns ?? target.key;
    for (const chunk of chunks(stored)) {
      const { from, on } = keyJoin(schema, table, parentColumns, 2);
      const del = cached(
        `children:${schema}.${table.name}`,
        () => `delete from ${qt(schema, table.name)} x using ${from} where x.company_key = $1 and ${on}`,
      );
      pipe.send(del, [
        chunk[0]!.row.company_key,
        ...keyArrays(
          chunk.map((p) => renameKey(p.row, target.key, parentColumns)),
          parentColumns,
        ),
      ]);
    }
    insertRows(
      { pipe, schema, table, distributed },
      parents.flatMap((p) => p.children[i]!),
    );
  }
}

function renameKey(row: Row, from: readonly string[], to: readonly string[]): Row {
  return Object.fromEntries(to.map((c, i) => [c, row[from[i]!]]));
}

/** Closes the open history version of each key (the rows written then open their next one: openingHistory). */
function closeHistory({ pipe, schema, target, companyKey, syncedAt: at }: TargetWrite, close: readonly Row[]): void {
  if (!target.history || close.length === 0) return;
  const history = tableInfo(target.history);
  const { from, on } = keyJoin(schema, history, target.key, 3);
  const sql = cached(
    `history-close:${schema}.${history.name}`,
    () =>
      `update ${qt(schema, history.name)} x set valid_to = $2 from ${from} where x.company_key = $1 and x.valid_to is null and ${on}`,
  );
  pipe.send(sql, [companyKey, at, ...keyArrays(close, target.key)]);
}

/**
 * How new rows (keys the page's lock-and-read did not find) are written. A plain INSERT costs Postgres less
 * than INSERT … ON CONFLICT; it fails only when another writer inserted one of those keys since the read,
 * and then the page is written again with `upsert`. `fresh` skips the read and inserts every row: for a page
 * expected to hold only new keys (fresh-keys.ts), which fails the same way when one of them is stored.
 */
export type NewRows = 'fresh' | 'insert' | 'upsert';

/** One target's rows written in a page's transaction: where, for which company, and the sync's time. */
export interface TargetWrite {
  readonly pipe: Pipeline;
  readonly schema: string;
  readonly target: Target;
  readonly companyKey: string;
  readonly syncedAt: Date;
  /** The warehouse is on Citus (row-writes.ts). */
  readonly distributed?: boolean;
}

/**
 * Writes mapped items of one target with children and history; counts what changed. `prepare` is handed the
 * items about to be written (not those found unchanged) before any is sent.
 */
export async function writeMapped(
  into: TargetWrite,
  mapped: readonly MappedItem[],
  newRows: NewRows,
  prepare?: (items: readonly MappedItem[]) => void,
): Promise<WriteResult> {
  const { pipe, schema, target, syncedAt, distributed } = into;
  const result: WriteResult = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
  if (mapped.length === 0) return result;
  for (const m of mapped) {
    m.row._synced_at = syncedAt;
    m.row._deleted_at = m.deleted ? syncedAt : null;
    for (const rows of m.children)
      for (const r of rows) Object.assign(r, { _synced_at: syncedAt, _deleted_at: m.row._deleted_at });
  }
  const table = tableInfo(target.table);
  const previous =
    newRows === 'fresh'
      ? new Map<string, Previous>()
      : await pipe.alone(() => lockAndRead(pipe.tx, schema, table, mapped));
  const changed: MappedItem[] = [];
  const stored: MappedItem[] = [];
  const fresh: Row[] = [];
  const rewrite: Row[] = [];
  const close: Row[] = [];
  for (const m of mapped) {
    const before = previous.get(m.keyText);
    const differs = !before || before.hash !== m.row._hash || before.wasDeleted !== m.deleted;
    if (!before) result.inserted++;
    else if (differs) result.updated++;
    else result.unchanged++;
    if (m.deleted && !before?.wasDeleted) result.deleted++;
    // A row read again as stored writes nothing: deletion inference keeps its own set of keys seen.
    if (!differs) continue;
    (before || newRows === 'upsert' ? rewrite : fresh).push(m.row);
    changed.push(m);
    if (before || newRows === 'upsert') stored.push(m);
    if (before && !before.wasDeleted) close.push(m.row);
  }
  prepare?.(changed);
  closeHistory(into, close);
  const opens = target.history ? { history: tableInfo(target.history), at: syncedAt } : undefined;
  insertRows({ pipe, schema, table, distributed }, fresh, opens);
  // Rows read before are locked until commit, so their upsert always finds them.
  upsertRows({ pipe, schema, table, distributed }, rewrite, opens);
  // Children of an unchanged parent are unchanged too (the parent's hash covers them).
  if (changed.length > 0) replaceChildren(into, changed, stored);
  return result;
}
