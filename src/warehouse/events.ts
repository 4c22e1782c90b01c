import type postgres from 'postgres';
import { currentActor } from './audit.ts';
import type { Warehouse } from './connection.ts';
import type { WarehouseTables } from './schema.ts';

/**
 * A company's timeline. Each event is one row of `events`; housekeeping prunes them like finished runs. Only
 * what changes a company's state is recorded (a stream starting to fail, not every failed run), so a
 * timeline stays readable at a thousand companies.
 */
export const EVENTS = [
  'company_added',
  'company_paused',
  'company_resumed',
  'key_rotated',
  'company_removed',
  'stream_failing',
  'stream_recovered',
  'field_appeared',
  'field_gone',
  'resync_requested',
  'resync_finished',
  'stream_turned_off',
  'stream_turned_on',
  'stream_purged',
  'migrated',
  'version_changed',
  'personal_data_policy_changed',
  'individual_erased',
  'field_classified',
  'new_fields_mode_changed',
] as const;

export type EventName = (typeof EVENTS)[number];

export type EventRow = WarehouseTables['events']['$inferSelect'];

export interface NewEvent {
  companyKey: string;
  event: EventName;
  stream?: string | null;
  detail?: Record<string, unknown> | null;
}

const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.events`;

/**
 * Appends events to their companies' timelines, in one statement; within an audited change, with its actor. With
 * `sql`, in that transaction: the change the events tell of and the events are seen together.
 */
export async function recordEvents(
  wh: Warehouse,
  events: readonly NewEvent[],
  sql: postgres.Sql | postgres.TransactionSql = wh.sql,
): Promise<void> {
  if (events.length === 0) return;
  await sql`
    insert into ${sql(wh.schema)}.events (company_key, event, stream, detail, actor)
    select c, e, s, d::jsonb, ${currentActor() ?? null}::text from unnest(${events.map((e) => e.companyKey)}::text[], ${events.map((e) => e.event)}::text[],
                         ${events.map((e) => e.stream ?? null) as string[]}::text[],
                         -- As text, cast row by row: a jsonb[] parameter would keep each detail as one JSON string.
                         ${events.map((e) => (e.detail ? JSON.stringify(e.detail) : null)) as string[]}::text[]) as u(c, e, s, d)`;
}

export const recordEvent = (wh: Warehouse, e: NewEvent): Promise<void> => recordEvents(wh, [e]);

export interface EventQuery {
  companyKey: string;
  since?: Date;
  /** Events before this id (the previous page's last), newest first. */
  beforeId?: number;
  limit?: number;
}

/** A company's events, newest first. */
export async function listEvents(wh: Warehouse, q: EventQuery): Promise<EventRow[]> {
  return wh.sql<EventRow[]>`
    select id::int, company_key, happened_at, event, stream, detail, actor from ${t(wh)}
    where company_key = ${q.companyKey}
      ${q.since ? wh.sql`and happened_at >= ${q.since}` : wh.sql``}
      ${q.beforeId !== undefined ? wh.sql`and id < ${q.beforeId}` : wh.sql``}
    order by id desc limit ${q.limit ?? 100}`;
}
