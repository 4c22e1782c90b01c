import { Cron } from 'croner';
import { pino } from 'pino';
import { jobs } from '../jobs/index.ts';
import { startSandbox, type SandboxSize } from '../src/sandbox/index.ts';
import { SourceClient } from '../src/source/client.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import type { SyncContext } from '../src/sync/context.ts';
import { runStreams, selectStreams, type SyncSummary } from '../src/sync/runner.ts';
import { partitionsOf } from '../src/sync/partitions.ts';
import { clockProbe, streams, type StreamName } from '../src/resources/index.ts';
import { dependencyBounds } from '../src/queue/dependencies.ts';
import { divergence } from '../test/support/convergence.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * What an incremental cycle costs against what the changes need, per stream: right after a backfill with no
 * change, after an hour of changes and after a day of changes. A cycle runs every stream once.
 *
 * The minimum of a stream in a cycle is
 *   one request per partition (the read that finds there is nothing, or the last page)
 *   + the pages its changed records fill (rows that differ from the service's truth before the cycle: missing,
 *     stale or gone; 200 a page, counted over the stream, which is at most their count per partition)
 *   + the pages of each fixed re-read that fell due in the cycle (the rows it returned, 200 a page, at least one;
 *     for an unpaged list, the requests its ranges take: the course list's 31-day limit).
 * `ratio` is requests over that minimum (the goal for a day of changes: 1.2).
 *
 * The first no-change cycle follows the backfill at once; the steady one follows it, once the signals the
 * backfill wrote while lists were being read have been read (the required-status list reads the employees whose
 * credentials were written after its own read began).
 *
 * `noChange.floor` is the least a steady no-change cycle can cost under the spec: one request per stream
 * partition, plus the pages past the first of the reads the spec gives no filter for (`unfilterable`: the pending
 * certification list takes only Offset and Limit), plus the pages past the first of the open (Pending) time-off
 * list, the only filter that reveals decisions. The required-status list takes an employee filter, so it is read
 * whole only daily and otherwise by the employees a signal names.
 *
 * The daily no-change cost adds up every read of a stream a day at its steady no-change cost: each firing of a
 * job (its cron) reads its streams, and the streams they depend on unless a read of them is within their bound
 * (runner.ts `FreshEnough`: the credentials job takes the individuals job's read); plus each periodic complete
 * re-read at the requests it sent when it ran (one that did not run in the day cycle, a weekly re-read of
 * everything: the backfill's).
 * `SIZE=small node --import tsx bench/incremental.ts` for a quick run.
 */

const SIZE = (process.env.SIZE ?? 'medium') as SandboxSize;
const PAGE = 200;
const DAILY_BUDGET = 100 * 60 * 24;

const pg = await startPostgres();
const sandbox = await startSandbox({ port: 0, seed: 3, size: SIZE, rateLimit: null, log: pino({ level: 'silent' }) });
const wh = await openWarehouse({ databaseUrl: pg.url });
await wh.migrate();
const limiter = createRateLimiter({ rateLimit: { limit: 100_000, periodMs: 1000 } });
const client = new SourceClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, limiter });
const ctx: SyncContext = {
  companyKey: 'bench',
  client,
  warehouse: wh,
  log: pino({ level: 'silent' }),
  now: () => client.serviceNow(),
  refreshClock: () => client.freshServiceNow(clockProbe, 0),
  formIds: sandbox.data.formIds(),
  runTypeIds: sandbox.data.runTypeIds(),
};

/** Rows written (inserted, rewritten or marked gone) since `since`, per stream's table. */
async function rowsWritten(since: Date): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of streams) {
    const table = s.target.table;
    const [r] = await wh.sql.unsafe(
      `select count(*)::int as n from "${wh.schema}"."${table}" where company_key = 'bench' and (_synced_at >= $1 or _deleted_at >= $1)`,
      [since],
    );
    out[s.name] = (out[s.name] ?? 0) + Number(r!.n);
  }
  return out;
}

/** Reads whose every page is read each cycle because the spec offers no filter that would narrow them. */
const UNFILTERABLE: Partial<Record<StreamName, string>> = {
  'pending-certifications': 'the pending list takes only Offset and Limit',
};

const pagesOf = (rows: number) => Math.max(1, Math.ceil(rows / PAGE));

async function cycle(label: string) {
  const d = await divergence(wh, sandbox.data, 'bench');
  const started = new Date();
  const summary: SyncSummary = await runStreams(ctx, selectStreams());
  const written = await rowsWritten(started);
  const perStream: Record<string, unknown> = {};
  let requests = 0;
  let minRequests = 0;
  let rowsChanged = 0;
  let rows = 0;
  for (const o of summary.streams) {
    const x = d[o.stream]!;
    const changed = x.missing.length + x.stale.length + x.extra.length;
    const partitions = partitionsOf(streams.find((s) => s.name === o.stream)!, ctx).length;
    const def = streams.find((s) => s.name === o.stream)!;
    // An unpaged list answers a range in one request whatever its rows: its re-read needs the ranges the spec's
    // limit forces (the course list's 31 days), which is what it sent.
    const paged = def.endpoint.response.kind === 'envelope';
    const rereadPages = paged
      ? o.rereadRows.reduce((n, r) => n + pagesOf(r), 0)
      : o.rereadRequests.reduce((n, r) => n + r, 0);
    const min = partitions + Math.ceil(changed / PAGE) + rereadPages;
    perStream[o.stream] = {
      requests: o.requests,
      minRequests: min,
      ratio: Number((o.requests / min).toFixed(2)),
      rowsWritten: written[o.stream],
      rowsChanged: changed,
      ...(o.rereads.length > 0
        ? { rereads: o.rereads, rereadRows: o.rereadRows, rereadRequests: o.rereadRequests }
        : {}),
      ...(UNFILTERABLE[o.stream as StreamName] ? { unfilterable: UNFILTERABLE[o.stream as StreamName] } : {}),
      ...(o.outcome !== 'ok' ? { outcome: o.outcome } : {}),
    };
    requests += o.requests;
    minRequests += min;
    rowsChanged += changed;
    rows += written[o.stream] ?? 0;
  }
  return {
    label,
    requests,
    minRequests,
    ratio: Number((requests / minRequests).toFixed(2)),
    rowsWritten: rows,
    rowsChanged,
    perStream,
    byStream: summary.streams,
  };
}

/** The least a no-change cycle can cost (see the doc comment), from what the no-change cycle read. */
function floorOf(noChange: Awaited<ReturnType<typeof cycle>>) {
  const partitions = streams.reduce((n, s) => n + partitionsOf(s, ctx).length, 0);
  const by = new Map(noChange.byStream.map((o) => [o.stream, o.requests]));
  const unfilterable = Object.fromEntries(Object.keys(UNFILTERABLE).map((name) => [name, by.get(name) ?? 0]));
  const extraPages = Object.values(unfilterable).reduce((n, r) => n + Math.max(0, r - 1), 0);
  const openTimeOff = Math.max(0, (by.get('time-off-requests') ?? 1) - 1);
  return {
    partitions,
    unfilterablePages: unfilterable,
    openTimeOffPages: by.get('time-off-requests') ?? 0,
    total: partitions + extraPages + openTimeOff,
    atMost30: partitions + extraPages + openTimeOff <= 30,
  };
}

/** The firings of a cron from `from` (included) to `to` (excluded). */
function firings(cron: string, from: number, to: number): number[] {
  const out: number[] = [];
  const c = new Cron(cron, { timezone: 'UTC', paused: true });
  // A run at `from` itself counts: start looking just before it.
  for (let next = c.nextRun(new Date(from - 1)); next && next.getTime() < to; next = c.nextRun(next))
    out.push(next.getTime());
  c.stop();
  return out;
}

/**
 * Reads a day of each stream by the default crons: a job's own streams at each firing (once, when two jobs fire
 * together), and the streams they depend on only when their last read is older than their bound. The day before
 * is played too, so the day starts with the reads it would find.
 */
function readsADay(): { reads: Record<string, number>; asDependency: Record<string, number> } {
  const incremental = jobs.filter((j) => !j.fullRefresh && !j.run);
  const bounds = dependencyBounds({ jobs: incremental, cronOverrides: {}, timezone: 'UTC' });
  const day = Date.parse('2026-03-02T00:00:00Z');
  const fired = incremental
    .flatMap((job) => firings(job.cron, day - 86_400_000, day + 86_400_000).map((at) => ({ at, job })))
    .sort((a, b) => a.at - b.at);
  const last = new Map<string, number>();
  const reads: Record<string, number> = {};
  const asDependency: Record<string, number> = {};
  for (const { at, job } of fired) {
    for (const s of selectStreams(job.streams)) {
      const bound = bounds.get(job.name)?.[s.name];
      const freshFrom = bound === undefined ? at : at - bound;
      if ((last.get(s.name) ?? -Infinity) >= freshFrom) continue;
      last.set(s.name, at);
      if (at < day) continue;
      reads[s.name] = (reads[s.name] ?? 0) + 1;
      if (!job.streams.includes(s.name)) asDependency[s.name] = (asDependency[s.name] ?? 0) + 1;
    }
  }
  return { reads, asDependency };
}

const t0 = Date.now();
const backfill = await runStreams(ctx, selectStreams());
const backfillMs = Date.now() - t0;
const noChange = await cycle('no change');
const steady = await cycle('no change, steady');
sandbox.data.advance(1);
const hour = await cycle('an hour of changes');
sandbox.data.advance(24);
const day = await cycle('a day of changes');

// Each stream's cost a day with nothing changing: its reads a day at the no-change cost, plus its re-reads.
const noChangeBy = new Map(steady.byStream.map((o) => [o.stream, o.requests]));
const readsByDay = readsADay();
const daily: Record<string, number> = {};
for (const [name, n] of Object.entries(readsByDay.reads))
  daily[name] = (daily[name] ?? 0) + n * (noChangeBy.get(name) ?? 0);
const rereadCost: Record<string, number> = {};
const backfillBy = new Map(backfill.streams.map((o) => [o.stream, o.requests]));
for (const s of streams) {
  const rereads = 'rereads' in s.strategy ? (s.strategy.rereads ?? []) : [];
  for (const r of rereads) {
    // A re-read costs the requests it sent in the day cycle (each partition's); one that did not run there (weekly),
    // what the backfill cost.
    const ran = day.byStream.find((o) => o.stream === s.name);
    const spent = (ran?.rereads ?? []).reduce(
      (n, name, i) => n + (name === r.name ? (ran?.rereadRequests[i] ?? 0) : 0),
      0,
    );
    const cost = ran?.rereads.includes(r.name) ? spent : (backfillBy.get(s.name) ?? 0);
    rereadCost[`${s.name}:${r.name}`] = Math.round((cost * 24) / r.everyHours);
    daily[s.name] = (daily[s.name] ?? 0) + (cost * 24) / r.everyHours;
  }
}
const weeklyFull = jobs.filter((j) => j.fullRefresh).flatMap((j) => j.streams as StreamName[]);
for (const name of weeklyFull) {
  rereadCost[`${name}:weekly-full-refresh`] = Math.round((backfillBy.get(name) ?? 0) / 7);
  daily[name] = (daily[name] ?? 0) + (backfillBy.get(name) ?? 0) / 7;
}
const dailyTotal = Object.values(daily).reduce((a, b) => a + b, 0);
const strip = ({ byStream: _b, ...rest }: Awaited<ReturnType<typeof cycle>>) => rest;

console.log(
  JSON.stringify(
    {
      size: SIZE,
      backfill: { requests: backfill.requests, rows: backfill.rows, ms: backfillMs },
      cycles: [strip(noChange), strip(steady), strip(hour), strip(day)],
      noChange: {
        perStream: Object.fromEntries(steady.byStream.map((o) => [o.stream, o.requests])),
        floor: floorOf(steady),
      },
      dailyNoChange: {
        requests: Math.round(dailyTotal),
        shareOfBudget: Number((dailyTotal / DAILY_BUDGET).toFixed(4)),
        perStream: Object.fromEntries(Object.entries(daily).map(([k, v]) => [k, Math.round(v)])),
        readsADay: readsByDay.reads,
        readsAsDependency: readsByDay.asDependency,
        rereads: rereadCost,
      },
    },
    null,
    2,
  ),
);

await client.close();
await limiter.close();
await wh.close();
await sandbox.close();
await pg.stop();
