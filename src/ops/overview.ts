import type { RateLimit } from '../config.ts';
import { streams as catalog } from '../resources/index.ts';
import { streamSchedules, type ScheduleOptions } from '../queue/schedules.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { streamsOffOf } from '../warehouse/company-streams.ts';
import { isDistributed } from '../warehouse/distribution.ts';
import type { StoredProgress } from '../warehouse/runs.ts';
import type { Freshness } from './freshness.ts';
import { companyProgress, runProgress, type CompanyProgress } from './progress.ts';

/**
 * The fleet at a glance: one row per company, trouble first. Each concern is one set-based query grouped by
 * company, so the overview costs the same few statements at one company or a thousand.
 */

/** A company's worst trouble: a stream whose last run failed, then its worst freshness. */
export const COMPANY_STATES = ['failing', 'stale', 'late', 'fresh'] as const;
export type CompanyState = (typeof COMPANY_STATES)[number];
/** What the overview filters on: a company's state, or that it has runs under way. */
export const STATE_FILTERS = [...COMPANY_STATES, 'running'] as const;
export type StateFilter = (typeof STATE_FILTERS)[number];

export interface CompanySummary {
  company: string;
  state: CompanyState;
  /** Its stalest stream's freshness and lag (seconds since its last success started; null: never synced). */
  worstFreshness: Freshness;
  worstStream: string | null;
  worstLagSeconds: number | null;
  streams: number;
  /** Streams whose last finished run failed. */
  failing: string[];
  running: number;
  rejectsOpen: number;
  /** Requests its runs that ended in the last hour sent, and that against its key's budget for an hour. */
  requestsLastHour: number;
  budgetUsed: number | null;
  /** Its runs under way taken together: share done and ETA (absent when none runs). */
  progress: CompanyProgress | null;
  /** Streams the company turned off: not counted in its state. */
  streamsOff: string[];
}

export interface Overview {
  companies: CompanySummary[];
  /** Companies in each state, over the whole fleet whatever the filter. */
  counts: Record<CompanyState, number>;
  total: number;
  rejectsOpen: number;
}

export interface OverviewOptions {
  companies: readonly string[];
  schedule: ScheduleOptions;
  budget?: (company: string) => RateLimit | undefined;
  now?: Date;
}

const RANK: Freshness[] = ['fresh', 'late', 'stale'];

interface StreamFigures {
  company: string;
  worst: number;
  worstStream: string | null;
  worstLag: number | null;
  streams: number;
  failing: string[] | null;
  running: number;
  progress: { stream: string; progress: StoredProgress }[] | null;
}

/** Every company's streams summed up, in one statement: freshness against each stream's schedule, failures, runs under way. */
async function streamFigures(
  wh: Warehouse,
  companies: readonly string[],
  opts: OverviewOptions,
  now: Date,
): Promise<StreamFigures[]> {
  const schedules = streamSchedules(opts.schedule, now);
  const names = catalog.map((c) => c.name);
  // A stream no job runs has no schedule to be late against (freshnessOf's infinite interval).
  const intervals = names.map((n) => {
    const ms = schedules.get(n)?.intervalMs;
    return ms !== undefined && Number.isFinite(ms) ? String(ms / 1000) : null;
  });
  const { sql } = wh;
  const runs = sql`${sql(wh.schema)}.sync_runs`;
  // A stream the company turned off is not scheduled: it is neither late nor failing.
  const switched = sql`${sql(wh.schema)}.companies`;
  // Citus looks up a company's latest runs beside it only from a distributed table (its companies), not from a
  // list: there every company a process serves is in that table.
  const companiesOf = (await isDistributed(wh))
    ? sql`(select company_key as company from ${sql(wh.schema)}.companies where company_key = any(${companies as string[]}::text[])) c`
    : sql`unnest(${companies as string[]}::text[]) c(company)`;
  return sql<StreamFigures[]>`
    with each as (
      select c.company, st.stream, st.interval_s, last.finished_at is null and last.started_at is not null as running,
        case when last.finished_at is null then last.details->'progress' end as progress,
        -- The last finished run's outcome: the last run's own, unless it is still going.
        case when last.finished_at is not null then last.outcome else (
          select r.outcome from ${runs} r
          where r.company_key = c.company and r.stream = st.stream and r.finished_at is not null order by r.started_at desc limit 1) end as outcome,
        extract(epoch from ${now}::timestamptz - ok.started_at)::float8 as lag
      from ${companiesOf}
      cross join unnest(${names}::text[], ${intervals as string[]}::float8[]) st(stream, interval_s)
      left join lateral (
        select r.started_at, r.finished_at, r.outcome, r.details from ${runs} r
        where r.company_key = c.company and r.stream = st.stream order by r.started_at desc limit 1) last on true
      left join lateral (
        select r.started_at from ${runs} r
        where r.company_key = c.company and r.stream = st.stream and r.outcome = 'ok' order by r.started_at desc limit 1) ok on true
      left join ${switched} co on co.company_key = c.company
      where co.streams_off is null or not (st.stream = any(co.streams_off))
    ), ranked as (
      select *, case when lag is null then 2 when interval_s is null then 0
                     when lag > 2 * interval_s then 2 when lag > 1.5 * interval_s then 1 else 0 end as rank
      from each
    )
    select company, max(rank)::int as worst,
      (array_agg(stream order by rank desc, lag desc nulls first))[1] as "worstStream",
      (array_agg(lag order by rank desc, lag desc nulls first))[1] as "worstLag",
      count(*)::int as streams,
      array_agg(stream order by stream) filter (where outcome = 'failed') as failing,
      count(*) filter (where running)::int as running,
      jsonb_agg(jsonb_build_object('stream', stream, 'progress', progress)) filter (where progress is not null) as progress
    from ranked group by company`;
}

async function openRejects(wh: Warehouse, companies: readonly string[]): Promise<Map<string, number>> {
  const rows = await wh.sql<{ company: string; n: number }[]>`
    select company_key as company, count(*)::int as n from ${wh.sql(wh.schema)}.sync_rejects
    where resolved_at is null and company_key = any(${companies as string[]}) group by company_key`;
  return new Map(rows.map((r) => [r.company, r.n]));
}

/** Requests of the runs that ended in the last hour: what each key spent of its budget. */
async function requestsLastHour(wh: Warehouse, companies: readonly string[], now: Date): Promise<Map<string, number>> {
  const rows = await wh.sql<{ company: string; n: number }[]>`
    select company_key as company, sum(requests)::int as n from ${wh.sql(wh.schema)}.sync_runs
    where finished_at >= ${now}::timestamptz - interval '1 hour' and company_key = any(${companies as string[]})
    group by company_key`;
  return new Map(rows.map((r) => [r.company, r.n]));
}

const NOTHING_RUN: Omit<StreamFigures, 'company'> = {
  worst: 0,
  worstStream: null,
  worstLag: null,
  streams: 0,
  failing: null,
  running: 0,
  progress: null,
};

function stateOf(f: StreamFigures): CompanyState {
  if (f.failing?.length) return 'failing';
  return RANK[f.worst] as CompanyState;
}

/** Every company summed up, trouble first: failing, then stale, late and fresh, the stalest first in each. */
export async function readOverview(wh: Warehouse, opts: OverviewOptions): Promise<Overview> {
  const now = opts.now ?? new Date();
  const companies = [...new Set(opts.companies)];
  const [figures, rejects, requests, off] = await Promise.all([
    streamFigures(wh, companies, opts, now),
    openRejects(wh, companies),
    requestsLastHour(wh, companies, now),
    streamsOffOf(wh, companies),
  ]);
  // A company with every stream off has no figures: nothing of it is late.
  const figured = new Set(figures.map((f) => f.company));
  const allOff = companies
    .filter((c) => !figured.has(c))
    .map((company): StreamFigures => ({ ...NOTHING_RUN, company }));
  const summaries = [...figures, ...allOff].map((f): CompanySummary => {
    const running = (f.progress ?? []).map((p) => ({ company: f.company, ...p }));
    const progress = running.length ? companyProgress(running, runProgress(running, now))[0]! : null;
    const budget = opts.budget?.(f.company);
    const used = requests.get(f.company) ?? 0;
    return {
      company: f.company,
      state: stateOf(f),
      worstFreshness: RANK[f.worst]!,
      worstStream: f.worstStream,
      worstLagSeconds: f.worstLag === null ? null : Math.round(f.worstLag),
      streams: f.streams,
      failing: f.failing ?? [],
      running: f.running,
      rejectsOpen: rejects.get(f.company) ?? 0,
      requestsLastHour: used,
      budgetUsed: budget ? Math.round((used / (budget.limit * (3_600_000 / budget.periodMs))) * 1000) / 1000 : null,
      progress,
      streamsOff: off.get(f.company) ?? [],
    };
  });
  summaries.sort(troubleFirst);
  const counts = Object.fromEntries(COMPANY_STATES.map((s) => [s, 0])) as Record<CompanyState, number>;
  for (const s of summaries) counts[s.state]++;
  return {
    companies: summaries,
    counts,
    total: summaries.length,
    rejectsOpen: summaries.reduce((n, s) => n + s.rejectsOpen, 0),
  };
}

function troubleFirst(a: CompanySummary, b: CompanySummary): number {
  const byState = COMPANY_STATES.indexOf(a.state) - COMPANY_STATES.indexOf(b.state);
  if (byState !== 0) return byState;
  if (a.failing.length !== b.failing.length) return b.failing.length - a.failing.length;
  const lag = (s: CompanySummary) => s.worstLagSeconds ?? Number.POSITIVE_INFINITY;
  if (lag(a) !== lag(b)) return lag(b) > lag(a) ? 1 : -1;
  return a.company < b.company ? -1 : a.company > b.company ? 1 : 0;
}

/** The companies a search and a state filter keep: a search matches part of the key. */
export function filterCompanies(
  all: readonly CompanySummary[],
  f: { search?: string; state?: StateFilter },
): CompanySummary[] {
  const needle = f.search?.toLowerCase();
  return all.filter(
    (c) =>
      (!needle || c.company.toLowerCase().includes(needle)) &&
      (!f.state || (f.state === 'running' ? c.running > 0 : c.state === f.state)),
  );
}

export function isStateFilter(v: string): v is StateFilter {
  return (STATE_FILTERS as readonly string[]).includes(v);
}
