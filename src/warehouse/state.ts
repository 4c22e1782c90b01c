import type { Warehouse } from './connection.ts';
import { writeCheckpoint } from './upsert.ts';
import { tableInfo, type Row } from './rows.ts';
import type { Target } from './targets.ts';
import type { WarehouseTables } from './schema.ts';

export type Checkpoint = WarehouseTables['syncState']['$inferSelect'];
export type SyncRun = WarehouseTables['syncRuns']['$inferSelect'];

/** The cursor a stream partition reached, or undefined before its first completed read. */
export async function readCheckpoint<T = unknown>(wh: Warehouse, companyKey: string, stream: string, partition = '-'): Promise<T | undefined> {
  const rows = await wh.sql<{ cursor: T }[]>`
    select cursor from ${wh.sql(wh.schema)}.sync_state
    where company_key = ${companyKey} and stream = ${stream} and partition = ${partition}`;
  return rows[0]?.cursor;
}

/** Checkpoints outside a page write (a page write carries its own, in its own transaction). */
export async function saveCheckpoint(wh: Warehouse, companyKey: string, stream: string, partition: string, cursor: unknown): Promise<void> {
  await writeCheckpoint(wh.sql, wh.schema, companyKey, stream, partition, cursor);
}

export async function listCheckpoints(wh: Warehouse, companyKey?: string): Promise<Checkpoint[]> {
  const filter = companyKey === undefined ? wh.sql`` : wh.sql`where company_key = ${companyKey}`;
  return wh.sql<Checkpoint[]>`
    select company_key, stream, partition, cursor, updated_at from ${wh.sql(wh.schema)}.sync_state ${filter}
    order by company_key, stream, partition`;
}

export async function startRun(wh: Warehouse, o: { companyKey: string; stream: string; startedAt?: Date }): Promise<number> {
  const [row] = await wh.sql<{ id: string }[]>`
    insert into ${wh.sql(wh.schema)}.sync_runs (company_key, stream, started_at)
    values (${o.companyKey}, ${o.stream}, ${o.startedAt ?? new Date()}) returning id`;
  return Number(row!.id);
}

export interface RunOutcome {
  outcome: string;
  requests?: number;
  rows?: number;
  rejects?: number;
  error?: string;
}

/** Anything else in the outcome (deleted, durationMs, ...) is kept in `details`. */
export async function finishRun(wh: Warehouse, id: number, o: RunOutcome): Promise<void> {
  const { outcome, requests = 0, rows = 0, rejects = 0, error = null, ...details } = o;
  await wh.sql`
    update ${wh.sql(wh.schema)}.sync_runs
    set finished_at = now(), outcome = ${outcome}, requests = ${requests}, rows = ${rows}, rejects = ${rejects},
        error = ${error as string | null},
        -- When its sync began outlives the run: a resumption of that sync reads it (runs.ts findResumption).
        details = case when details ? 'syncStartedAt'
          then ${wh.sql.json(details as never)}::jsonb || jsonb_build_object('syncStartedAt', details->'syncStartedAt')
          else ${wh.sql.json(details as never)}::jsonb end
    where id = ${id}`;
}

/** Rows of a target's table for one company, by key (tests and tools). */
export async function readRows(wh: Warehouse, target: Target | string, companyKey: string): Promise<Row[]> {
  const table = tableInfo(typeof target === 'string' ? target : target.table);
  const key = typeof target === 'string' ? table.primaryKey : ['company_key', ...target.key];
  return wh.sql.unsafe(
    `select * from "${wh.schema}"."${table.name}" where company_key = $1 order by ${key.map((k) => `"${k}"`).join(', ')}`,
    [companyKey],
  ) as unknown as Promise<Row[]>;
}
