import { randomUUID } from 'node:crypto';
import type { Sql } from 'postgres';
import type { Warehouse } from '../warehouse/connection.ts';
import { FINAL_STATES, OPEN_STATES, type PushKind, type PushState } from '../warehouse/tables/push.ts';
import type { Sealer } from '../warehouse/secret.ts';
import type { Accepted, Fields } from './validate.ts';

/**
 * The outbox: every change's state lives here, in Postgres. A change moves queued → sending → applied |
 * refused | failed, or sending → in_doubt when the answer was lost; nothing else holds the truth.
 */

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
export async function store(
  wh: Warehouse,
  company: string,
  changes: readonly Accepted[],
  sealer: Sealer,
): Promise<Stored[]> {
  const t = table(wh);
  return wh.sql.begin(async (tx) => {
    const out: Stored[] = [];
    for (const c of changes) {
      const changeId = c.changeId ?? randomUUID();
      const known = await tx.unsafe(`select id, status from ${t} where company_key = $1 and change_id = $2`, [
        company,
        changeId,
      ]);
      if (known.length > 0) {
        out.push({ changeId, id: Number(known[0]!.id), status: known[0]!.status as PushState });
        continue;
      }
      // Serializes the entity's sequence numbers across concurrent intakes.
      await tx.unsafe(`select pg_advisory_xact_lock(hashtextextended($1, 0))`, [`${company}/${c.entityKey}`]);
      // Read apart from the insert: Citus takes no subquery in an INSERT's values.
      const [last] = await tx.unsafe(
        `select coalesce(max(seq), 0) + 1 as seq from ${t} where company_key = $1 and entity_key = $2`,
        [company, c.entityKey],
      );
      const rows = await tx.unsafe(
        `insert into ${t} (company_key, kind, change_id, entity_key, seq, holder_key, payload, sealed)
         values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8)
         on conflict (company_key, change_id) do nothing
         returning id, status`,
        [
          company,
          c.kind,
          changeId,
          c.entityKey,
          last!.seq as number,
          c.holderKey ?? null,
          c.payload as never,
          c.ssn ? sealer.seal(c.ssn) : null,
        ],
      );
      const row =
        rows[0] ??
        (
          await tx.unsafe(`select id, status from ${t} where company_key = $1 and change_id = $2`, [company, changeId])
        )[0]!;
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
  /** Only these companies' changes (a token limited to them); absent: every company. */
  companies?: readonly string[];
  limit?: number;
}

export async function listChanges(sql: Sql, wh: { schema: string }, o: ListOptions = {}): Promise<PushStatus[]> {
  const rows = await sql.unsafe<OutboxRow[]>(
    `select * from ${table(wh)}
     where ($1::text is null or status = $1) and ($2::timestamptz is null or updated_at >= $2) and ($3::text is null or company_key = $3)
       and ($5::text[] is null or company_key = any ($5::text[]))
     order by id desc limit $4`,
    [o.status ?? null, o.since ?? null, o.company ?? null, o.limit ?? 1000, (o.companies as string[]) ?? null],
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

/*
 * What the push runner reads and writes. A change is open while queued, sending or in doubt; an entity's changes
 * run in `seq` order, and a credential waits while its holder has an older open change.
 */

const OPEN = `status in (${OPEN_STATES.map((s) => `'${s}'`).join(', ')})`;

/** The wait before a change's (or a notification's) next attempt: doubling from 250 ms to 30 s, half of it jittered. */
function retryDelayMs(attempts: number): number {
  const cap = Math.min(30_000, 250 * 2 ** Math.max(0, attempts - 1));
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

/** Per company, each entity whose first open change may run now (verification results as one), oldest first. */
export async function runnableChanges(
  sql: Sql,
  wh: { schema: string },
): Promise<Pick<OutboxRow, 'company_key' | 'entity_key' | 'kind'>[]> {
  const t = table(wh);
  return sql.unsafe(
    `select distinct on (o.company_key, case when o.kind = 'verification' then '' else o.entity_key end)
            o.company_key, o.entity_key, o.kind, o.id
     from ${t} o
     where o.${OPEN} and o.next_attempt_at <= now()
       and not exists (select 1 from ${t} p where p.company_key = o.company_key and p.entity_key = o.entity_key and p.${OPEN} and p.seq < o.seq)
       and (o.holder_key is null or not exists (
             select 1 from ${t} h where h.company_key = o.company_key and h.entity_key = o.holder_key and h.kind = 'individual' and h.${OPEN} and h.id < o.id))
     order by o.company_key, case when o.kind = 'verification' then '' else o.entity_key end, o.id
     limit 500`,
  );
}

/** A change read by the runner, saying whether its next attempt is due (read with it: one statement fewer per change). */
export type DueRow = OutboxRow & { due: boolean };

/** The open changes of one entity, in order. */
export async function openChangesOf(
  sql: Sql,
  wh: { schema: string },
  company: string,
  entityKey: string,
): Promise<DueRow[]> {
  return sql.unsafe<DueRow[]>(
    `select *, next_attempt_at <= now() as due from ${table(wh)} where company_key = $1 and entity_key = $2 and ${OPEN} order by seq`,
    [company, entityKey],
  );
}

/** A company's open verification results that are due, at most `limit` of them. */
export async function dueVerifications(
  sql: Sql,
  wh: { schema: string },
  company: string,
  limit: number,
): Promise<DueRow[]> {
  return sql.unsafe<DueRow[]>(
    `select *, true as due from ${table(wh)} where company_key = $1 and kind = 'verification' and ${OPEN} and next_attempt_at <= now() order by id limit $2`,
    [company, limit],
  );
}

/** Whether a credential's holder has an open change older than it. */
export async function holderPending(sql: Sql, wh: { schema: string }, r: OutboxRow): Promise<boolean> {
  if (!r.holder_key) return false;
  const rows = await sql.unsafe(
    `select 1 from ${table(wh)} where company_key = $1 and entity_key = $2 and kind = 'individual' and ${OPEN} and id < $3 limit 1`,
    [r.company_key, r.holder_key, r.id],
  );
  return rows.length > 0;
}

/** Marks changes `sending` (one more attempt) before their request, the group's others coalesced into one of them. */
export async function markSending(
  sql: Sql,
  wh: { schema: string },
  ids: readonly number[],
  coalescedInto?: number,
): Promise<OutboxRow[]> {
  return sql.unsafe<OutboxRow[]>(
    `update ${table(wh)} set status = 'sending', attempts = attempts + 1, updated_at = now(),
       coalesced_into = case when id = $2 then null else $2 end
     where id = any($1::bigint[]) returning *`,
    [ids as number[], coalescedInto ?? null],
  );
}

export interface AppliedIds {
  individualId?: number;
  serviceId?: number;
  individualCertificationId?: number;
}

/** Applied: the SSN is erased, the service's ids kept, and the webhook told. */
export async function markApplied(
  sql: Sql,
  wh: { schema: string },
  ids: readonly number[],
  applied: AppliedIds,
): Promise<void> {
  await sql.unsafe(
    `update ${table(wh)} set status = 'applied', sealed = null, error = null, fields = null, applied_at = now(), updated_at = now(),
       individual_id = coalesce($2, individual_id), service_id = coalesce($3, service_id),
       individual_certification_id = coalesce($4, individual_certification_id), notify_next_at = now()
     where id = any($1::bigint[])`,
    [
      ids as number[],
      applied.individualId ?? null,
      applied.serviceId ?? null,
      applied.individualCertificationId ?? null,
    ],
  );
}

/** Refused by the service: the SSN is erased, its message and fields kept, and the webhook told. */
export async function markRefused(
  sql: Sql,
  wh: { schema: string },
  ids: readonly number[],
  message: string,
  fields?: Fields,
): Promise<void> {
  await sql.unsafe(
    `update ${table(wh)} set status = 'refused', sealed = null, error = $2, fields = $3::jsonb, updated_at = now(), notify_next_at = now()
     where id = any($1::bigint[])`,
    [ids as number[], message, (fields ?? null) as never],
  );
}

/** Where an attempt left changes it did not settle, why, and the attempts they have had. */
export interface Unsettled {
  status: 'queued' | 'in_doubt' | 'failed';
  message: string;
  attempts: number;
}

/** Not settled by this attempt: queued or in doubt again after the retry delay for `attempts`, or `failed` (the webhook told). */
export async function markUnsettled(
  sql: Sql,
  wh: { schema: string },
  ids: readonly number[],
  { status, message, attempts }: Unsettled,
): Promise<void> {
  // Citus takes no function short of immutable inside a CASE of an UPDATE: the statement says whether to notify.
  const notify = status === 'failed' ? ', notify_next_at = now()' : '';
  await sql.unsafe(
    `update ${table(wh)} set status = $2, error = $3, updated_at = now(), next_attempt_at = now() + ($4::int * interval '1 millisecond')${notify}
     where id = any($1::bigint[])`,
    [ids as number[], status, message, retryDelayMs(attempts)],
  );
}

/** Final states the webhook has not been told of and whose next delivery is due. */
export async function dueNotifications(sql: Sql, wh: { schema: string }): Promise<OutboxRow[]> {
  return sql.unsafe<OutboxRow[]>(
    `select * from ${table(wh)} where notified_at is null and notify_next_at <= now() and status in (${FINAL_STATES.map((s) => `'${s}'`).join(', ')}) order by id limit 50`,
  );
}

/** Records one delivery to the webhook: done, or due again after the retry delay. */
export async function markNotified(sql: Sql, wh: { schema: string }, r: OutboxRow, delivered: boolean): Promise<void> {
  if (delivered) {
    await sql.unsafe(
      `update ${table(wh)} set notified_at = now(), notify_attempts = notify_attempts + 1 where id = $1`,
      [r.id],
    );
    return;
  }
  await sql.unsafe(
    `update ${table(wh)} set notify_attempts = notify_attempts + 1, notify_next_at = now() + ($2::int * interval '1 millisecond') where id = $1`,
    [r.id, retryDelayMs(r.notify_attempts + 1)],
  );
}
