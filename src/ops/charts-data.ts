import { streams as catalog } from '../resources/index.ts';
import { HOUR_MS } from '../resources/stream.ts';
import type { Warehouse } from '../warehouse/connection.ts';

/** Requests of one company's key in one minute. */
export interface MinuteUse {
  at: Date;
  requests: number;
}

/** One finished run of a stream: when it started and how many rows it wrote. */
export interface RunRows {
  id: number;
  startedAt: Date;
  finishedAt: Date;
  outcome: string;
  rows: number;
}

/** Pushed changes made in one hour, by their status now. */
export interface PushHour {
  at: Date;
  counts: Record<string, number>;
}

export interface ChartsData {
  since: { budget: Date; runs: Date; push: Date };
  now: Date;
  /** Per company: requests per minute, every minute of the hours shown (0 where none). */
  budget: Map<string, MinuteUse[]>;
  /** Per company, per stream: its finished runs of the hours shown, oldest first. */
  runs: Map<string, Map<string, RunRows[]>>;
  /** Every hour shown, oldest first. */
  push: PushHour[];
}

export interface ChartsOptions {
  companies: readonly string[];
  /** How far back the budget chart goes. */
  budgetHours?: number;
  /** How far back the rows and push charts go. */
  dayHours?: number;
  now?: Date;
}

/**
 * A run counts toward a chart when it started at most this long before the chart's hours: a longer one (a backfill of
 * more than a day) shows only from its later runs. Keeps each (company, stream) read an index range.
 */
const LONGEST_RUN_MS = 24 * HOUR_MS;

/** What the status page's charts draw, each read bounded by the hours its chart shows. */
export async function readCharts(wh: Warehouse, opts: ChartsOptions): Promise<ChartsData> {
  const now = opts.now ?? new Date();
  const since = {
    budget: new Date(now.getTime() - (opts.budgetHours ?? 6) * HOUR_MS),
    runs: new Date(now.getTime() - (opts.dayHours ?? 24) * HOUR_MS),
    push: new Date(now.getTime() - (opts.dayHours ?? 24) * HOUR_MS),
  };
  return {
    since,
    now,
    budget: await readBudgetUse(wh, opts.companies, since.budget, now),
    runs: await readRunRows(wh, opts.companies, since.runs, now),
    push: await readPushHours(wh, since.push, now),
  };
}

/**
 * Requests per minute of each company's key, from sync_runs: a run records its requests but not when each was
 * sent, so a run's requests are spread evenly over its start to finish. A run paced by the limiter sends at an even
 * rate, so the estimate is close for long runs; a short burst shows as its run's average. A run still going, or one
 * closed without its counts (its process died), counts the pages its stored progress has done (one request each,
 * retries aside) up to when it stored them.
 */
export async function readBudgetUse(
  wh: Warehouse,
  companies: readonly string[],
  since: Date,
  now: Date,
): Promise<Map<string, MinuteUse[]>> {
  const { sql } = wh;
  const s = sql(wh.schema);
  const rows = await sql<{ company: string; at: Date; requests: number }[]>`
    with r as (
      select k.company, x.started_at as s, greatest(x.e, x.started_at + interval '1 millisecond') as e, x.requests
      from jsonb_array_elements_text(${sql.json([...companies])}) as k(company)
      cross join jsonb_array_elements_text(${sql.json(catalog.map((c) => c.name))}) as st(stream)
      cross join lateral (
        select started_at,
          case when recorded then finished_at else coalesce((details->'progress'->>'at')::timestamptz, finished_at, ${now}) end as e,
          case when recorded then requests else coalesce((details->'progress'->>'pagesDone')::int, 0) end as requests
        from ${s}.sync_runs, lateral (select finished_at is not null and requests > 0 as recorded) rec
        where company_key = k.company and stream = st.stream
          and started_at >= ${new Date(since.getTime() - LONGEST_RUN_MS)} and started_at < ${now}
      ) x
      where x.requests > 0 and x.e >= ${since}
    ), m as (
      select generate_series(date_trunc('minute', ${since}::timestamptz), ${now}::timestamptz, interval '1 minute') as t
    )
    select r.company, m.t as at,
      sum(r.requests * extract(epoch from least(r.e, m.t + interval '1 minute') - greatest(r.s, m.t))
        / extract(epoch from r.e - r.s))::float8 as requests
    from r join m on m.t < r.e and m.t + interval '1 minute' > r.s
    group by r.company, m.t`;
  const minutes: Date[] = [];
  for (let t = Math.floor(since.getTime() / 60_000) * 60_000; t <= now.getTime(); t += 60_000)
    minutes.push(new Date(t));
  const got = new Map(rows.map((r) => [`${r.company}/${r.at.getTime()}`, r.requests]));
  return new Map(
    companies.map((c) => [c, minutes.map((at) => ({ at, requests: got.get(`${c}/${at.getTime()}`) ?? 0 }))]),
  );
}

/** Each stream's finished runs that started in the hours shown, per company: rows written per run. */
export async function readRunRows(
  wh: Warehouse,
  companies: readonly string[],
  since: Date,
  now: Date,
): Promise<Map<string, Map<string, RunRows[]>>> {
  const { sql } = wh;
  const rows = await sql<(RunRows & { company: string; stream: string })[]>`
    select k.company, st.stream, x.id::int as id, x.started_at as "startedAt", x.finished_at as "finishedAt", x.outcome, x.rows::int as rows
    from jsonb_array_elements_text(${sql.json([...companies])}) as k(company)
    cross join jsonb_array_elements_text(${sql.json(catalog.map((c) => c.name))}) as st(stream)
    cross join lateral (
      select id, started_at, finished_at, outcome, rows from ${sql(wh.schema)}.sync_runs
      where company_key = k.company and stream = st.stream and started_at >= ${since} and started_at <= ${now}
        and finished_at is not null
      order by started_at
    ) x
    order by k.company, st.stream, x.started_at`;
  const out = new Map<string, Map<string, RunRows[]>>(companies.map((c) => [c, new Map()]));
  for (const { company, stream, ...run } of rows) {
    const byStream = out.get(company)!;
    byStream.set(stream, [...(byStream.get(stream) ?? []), run]);
  }
  return out;
}

/**
 * Changes received per hour shown, by status now. The outbox has no index on created_at: its ids grow with it, so
 * the read starts after the newest change made before the first hour shown, found by walking the primary key back
 * from the newest change (reading only the changes of the hours shown).
 */
export async function readPushHours(wh: Warehouse, since: Date, now: Date): Promise<PushHour[]> {
  const { sql } = wh;
  const s = sql(wh.schema);
  const rows = await sql<{ at: Date; status: string; n: number }[]>`
    select date_trunc('hour', created_at at time zone 'UTC') at time zone 'UTC' as at, status, count(*)::int as n
    from ${s}.push_outbox
    where id > coalesce((select id from ${s}.push_outbox where created_at < ${since} order by id desc limit 1), 0)
      and created_at >= ${since}
    group by 1, 2`;
  const hours: PushHour[] = [];
  for (let t = Math.floor(since.getTime() / HOUR_MS) * HOUR_MS; t <= now.getTime(); t += HOUR_MS)
    hours.push({ at: new Date(t), counts: {} });
  const byHour = new Map(hours.map((h) => [h.at.getTime(), h]));
  for (const r of rows) {
    const h = byHour.get(r.at.getTime());
    if (h) h.counts[r.status] = r.n;
  }
  return hours;
}
