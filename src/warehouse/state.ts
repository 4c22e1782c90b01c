import type { Warehouse } from './connection.ts';
import { writeCheckpoint } from './upsert.ts';
import { tableInfo, type Row } from './rows.ts';
import type { Target } from './targets.ts';
import type { WarehouseTables } from './schema.ts';

export type Checkpoint = WarehouseTables['syncState']['$inferSelect'];

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

/** Rows of a target's table for one company, by key (tests and tools). */
export async function readRows(wh: Warehouse, target: Target | string, companyKey: string): Promise<Row[]> {
  const table = tableInfo(typeof target === 'string' ? target : target.table);
  const key = typeof target === 'string' ? table.primaryKey : ['company_key', ...target.key];
  return wh.sql.unsafe(
    `select * from "${wh.schema}"."${table.name}" where company_key = $1 order by ${key.map((k) => `"${k}"`).join(', ')}`,
    [companyKey],
  ) as unknown as Promise<Row[]>;
}
