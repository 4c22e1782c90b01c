import type { Warehouse } from './connection.ts';

/**
 * Requests to the service per company, stream and UTC day. Each run adds its own as it ends (one statement), so
 * the counts outlive the runs' pruning.
 */

export interface UsageDay {
  company: string;
  stream: string;
  /** YYYY-MM-DD, UTC. */
  day: string;
  requests: number;
  runs: number;
}

const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.usage_daily`;

/** Adds a finished run's requests to its day (the day it ended, UTC). */
export async function addRunUsage(wh: Warehouse, companyKey: string, runId: number): Promise<void> {
  await wh.sql`
    insert into ${t(wh)} (company_key, stream, day, requests, runs)
    select company_key, stream, (finished_at at time zone 'UTC')::date, requests, 1
    from ${wh.sql(wh.schema)}.sync_runs where company_key = ${companyKey} and id = ${runId} and finished_at is not null
    on conflict (company_key, day, stream) do update
      set requests = ${t(wh)}.requests + excluded.requests, runs = ${t(wh)}.runs + 1`;
}

/** Usage since a day (inclusive), of one company or all, by day then company then stream. */
export async function readUsage(wh: Warehouse, q: { company?: string; since: string }): Promise<UsageDay[]> {
  return wh.sql<UsageDay[]>`
    select company_key as company, stream, to_char(day, 'YYYY-MM-DD') as day, requests::int as requests, runs
    from ${t(wh)}
    where day >= ${q.since}::date ${q.company ? wh.sql`and company_key = ${q.company}` : wh.sql``}
    order by day, company_key, stream`;
}
