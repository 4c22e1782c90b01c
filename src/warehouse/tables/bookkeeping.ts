import { bigint, index, integer, jsonb, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, tz } from './columns.ts';

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
      id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
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
    (t) => [index().on(t.company_key, t.stream, t.started_at)],
  ),
  syncRejects: s.table(
    'sync_rejects',
    {
      id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      stream: text().notNull(),
      raw: jsonb(),
      reason: text().notNull(),
      seen_at: tz().notNull().defaultNow(),
      run_id: bigint({ mode: 'number' }),
    },
    (t) => [index().on(t.company_key, t.stream, t.seen_at)],
  ),
});
