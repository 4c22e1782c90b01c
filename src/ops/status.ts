import { streams as catalog } from '../resources/index.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { ModelRunCounts } from '../push/model-run.ts';
import { listSchemaChanges, type SchemaChangeRow } from '../warehouse/schema-changes.ts';
import { streamsOffOf } from '../warehouse/company-streams.ts';
import { freshnessOf, type Freshness } from './freshness.ts';
import { streamSchedules, type ScheduleOptions } from '../queue/schedules.ts';
import type { StoredProgress } from '../warehouse/runs.ts';
import { companyProgress, runProgress, type CompanyProgress, type RunProgress } from './progress.ts';

export interface StreamStatus {
  company: string;
  stream: string;
  /** ok, failed, interrupted; null while the last run is going, or when none ran. */
  lastOutcome: string | null;
  lastStartedAt: Date | null;
  lastFinishedAt: Date | null;
  lastOkAt: Date | null;
  /** When the last successful run started: the data is as fresh as this. */
  lastOkStartedAt: Date | null;
  /** The last run is still going. */
  running: boolean;
  requests: number;
  rows: number;
  rejects: number;
  /** Records of this stream still refused (open rows of sync_rejects). */
  rejectsKept: number;
  error: string | null;
  /** `off`: the company turned the stream off; it is not scheduled, so neither late nor failing. */
  freshness: Freshness | 'off';
  /** Seconds since the last successful run started; null when none succeeded. */
  lagSeconds: number | null;
  /** The job that runs it, its cron and its next run (null for a stream no job runs). */
  job: string | null;
  cron: string | null;
  intervalSeconds: number | null;
  nextRunAt: Date | null;
  /** How far its run under way is, and when it ends (progress.ts); only while it runs. */
  progress?: RunProgress;
}

export interface PushSummary {
  /** push_outbox changes by status, whatever statuses the push module uses. */
  counts: Record<string, number>;
  inDoubt: number;
  /** The oldest change still waiting to be sent. */
  oldestQueuedAt: Date | null;
}

export interface Status {
  streams: StreamStatus[];
  /** Each company with runs under way: their share done and when the last ends. */
  progress: CompanyProgress[];
  rejectsTotal: number;
  push: PushSummary;
  /** Fields the service sends that no column maps (schema_changes), the latest first. */
  schemaChanges: SchemaChangeRow[];
}

export interface StatusOptions {
  /** Configured companies: each gets every catalog stream, run or not. */
  companies?: readonly string[];
  /** Only these companies (a company's page, a page of /status): their runs alone are read. */
  only?: readonly string[];
  schedule: ScheduleOptions;
  now?: Date;
}

/** Statuses of a change that still waits to be sent. */
const WAITING = ['queued', 'pending'];

interface LastRun {
  company: string;
  stream: string;
  lastOutcome: string | null;
  lastStartedAt: Date;
  lastFinishedAt: Date | null;
  lastOkAt: Date | null;
  lastOkStartedAt: Date | null;
  requests: number;
  rows: number;
  rejects: number;
  error: string | null;
  progress: StoredProgress | null;
}

/** Each stream's latest run, when it last succeeded and how fresh that is against its schedule; push counts. */
export async function readStatus(wh: Warehouse, opts: StatusOptions): Promise<Status> {
  const { sql, schema } = wh;
  const s = sql(schema);
  const now = opts.now ?? new Date();
  const runs = await sql<LastRun[]>`
    select distinct on (r.company_key, r.stream)
      r.company_key as company, r.stream, r.outcome as "lastOutcome",
      r.started_at as "lastStartedAt", r.finished_at as "lastFinishedAt",
      ok.finished_at as "lastOkAt", ok.started_at as "lastOkStartedAt",
      coalesce(r.requests, 0)::int as requests, coalesce(r.rows, 0)::int as rows,
      coalesce(r.rejects, 0)::int as rejects, r.error,
      case when r.finished_at is null then r.details->'progress' end as progress
    from ${s}.sync_runs r
    left join lateral (
      select o.started_at, o.finished_at from ${s}.sync_runs o
      where o.company_key = r.company_key and o.stream = r.stream and o.outcome = 'ok'
      order by o.started_at desc limit 1
    ) ok on true
    ${opts.only ? sql`where r.company_key = any(${opts.only as string[]})` : sql``}
    order by r.company_key, r.stream, r.started_at desc
  `;
  const kept = await sql<{ company: string; stream: string; n: number }[]>`
    select company_key as company, stream, count(*)::int as n from ${s}.sync_rejects
    where resolved_at is null ${opts.only ? sql`and company_key = any(${opts.only as string[]})` : sql``} group by company_key, stream`;
  const keptOf = new Map(kept.map((k) => [`${k.company}/${k.stream}`, k.n]));
  const schedules = streamSchedules(opts.schedule, now);
  const byKey = new Map(runs.map((r) => [`${r.company}/${r.stream}`, r]));
  const running = runs.flatMap((r) =>
    r.progress ? [{ company: r.company, stream: r.stream, progress: r.progress }] : [],
  );
  const progressOf = runProgress(running, now);
  const configured = opts.only ? (opts.companies ?? []).filter((c) => opts.only!.includes(c)) : (opts.companies ?? []);
  const companies = [...new Set([...configured, ...runs.map((r) => r.company)])].sort();
  const offOf = await streamsOffOf(wh, companies);
  const streams: StreamStatus[] = [];
  for (const company of companies) {
    const names = [...catalog.map((c) => c.name), ...runs.filter((r) => r.company === company).map((r) => r.stream)];
    for (const stream of [...new Set(names)]) {
      const run = byKey.get(`${company}/${stream}`);
      if (!run && !opts.companies?.includes(company)) continue;
      const off = offOf.get(company)?.includes(stream) ?? false;
      const sched = schedules.get(stream);
      const { freshness, lagMs } = freshnessOf(
        run?.lastOkStartedAt ?? null,
        sched?.intervalMs ?? Number.POSITIVE_INFINITY,
        now.getTime(),
      );
      streams.push({
        company,
        stream,
        lastOutcome: run?.lastOutcome ?? null,
        lastStartedAt: run?.lastStartedAt ?? null,
        lastFinishedAt: run?.lastFinishedAt ?? null,
        lastOkAt: run?.lastOkAt ?? null,
        lastOkStartedAt: run?.lastOkStartedAt ?? null,
        running: !!run && run.lastFinishedAt === null,
        requests: run?.requests ?? 0,
        rows: run?.rows ?? 0,
        rejects: run?.rejects ?? 0,
        rejectsKept: keptOf.get(`${company}/${stream}`) ?? 0,
        error: run?.error ?? null,
        freshness: off ? 'off' : freshness,
        lagSeconds: lagMs === null ? null : Math.round(lagMs / 1000),
        job: sched?.job ?? null,
        cron: sched?.cron ?? null,
        intervalSeconds: sched && Number.isFinite(sched.intervalMs) ? sched.intervalMs / 1000 : null,
        nextRunAt: off ? null : (sched?.next ?? null),
        ...(progressOf.has(`${company}/${stream}`) ? { progress: progressOf.get(`${company}/${stream}`) } : {}),
      });
    }
  }
  const [rejects] = await sql<{ n: number }[]>`
    select count(*)::int as n from ${s}.sync_rejects
    where resolved_at is null ${opts.only ? sql`and company_key = any(${opts.only as string[]})` : sql``}`;
  return {
    streams,
    progress: companyProgress(running, progressOf),
    rejectsTotal: rejects?.n ?? 0,
    push: await readPushSummary(wh),
    schemaChanges: (await listSchemaChanges(wh)).filter((r) => !opts.only || opts.only.includes(r.company_key)),
  };
}

/** push_outbox counts by status, read generically so any set of statuses shows. */
export async function readPushSummary(wh: Warehouse): Promise<PushSummary> {
  const { sql, schema } = wh;
  const s = sql(schema);
  const counts = await outboxCounts(wh);
  const [oldest] = await sql<{ at: Date | null }[]>`
    select min(created_at) as at from ${s}.push_outbox where status in ${sql(WAITING)}`;
  return { counts, inDoubt: counts.in_doubt ?? 0, oldestQueuedAt: oldest?.at ?? null };
}

export async function outboxCounts(wh: Warehouse): Promise<Record<string, number>> {
  const rows = await wh.sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from ${wh.sql(wh.schema)}.push_outbox group by status order by status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

/** Changes an operator may retry: failed and refused ones (a change in doubt is settled by the push worker's lookup). */
export async function readRetryablePushes(
  wh: Warehouse,
  limit = 20,
): Promise<{ id: number; company: string; kind: string; status: string; error: string | null; updatedAt: Date }[]> {
  return wh.sql`
    select id::int as id, company_key as company, kind, status, error, updated_at as "updatedAt"
    from ${wh.sql(wh.schema)}.push_outbox where status in ('failed', 'refused') and payload <> '{}'::jsonb
    order by updated_at desc limit ${limit}`;
}

/** A push model with its latest run, for the status page. */
export interface PushModelLine {
  name: string;
  company: string;
  kind: string;
  cron: string | null;
  paused: boolean;
  maxChanges: number;
  lastRun: (ModelRunCounts & { startedAt: Date; outcome: string | null; error: string | null }) | null;
}

/** Every push model and its latest run (push_models, push_model_runs), in one statement. */
export async function readPushModels(wh: Warehouse): Promise<PushModelLine[]> {
  const s = wh.sql(wh.schema);
  const rows = await wh.sql<(Omit<PushModelLine, 'lastRun'> & { run: Record<string, unknown> | null })[]>`
    select m.name, m.company_key as company, m.kind, m.cron, m.paused, m.max_changes as "maxChanges", to_jsonb(r) as run
    from ${s}.push_models m
    -- Each model's latest run by a join, not a lateral subquery: on Citus the models are a reference table,
    -- which no subquery may correlate. A model's runs are its company's, so the latest has the greatest id there.
    left join (
      select r.* from ${s}.push_model_runs r
      join (select company_key, max(id) as id from ${s}.push_model_runs group by company_key, model_name) l using (company_key, id)
    ) r on r.model_name = m.name
    order by m.name`;
  return rows.map(({ run, ...m }) => ({
    ...m,
    lastRun: run
      ? {
          startedAt: new Date(String(run.started_at)),
          outcome: (run.outcome as string | null) ?? null,
          rowsRead: Number(run.rows_read),
          unchanged: Number(run.unchanged),
          changed: Number(run.changed),
          queued: Number(run.queued),
          refused: Number(run.refused),
          overCap: Boolean(run.over_cap),
          error: (run.error as string | null) ?? null,
        }
      : null,
  }));
}

export interface Reject {
  id: number;
  company: string;
  stream: string;
  reason: string;
  raw: unknown;
  seenAt: Date;
  runId: number | null;
}

/** sync_rejects, newest first, optionally of one company and stream. */
export async function readRejects(
  wh: Warehouse,
  opts: { company?: string; stream?: string; limit?: number; before?: number } = {},
): Promise<Reject[]> {
  const { sql } = wh;
  const where = [
    opts.company ? sql`company_key = ${opts.company}` : sql`true`,
    opts.stream ? sql`stream = ${opts.stream}` : sql`true`,
    opts.before ? sql`id < ${opts.before}` : sql`true`,
  ];
  return sql<Reject[]>`
    select id::int as id, company_key as company, stream, reason, raw, seen_at as "seenAt", run_id::int as "runId"
    from ${sql(wh.schema)}.sync_rejects
    where ${where[0]!} and ${where[1]!} and ${where[2]!}
    order by id desc limit ${opts.limit ?? 50}`;
}
