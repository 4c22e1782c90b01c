import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import type { Warehouse } from '../warehouse/index.ts';
import type { PushKind, PushState } from '../warehouse/tables/push.ts';
import type { Sealer } from './secret.ts';
import type { Accepted, Fields } from './validate.ts';

/**
 * The outbox: every change's state lives here, in Postgres. A change moves queued → sending → applied |
 * refused | failed, or sending → in_doubt when the answer was lost; nothing else holds the truth.
 */

export const FINAL_STATES: readonly PushState[] = ['applied', 'refused', 'failed'];
export const OPEN_STATES: readonly PushState[] = ['queued', 'sending', 'in_doubt'];

/** The LISTEN/NOTIFY channel that tells workers a change was queued. */
export const PUSH_CHANNEL = 'wfsync_push';

export interface PushStatus {
  id: number;
  changeId: string;
  company: string;
  kind: PushKind;
  status: PushState;
  attempts: number;
  /** The service's message for a refusal, or the last error. */
  error: string | null;
  fields: Fields | null;
  individualId: number | null;
  serviceId: number | null;
  individualCertificationId: number | null;
  createdAt: string;
  updatedAt: string;
  appliedAt: string | null;
}

/** One stored row, as the worker reads it. */
export interface OutboxRow {
  id: number;
  company_key: string;
  kind: PushKind;
  change_id: string;
  entity_key: string;
  seq: number;
  holder_key: string | null;
  payload: Record<string, unknown>;
  sealed: string | null;
  status: PushState;
  attempts: number;
  error: string | null;
  fields: Fields | null;
  individual_id: number | null;
  service_id: number | null;
  individual_certification_id: number | null;
  coalesced_into: number | null;
  created_at: Date;
  updated_at: Date;
  applied_at: Date | null;
  notify_attempts: number;
}

export function table(wh: { schema: string }): string {
  return `"${wh.schema}"."push_outbox"`;
}

export function statusOf(r: OutboxRow): PushStatus {
  return {
    id: Number(r.id),
    changeId: r.change_id,
    company: r.company_key,
    kind: r.kind,
    status: r.status,
    attempts: r.attempts,
    error: r.error,
    fields: r.fields,
    individualId: r.individual_id,
    serviceId: r.service_id,
    individualCertificationId: r.individual_certification_id,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    appliedAt: r.applied_at ? r.applied_at.toISOString() : null,
  };
}

export interface Stored {
  changeId: string;
  id: number;
  status: PushState;
}

/**
 * Stores accepted changes in one transaction and tells the workers. A changeId already stored for the company
 * is the same change: its first id and state are answered, and nothing is stored again.
 */
export async function store(wh: Warehouse, company: string, changes: readonly Accepted[], sealer: Sealer): Promise<Stored[]> {
  const t = table(wh);
  return wh.sql.begin(async (tx) => {
    const out: Stored[] = [];
    for (const c of changes) {
      const changeId = c.changeId ?? randomUUID();
      const known = await tx.unsafe(`select id, status from ${t} where company_key = $1 and change_id = $2`, [company, changeId]);
      if (known.length > 0) {
        out.push({ changeId, id: Number(known[0]!.id), status: known[0]!.status as PushState });
        continue;
      }
      // Serializes the entity's sequence numbers across concurrent intakes.
      await tx.unsafe(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [`${company}/${c.entityKey}`]);
      const rows = await tx.unsafe(
        `insert into ${t} (company_key, kind, change_id, entity_key, seq, holder_key, payload, sealed)
         values ($1, $2, $3, $4, (select coalesce(max(seq), 0) + 1 from ${t} where company_key = $1 and entity_key = $4), $5, $6::jsonb, $7)
         on conflict (company_key, change_id) do nothing
         returning id, status`,
        [company, c.kind, changeId, c.entityKey, c.holderKey ?? null, c.payload as never, c.ssn ? sealer.seal(c.ssn) : null],
      );
      const row = rows[0] ?? (await tx.unsafe(`select id, status from ${t} where company_key = $1 and change_id = $2`, [company, changeId]))[0]!;
      out.push({ changeId, id: Number(row.id), status: row.status as PushState });
    }
    await tx.unsafe(`select pg_notify($1, $2)`, [PUSH_CHANNEL, company]);
    return out;
  });
}

export async function getChange(sql: Sql, wh: { schema: string }, id: number): Promise<PushStatus | undefined> {
  const rows = await sql.unsafe<OutboxRow[]>(`select * from ${table(wh)} where id = $1`, [id]);
  return rows[0] ? statusOf(rows[0]) : undefined;
}

export interface ListOptions {
  status?: PushState;
  since?: Date;
  company?: string;
  limit?: number;
}

export async function listChanges(sql: Sql, wh: { schema: string }, o: ListOptions = {}): Promise<PushStatus[]> {
  const rows = await sql.unsafe<OutboxRow[]>(
    `select * from ${table(wh)}
     where ($1::text is null or status = $1) and ($2::timestamptz is null or updated_at >= $2) and ($3::text is null or company_key = $3)
     order by id desc limit $4`,
    [o.status ?? null, o.since ?? null, o.company ?? null, o.limit ?? 1000],
  );
  return rows.map(statusOf);
}

/**
 * Sends a failed (or refused) change again; the worker treats it as in doubt, so nothing is applied twice. A change
 * whose payload housekeeping emptied (prune.ts) has nothing left to send and stays as it is.
 */
export async function retryChange(sql: Sql, wh: { schema: string }, id: number): Promise<PushStatus | undefined> {
  const rows = await sql.unsafe<OutboxRow[]>(
    `update ${table(wh)} set status = case when attempts > 0 then 'in_doubt' else 'queued' end, next_attempt_at = now(),
       updated_at = now(), notified_at = null, notify_next_at = null, coalesced_into = null
     where id = $1 and status in ('failed', 'refused') and payload <> '{}'::jsonb returning *`,
    [id],
  );
  if (rows[0]) await sql.unsafe(`select pg_notify($1, $2)`, [PUSH_CHANNEL, rows[0].company_key]);
  return rows[0] ? statusOf(rows[0]) : getChange(sql, wh, id);
}
