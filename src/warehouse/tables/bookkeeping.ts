import { bigint, date, index, integer, jsonb, primaryKey, text, uniqueIndex, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, tz } from './columns.ts';

/** What a stream's run came to: `interrupted` when its process stopped before it ended (the next one records it). */
export const RUN_OUTCOMES = ['ok', 'failed', 'interrupted'] as const;
export type SyncRunOutcome = (typeof RUN_OUTCOMES)[number];

/** What a stream came to in a sync: its run's outcome, or `off` when the company switched it off (no run). */
export const STREAM_OUTCOMES = [...RUN_OUTCOMES, 'off'] as const;

/** The sync's own state: cursors, runs and rejected items (the push outbox: ./push.ts). */
export const bookkeepingTables = (s: PgSchema) => ({
  syncState: s.table(
    'sync_state',
    {
      company_key: companyKey(),
      stream: text().notNull(),
      partition: text().notNull(),
      cursor: jsonb().notNull(),
      updated_at: tz().notNull().defaultNow(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.stream, t.partition] })],
  ),
  syncRuns: s.table(
    'sync_runs',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      stream: text().notNull(),
      started_at: tz().notNull().defaultNow(),
      finished_at: tz(),
      outcome: text(),
      requests: integer().notNull().default(0),
      rows: integer().notNull().default(0),
      rejects: integer().notNull().default(0),
      error: text(),
      details: jsonb(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.id] }), index().on(t.company_key, t.stream, t.started_at)],
  ),
  syncRejects: s.table(
    'sync_rejects',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      stream: text().notNull(),
      /** The record's key as its row has it (record-keys.ts keyText), or `payload:` and a hash when its payload gives none. */
      record_key: text().notNull(),
      raw: jsonb(),
      reason: text().notNull(),
      first_seen_at: tz().notNull().defaultNow(),
      /** When a read last refused it. */
      seen_at: tz().notNull().defaultNow(),
      times_seen: integer().notNull().default(1),
      /** When a page wrote the record (it passed); a later refusal opens it again. */
      resolved_at: tz(),
      /** The run that last refused it. */
      run_id: bigint({ mode: 'number' }),
    },
    // One row per record and reason, however often it is read.
    (t) => [
      primaryKey({ columns: [t.company_key, t.id] }),
      uniqueIndex().on(t.company_key, t.stream, t.record_key, t.reason),
      index().on(t.company_key, t.stream, t.seen_at),
    ],
  ),
  /** A company's timeline: what happened to it and its streams, as ../events.ts records it. */
  events: s.table(
    'events',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      happened_at: tz().notNull().defaultNow(),
      event: text().notNull(),
      stream: text(),
      detail: jsonb(),
      /** Who made the change (an audited action's actor); null for what the sync itself saw. */
      actor: text(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.id] }), index().on(t.company_key, t.happened_at)],
  ),
  /** Fields the service sends that no column maps (kept in `_extra`), as ../../sync/schema-watch.ts finds them. */
  schemaChanges: s.table(
    'schema_changes',
    {
      company_key: companyKey(),
      stream: text().notNull(),
      field_path: text().notNull(),
      json_type: text().notNull(),
      example: jsonb(),
      field_first_seen_at: tz().notNull().defaultNow(),
      field_last_seen_at: tz().notNull().defaultNow(),
      records_seen: bigint({ mode: 'number' }).notNull().default(0),
      reads_without: integer().notNull().default(0),
      gone_at: tz(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.stream, t.field_path] })],
  ),
  /** Re-syncs of one stream an operator asked for: a worker (or the running start) claims and closes each. */
  resyncRequests: s.table(
    'resync_requests',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      stream: text().notNull(),
      /** Where it was asked for: cli, api or dashboard. */
      via: text().notNull(),
      requested_at: tz().notNull().defaultNow(),
      started_at: tz(),
      finished_at: tz(),
      outcome: text(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.id] }), index().on(t.company_key, t.stream, t.requested_at)],
  ),
  /** Requests to the service per company, stream and UTC day, added to as each run ends: outlives the runs' pruning. */
  usageDaily: s.table(
    'usage_daily',
    {
      company_key: companyKey(),
      stream: text().notNull(),
      day: date().notNull(),
      requests: bigint({ mode: 'number' }).notNull().default(0),
      runs: integer().notNull().default(0),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.day, t.stream] })],
  ),
});
