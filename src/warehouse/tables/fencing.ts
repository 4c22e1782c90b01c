import { bigint, primaryKey, text, timestamp, type PgSchema } from 'drizzle-orm/pg-core';

/**
 * Run fences: one row per company and job, whose token goes up each time a run of that job takes the job's lock.
 * Every page a run writes checks, in its own transaction, that the token is still the one its run took
 * (`workforce.check_run_fence`), so a run that lost its lock (a Redis outage longer than the lock) is refused by
 * Postgres itself once another run has started.
 */
export function fencingTables(s: PgSchema) {
  const runFences = s.table(
    'run_fences',
    {
      company_key: text().notNull(),
      job: text().notNull(),
      token: bigint({ mode: 'number' }).notNull(),
      /** The queue job that took the latest token. */
      holder: text(),
      taken_at: timestamp({ withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.job] })],
  );
  return { runFences };
}

/** The fence a run took with its job's lock: its pages are refused once a later run took another. */
export interface Fence {
  companyKey: string;
  job: string;
  token: number;
}
