import type { Warehouse } from './connection.ts';
import type { Target } from './targets.ts';
import { isDistributed } from './distribution.ts';

/**
 * Planner statistics for tables a sync is filling. Postgres plans a prepared statement once for good after a few
 * runs (a generic plan), and plans it from what it knows of the table then: for a table never analyzed, that a
 * company's rows are a handful. A page's key lookup planned so reads every row of the company and checks each
 * against the page's keys, a cost that grows with the table, until autovacuum's analyze (up to a minute later,
 * often after the first sync is over) makes Postgres plan it again. Analyzing a target's tables once this process
 * has inserted this many rows into it gives the planner the one fact that matters (rows per company) early.
 */
export const ANALYZE_AFTER_ROWS = 1000;

/** Rows inserted into each target's table by this process, per warehouse. */
const inserted = new WeakMap<Warehouse['sessions'], Map<string, number>>();

/** The tables a target writes: its own, its history, its children's. */
function tablesOf(target: Target): string[] {
  return [target.table, ...(target.history ? [target.history] : []), ...(target.children ?? []).map((c) => c.table)];
}

/**
 * Counts rows a committed page inserted; the page that takes a target past ANALYZE_AFTER_ROWS analyzes its
 * tables. The page is committed whatever happens here: an analyze that fails (the warehouse went away, or the
 * role does not own the table) leaves the statistics to autovacuum.
 */
export async function noteInserted(wh: Warehouse, target: Target, rows: number): Promise<void> {
  if (rows === 0) return;
  let counts = inserted.get(wh.sessions);
  if (!counts) inserted.set(wh.sessions, (counts = new Map()));
  const before = counts.get(target.table) ?? 0;
  counts.set(target.table, before + rows);
  if (before >= ANALYZE_AFTER_ROWS || before + rows < ANALYZE_AFTER_ROWS) return;
  // On Citus a worker plans each statement on a shard afresh, and an analyze would go to every company's shard.
  if (await isDistributed(wh)) return;
  const tables = tablesOf(target).map((t) => `"${wh.schema}"."${t}"`);
  await wh.sql.unsafe(`analyze ${tables.join(', ')}`).catch(() => {});
}
