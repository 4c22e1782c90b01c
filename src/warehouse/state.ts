import type { Warehouse } from './connection.ts';
import { exec, Pipeline } from './pipeline.ts';
import { textArray } from './encoding.ts';
import type { WarehouseTables } from './schema.ts';

/**
 * Each stream partition's cursor (sync_state): read, listed, and written whole or edited. A page writes its
 * checkpoint in its own transaction (sendCheckpoint); a checkpoint with no page goes through saveCheckpoint.
 */

export type Checkpoint = WarehouseTables['syncState']['$inferSelect'];

/**
 * A change to the cursor as stored when the page commits, made in SQL: pages written side by side (the slices of
 * one pass) each add their own progress, and none overwrites another's. The stored cursor must exist.
 *   put     sets `key` to `value` in the object at `object` (made when missing);
 *   settle  removes `key` from the object at `object` and adds it to the list at `list` (once).
 */
export type CursorEdit =
  | { kind: 'put'; object: readonly string[]; key: string; value: unknown }
  | { kind: 'settle'; object: readonly string[]; key: string; list: readonly string[] };

/** What a page stores of its stream's cursor: the whole cursor, or an edit of the stored one. */
export type CheckpointWrite = { cursor: unknown } | { edit: CursorEdit };

/** Where a checkpoint belongs: one partition of one stream of one company. */
export interface CheckpointAt {
  companyKey: string;
  stream: string;
  partition: string;
}

const q = (name: string) => `"${name}"`;

/** The cursor a stream partition reached, or undefined before its first completed read. */
export async function readCheckpoint<T = unknown>(
  wh: Warehouse,
  companyKey: string,
  stream: string,
  partition = '-',
): Promise<T | undefined> {
  const rows = await wh.sql<{ cursor: T }[]>`
    select cursor from ${wh.sql(wh.schema)}.sync_state
    where company_key = ${companyKey} and stream = ${stream} and partition = ${partition}`;
  return rows[0]?.cursor;
}

/** Checkpoints outside a page write (a page write carries its own, in its own transaction). */
export async function saveCheckpoint(
  wh: Warehouse,
  companyKey: string,
  stream: string,
  partition: string,
  cursor: unknown,
): Promise<void> {
  const pipe = new Pipeline(wh.sql);
  await sendCheckpoint(pipe, wh.schema, { companyKey, stream, partition }, { cursor });
  await pipe.flush();
}

/** Sends a page's checkpoint in its transaction: the whole cursor, or an edit of the stored one. */
export async function sendCheckpoint(
  pipe: Pipeline,
  schema: string,
  at: CheckpointAt,
  write: CheckpointWrite,
): Promise<void> {
  if ('edit' in write) await editCursor(pipe, schema, at, write.edit);
  else putCursor(pipe, schema, at, write.cursor);
}

function putCursor(pipe: Pipeline, schema: string, at: CheckpointAt, cursor: unknown): void {
  pipe.send(
    `insert into ${q(schema)}."sync_state" (company_key, stream, partition, cursor, updated_at)
values ($1, $2, $3, $4::text::jsonb, now())
on conflict (company_key, stream, partition) do update set cursor = excluded.cursor, updated_at = excluded.updated_at`,
    [at.companyKey, at.stream, at.partition, JSON.stringify(cursor)],
  );
}

// Citus takes no function short of immutable inside a CASE or COALESCE of an UPDATE (to_jsonb is only stable):
// the settled key comes as JSON text.
const EDITS: Record<CursorEdit['kind'], string> = {
  put: `jsonb_set(cursor, $4::text[], coalesce(cursor #> $4::text[], '{}'::jsonb) || jsonb_build_object($5::text, $6::text::jsonb))`,
  settle: `case when coalesce(cursor #> $6::text[], '[]'::jsonb) ? $5::text then cursor #- ($4::text[] || $5::text)
  else jsonb_set(cursor #- ($4::text[] || $5::text), $6::text[], coalesce(cursor #> $6::text[], '[]'::jsonb) || $7::text::jsonb) end`,
};

async function editCursor(pipe: Pipeline, schema: string, at: CheckpointAt, edit: CursorEdit): Promise<void> {
  const last = edit.kind === 'put' ? JSON.stringify(edit.value) : edit.list;
  const updated = await pipe.alone(() =>
    exec(
      pipe.tx,
      `update ${q(schema)}."sync_state" set cursor = ${EDITS[edit.kind]}, updated_at = now()
where company_key = $1 and stream = $2 and partition = $3 returning 1`,
      [
        at.companyKey,
        at.stream,
        at.partition,
        textArray(edit.object),
        edit.key,
        typeof last === 'string' ? last : textArray(last),
        ...(edit.kind === 'settle' ? [JSON.stringify(edit.key)] : []),
      ],
    ),
  );
  if (updated.length !== 1) throw new Error(`${at.stream} (${at.partition}): no stored cursor to edit`);
}

export async function listCheckpoints(wh: Warehouse, companyKey?: string): Promise<Checkpoint[]> {
  const filter = companyKey === undefined ? wh.sql`` : wh.sql`where company_key = ${companyKey}`;
  return wh.sql<Checkpoint[]>`
    select company_key, stream, partition, cursor, updated_at from ${wh.sql(wh.schema)}.sync_state ${filter}
    order by company_key, stream, partition`;
}
