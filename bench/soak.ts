import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Cron } from 'croner';
import postgres from 'postgres';
import { jobs } from '../jobs/index.ts';
import { dependencyBounds } from '../src/queue/dependencies.ts';
import { createSyncQueue, enqueueRun, redisConnection, syncJobCounts } from '../src/queue/sync-queue.ts';
import { WFSYNC } from '../test/support/processes.ts';
import { startPostgres, startRedis } from '../test/support/services.ts';
import { BENCH_KEY, startSandboxProcess } from './sync-process.ts';

/**
 * Thirty simulated days of a `wfsync worker` at `small` with the default crons, compressed. This script is the
 * scheduler: for each step of simulated time it advances the sandbox's clock (POST /_sandbox/advance), then puts
 * on the BullMQ queue, as the scheduler's dispatch does, one run of each job whose cron fired in that step, and
 * waits until the worker has run them all. The worker is a process of its own; its RSS is read from /proc.
 *
 * The warehouse stamps runs with its own clock, which the soak does not move: a simulated day lasts about
 * `--day-seconds` of real time (a step waits out its share when the runs took less), and the retention horizons
 * given to the worker are scaled by the same factor, so that `--keep-days` simulated days are kept.
 *
 *   node --import tsx bench/soak.ts [--days 30] [--step-hours 1] [--day-seconds 40] [--keep-days 7]
 *
 * Prints one JSON object: the worker's RSS after the backfill and at the end, rows of each bookkeeping table and
 * Redis keys at the end of each simulated day.
 */

const HOUR = 3_600_000;
const COMPANY = 'default';

const { values } = parseArgs({
  options: {
    days: { type: 'string', default: '30' },
    'step-hours': { type: 'string', default: '1' },
    'day-seconds': { type: 'string', default: '40' },
    'keep-days': { type: 'string', default: '7' },
  },
});
const days = Number(values.days);
const stepHours = Number(values['step-hours']);
const daySeconds = Number(values['day-seconds']);
const keepDays = Number(values['keep-days']);
/** Real time per unit of simulated time. */
const scale = daySeconds / 86_400;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m![1]) / 102.4) / 10;
}

function startWorker(env: Record<string, string>): { proc: ChildProcess; stderr: () => string } {
  const cwd = mkdtempSync(join(tmpdir(), 'wfsync-soak-'));
  const proc = spawn(WFSYNC, ['worker'], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
  });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  proc.once('exit', () => rmSync(cwd, { recursive: true, force: true }));
  return { proc, stderr: () => err };
}

/** The first firing of each job's default cron in (from, to], and how many firings that one run stands for. */
function dueIn(from: Date, to: Date): { job: (typeof jobs)[number]; firings: number }[] {
  const out: { job: (typeof jobs)[number]; firings: number }[] = [];
  for (const job of jobs) {
    const cron = new Cron(job.cron, { timezone: 'UTC', paused: true });
    let firings = 0;
    for (let next = cron.nextRun(from); next && next <= to; next = cron.nextRun(next)) firings++;
    if (firings > 0) out.push({ job, firings });
  }
  return out;
}

const pg = await startPostgres();
const redis = await startRedis();
const sandbox = await startSandboxProcess({ size: 'small', rateLimit: '100000/1s', seed: 1 });
const keep = String(keepDays * scale);
const worker = startWorker({
  WFS_BASE_URL: sandbox.url,
  WFS_API_KEY: BENCH_KEY,
  DATABASE_URL: pg.url,
  REDIS_URL: redis.url,
  WFS_RATE_LIMIT: '100000/1s',
  WFS_FORM_IDS: sandbox.info.formIds.join(','),
  WFS_RUN_TYPE_IDS: sandbox.info.runTypeIds.join(','),
  WFS_KEEP_RUNS_DAYS: keep,
  WFS_KEEP_RESOLVED_REJECTS_DAYS: keep,
  WFS_KEEP_PUSH_PAYLOADS_DAYS: keep,
  LOG_LEVEL: 'warn',
});
const connection = redisConnection(redis.url);
const queue = createSyncQueue(connection);
const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
// The scheduler's bounds for dependencies, in the soak's real time.
const bounds = new Map(
  [...dependencyBounds({ jobs, cronOverrides: {}, timezone: 'UTC' })].map(([name, b]) => [
    name,
    Object.fromEntries(Object.entries(b).map(([s, ms]) => [s, ms * scale])),
  ]),
);

const runs = { enqueued: 0, coalescedFirings: 0, failed: 0 };

async function drained(): Promise<void> {
  for (;;) {
    const c = await syncJobCounts(queue, connection);
    if (['active', 'waiting', 'delayed', 'waiting-children', 'queued'].every((state) => !c[state])) return;
    if (worker.proc.exitCode !== null) throw new Error(`worker exited: ${worker.stderr()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function dispatch(due: { job: (typeof jobs)[number]; firings: number }[]): Promise<void> {
  const firedAt = new Date();
  for (const { job, firings } of due) {
    await enqueueRun(queue, { company: COMPANY, job, firedAt, dependencyBoundsMs: bounds.get(job.name) });
    runs.enqueued++;
    runs.coalescedFirings += firings - 1;
  }
  await drained();
}

/** Least-squares slope of RSS over the days after the first week, when every table has reached its horizon. */
function rssTrendMbPerDay(perDay: { day: number; rssMb: number }[]): number | null {
  const settled = perDay.filter((d) => d.day > 7);
  if (settled.length < 3) return null;
  const meanX = settled.reduce((a, d) => a + d.day, 0) / settled.length;
  const meanY = settled.reduce((a, d) => a + d.rssMb, 0) / settled.length;
  const num = settled.reduce((a, d) => a + (d.day - meanX) * (d.rssMb - meanY), 0);
  const den = settled.reduce((a, d) => a + (d.day - meanX) ** 2, 0);
  return Math.round((num / den) * 100) / 100;
}

const TABLES = ['sync_runs', 'sync_rejects', 'sync_state', 'push_outbox'] as const;

async function tableRows(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TABLES)
    out[t] = (await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from workforce.${t}`))[0]!.n;
  return out;
}

try {
  // The first runs: every job but the weekly full refresh, as `start` enqueues them.
  await dispatch(jobs.filter((j) => !j.fullRefresh).map((job) => ({ job, firings: 1 })));
  const start = { rssMb: rssMb(worker.proc.pid!), redisKeys: await connection.dbsize(), rows: await tableRows() };
  let simulated = new Date(((await (await fetch(`${sandbox.url}/_sandbox/now`)).json()) as { now: string }).now);
  const perDay: { day: number; realSeconds: number; rssMb: number; redisKeys: number; rows: Record<string, number> }[] =
    [];
  const soakStarted = Date.now();
  for (let day = 1; day <= days; day++) {
    const dayStarted = Date.now();
    for (let h = 0; h < 24; h += stepHours) {
      const stepStarted = Date.now();
      const res = await fetch(`${sandbox.url}/_sandbox/advance?hours=${stepHours}`, { method: 'POST' });
      if (!res.ok) throw new Error(`advance: ${res.status}`);
      const next = new Date(simulated.getTime() + stepHours * HOUR);
      await dispatch(dueIn(simulated, next));
      simulated = next;
      const share = stepHours * HOUR * scale - (Date.now() - stepStarted);
      if (share > 0) await new Promise((r) => setTimeout(r, share));
    }
    perDay.push({
      day,
      realSeconds: Math.round((Date.now() - dayStarted) / 100) / 10,
      rssMb: rssMb(worker.proc.pid!),
      redisKeys: await connection.dbsize(),
      rows: await tableRows(),
    });
    process.stderr.write(`day ${day}: ${JSON.stringify(perDay.at(-1))}\n`);
  }
  runs.failed = (await queue.getJobCounts('failed')).failed ?? 0;
  const [kept] = await sql<{ failed: number; housekeeping: number }[]>`
    select count(*) filter (where outcome = 'failed')::int as failed, count(*) filter (where stream = 'housekeeping')::int as housekeeping
    from workforce.sync_runs`;
  const [lastHousekeeping] = await sql<{ pruned: unknown }[]>`
    select details->'pruned' as pruned from workforce.sync_runs where stream = 'housekeeping' order by id desc limit 1`;
  const end = { rssMb: rssMb(worker.proc.pid!), redisKeys: await connection.dbsize(), rows: await tableRows() };
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'soak',
        size: 'small',
        days,
        stepHours,
        daySeconds,
        keepDays,
        realMinutes: Math.round((Date.now() - soakStarted) / 6000) / 10,
        runs,
        runsKeptAtEnd: kept,
        lastHousekeepingPruned: lastHousekeeping?.pruned ?? null,
        start,
        end,
        rssRangeAfterFirstWeekMb:
          perDay.length > 7
            ? [Math.min(...perDay.slice(7).map((d) => d.rssMb)), Math.max(...perDay.slice(7).map((d) => d.rssMb))]
            : null,
        rssTrendMbPerDay: rssTrendMbPerDay(perDay),
        perDay,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  worker.proc.kill('SIGTERM');
  await new Promise((r) => (worker.proc.exitCode !== null ? r(null) : worker.proc.once('exit', r)));
  await queue.close();
  connection.disconnect();
  await sql.end();
  sandbox.stop();
  await redis.stop();
  await pg.stop();
}
