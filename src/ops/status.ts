import type { Warehouse } from '../warehouse/connection.ts';

export interface StreamStatus {
  company: string;
  stream: string;
  lastOutcome: string | null;
  lastStartedAt: Date | null;
  lastFinishedAt: Date | null;
  lastOkAt: Date | null;
  requests: number;
  rows: number;
  rejects: number;
  error: string | null;
}

export interface Status {
  streams: StreamStatus[];
  rejectsTotal: number;
}

/** Each stream's latest run and when it last succeeded: what an operator checks for freshness. */
export async function readStatus(wh: Warehouse): Promise<Status> {
  const { sql, schema } = wh;
  const s = sql(schema);
  const streams = await sql<StreamStatus[]>`
    select distinct on (r.company_key, r.stream)
      r.company_key as company, r.stream, r.outcome as "lastOutcome",
      r.started_at as "lastStartedAt", r.finished_at as "lastFinishedAt",
      (select max(ok.finished_at) from ${s}.sync_runs ok
        where ok.company_key = r.company_key and ok.stream = r.stream and ok.outcome = 'ok') as "lastOkAt",
      coalesce(r.requests, 0)::int as requests, coalesce(r.rows, 0)::int as rows,
      coalesce(r.rejects, 0)::int as rejects, r.error
    from ${s}.sync_runs r
    order by r.company_key, r.stream, r.started_at desc
  `;
  const [rejects] = await sql<{ n: number }[]>`select count(*)::int as n from ${s}.sync_rejects`;
  return { streams: [...streams], rejectsTotal: rejects?.n ?? 0 };
}
