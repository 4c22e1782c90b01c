import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Cron } from 'croner';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { jobs } from '../jobs/index.ts';
import type { JobDef } from '../src/queue/job.ts';
import { pino } from 'pino';
import { fleetFairness } from '../src/queue/fairness.ts';
import { DUE_KEY, FED_KEY, LATER_KEY, RUNS_KEY } from '../src/queue/scripts.ts';
import { enqueueRun, scheduleDelaySeconds, SYNC_QUEUE, type SyncJobData } from '../src/queue/sync-queue.ts';
import { FRONTIER_KEY, TAKEN_KEY } from '../src/queue/turns.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { spawnWfsync, waitFor, type Spawned } from '../test/support/processes.ts';
import { startPostgres, startRedis } from '../test/support/services.ts';
import { postgresCpuSeconds, startSandboxProcess } from './sync-process.ts';

/**
 * A fleet on one box: COMPANIES companies (one sandbox, a key each with the real 100/60 s budget), every job's
 * default cron compressed FACTOR times, a scheduler, WORKERS workers and the ops server, run for MINUTES. A
 * company is added through the JSON route halfway. Prints one JSON object: the streams that went late once past
 * their first sync (and for how long), the schedule delay, how long the added company took to finish its first
 * sync, how the steady state's runs were shared (runs asked for and done, gaps between a company's runs, companies
 * passed over), CPU per company-day (of compressed schedule time) by process, and the overview's size, time and the server's CPU for it.
 * Three phases: the warm-up (WARMUP_MINUTES, the first syncs), the steady state, and with OVERLOAD_FACTOR the
 * last OVERLOAD_MINUTES with the scheduler restarted on crons compressed that many times: driven past what the box
 * can do, `runsPerSecond.asked` exceeds `done`, and the sharing says whether every company still got its turn:
 * over the whole overload (`overloaded`), and once the change of crons settled (`overloadedSettled`). The steady
 * state and the settled overload are also judged by when workers took each run (`takes`), with each job's time from
 * a take to its first stream's start: the queue's sharing apart from what a run does before it reads.
 * The company is added halfway through the steady state.
 *
 *   COMPANIES=1000 FACTOR=2 MINUTES=40 WARMUP_MINUTES=15 WORKERS=2 SIZE=tiny npm run bench:fleet
 *   COMPANIES=1000 FACTOR=2 OVERLOAD_FACTOR=14 MINUTES=44 WARMUP_MINUTES=20 OVERLOAD_MINUTES=12 npm run bench:fleet
 *
 * With TAKES_FILE, every take (`{ company, job, at }`) and the phases' bounds are written there as JSON, to look into
 * a passed-over gap, and the queue's own keys at the end beside it (`.queue.json`); with LOGS_DIR, every process's
 * output, one file each.
 */

const COMPANIES = Number(process.env.COMPANIES ?? 1000);
const FACTOR = Number(process.env.FACTOR ?? 30);
const MINUTES = Number(process.env.MINUTES ?? 10);
const WORKERS = Number(process.env.WORKERS ?? 2);
const SIZE = process.env.SIZE ?? 'tiny';
const LIMIT = Number(process.env.LIMIT ?? 100);
/** Minutes before the steady state is counted from (the first syncs); default a third of the run. */
const WARMUP_MINUTES = Number(process.env.WARMUP_MINUTES ?? MINUTES / 3);
/** Crons compressed this many times past the warm-up (the scheduler restarted with them): to drive the box past what it can do once the first syncs are done. */
const OVERLOAD_FACTOR = process.env.OVERLOAD_FACTOR ? Number(process.env.OVERLOAD_FACTOR) : undefined;
const OVERLOAD_MINUTES = OVERLOAD_FACTOR ? Number(process.env.OVERLOAD_MINUTES ?? MINUTES / 3) : 0;
const SAMPLE_MS = 5_000;
const HZ = 100;
const PUSH_TOKEN = 'bench-fleet-push-token';

const apiKey = (i: number) => `fleet-key-${String(i).padStart(4, '0')}`;
const company = (i: number) => `f${String(i).padStart(4, '0')}`;

/** A job's default interval, from two firings of its cron. */
function intervalMs(cron: string): number {
  const [a, b] = new Cron(cron, { paused: true }).nextRuns(2);
  return b!.getTime() - a!.getTime();
}

/** A cron firing every `ms` (rounded to a divisor of its unit, at least 10 s). */
function compressedCron(ms: number): { cron: string; ms: number } {
  const divisors = [1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30];
  const fit = (n: number) => divisors.filter((d) => d <= n).at(-1) ?? 1;
  const s = Math.max(10, Math.round(ms / 1000));
  if (s < 60) return { cron: `*/${fit(s)} * * * * *`, ms: fit(s) * 1000 };
  const m = Math.round(s / 60);
  if (m < 60) return { cron: `0 */${fit(m)} * * * *`, ms: fit(m) * 60_000 };
  const h = Math.min(12, Math.round(m / 60));
  return { cron: `0 0 */${fit(h)} * * *`, ms: fit(h) * 3_600_000 };
}

function processCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / HZ;
  } catch {
    return 0;
  }
}

async function redisCpuSeconds(connection: Redis): Promise<number> {
  const info = await connection.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

const quantile = (values: number[], q: number) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : null;
};

/** Intervals of its job into the overload from which a stream is judged settled. */
const SETTLE_INTERVALS = 2;

/**
 * How the steady state's runs were shared (every successful run past the warm-up): runs the crons asked for and
 * runs done, per second; company-streams with no run at all; each gap between a company's runs of a stream, in
 * intervals of its job; and the gaps longer than two intervals during which another company ran the same stream
 * twice (a company passed over while another was served).
 *
 * `settled`: each stream judged from two of its intervals into the span judged (`from` to `to`) on. Until its
 * first run on new crons, a company's last run of a job is one of the old crons', and its turn counts from that run;
 * the turn puts its first new run at most two new intervals in.
 */
function sharing(
  runs: readonly { company: string; stream: string; at: number }[],
  intervalOf: ReadonlyMap<string, number>,
  cronOf: ReadonlyMap<string, string>,
  from: number,
  to: number,
  companies: readonly string[],
  settled = false,
) {
  const byStream = new Map<string, Map<string, number[]>>();
  for (const r of runs) {
    if (!intervalOf.has(r.stream)) continue;
    const byCompany = byStream.get(r.stream) ?? new Map<string, number[]>();
    byStream.set(r.stream, byCompany);
    const times = byCompany.get(r.company) ?? [];
    byCompany.set(r.company, times);
    times.push(r.at);
  }
  const countIn = (times: number[], a: number, b: number) => times.filter((t) => t > a && t < b).length;
  const gaps: number[] = [];
  let withoutRuns = 0;
  const withoutRunsByStream: Record<string, number> = {};
  let passedOver = 0;
  const passedOverByStream: Record<string, number> = {};
  /** Passed-over gaps by the minute of the span they began in. */
  const passedOverByMinute: number[] = Array.from({ length: Math.ceil((to - from) / 60_000) }, () => 0);
  let demand = 0;
  for (const [stream, interval] of intervalOf) {
    const byCompany = byStream.get(stream) ?? new Map<string, number[]>();
    demand += companies.length * firings(cronOf.get(stream)!, from, to);
    const start = settled ? from + SETTLE_INTERVALS * interval : from;
    if (settled && to - start <= 2 * interval) continue;
    for (const company of companies) {
      const times = (byCompany.get(company) ?? []).filter((t) => t >= start).sort((a, b) => a - b);
      if (times.length === 0 && to - start > 2 * interval) {
        withoutRuns++;
        withoutRunsByStream[stream] = (withoutRunsByStream[stream] ?? 0) + 1;
      }
      const edges = [start, ...times, to];
      for (let i = 1; i < edges.length; i++) {
        const gap = edges[i]! - edges[i - 1]!;
        // The span's edges cut gaps short: only a gap between two runs is whole.
        if (i > 1 && i < edges.length - 1) gaps.push(gap / interval);
        if (gap <= 2 * interval) continue;
        for (const [other, theirs] of byCompany) {
          if (other !== company && countIn(theirs, edges[i - 1]!, edges[i]!) >= 2) {
            passedOver++;
            passedOverByStream[stream] = (passedOverByStream[stream] ?? 0) + 1;
            passedOverByMinute[Math.floor((edges[i - 1]! - from) / 60_000)]!++;
            break;
          }
        }
      }
    }
  }
  const seconds = (to - from) / 1000;
  return {
    runsPerSecond: {
      asked: Math.round((demand / seconds) * 100) / 100,
      done: Math.round((runs.length / seconds) * 100) / 100,
    },
    companyStreamsWithoutRuns: withoutRuns,
    companyStreamsWithoutRunsByStream: withoutRunsByStream,
    gapsInIntervals: {
      median: round2(quantile(gaps, 0.5)),
      p99: round2(quantile(gaps, 0.99)),
      max: round2(gaps.length ? Math.max(...gaps) : null),
    },
    passedOver,
    passedOverByStream,
    passedOverByMinute,
  };
}

/**
 * The queue's own keys at the end, and the BullMQ state of each run given out: where a company-job without takes
 * (or with few) waits, and with what turn.
 */
async function queueState(connection: Redis, queue: Queue<SyncJobData>) {
  const [due, later, runs, fed, taken, frontier] = await Promise.all([
    connection.zrange(DUE_KEY, 0, -1, 'WITHSCORES'),
    connection.zrange(LATER_KEY, 0, -1, 'WITHSCORES'),
    connection.hgetall(RUNS_KEY),
    connection.hgetall(FED_KEY),
    connection.hgetall(TAKEN_KEY),
    connection.get(FRONTIER_KEY),
  ]);
  const fedStates = await Promise.all(
    Object.entries(fed).map(async ([member, entry]) => {
      const { jobId } = JSON.parse(entry) as { jobId: string };
      return [member, jobId, await queue.getJobState(jobId)];
    }),
  );
  return { at: Date.now(), frontier, due, later, runs, fed, fedStates, taken };
}

/** When a worker took each run (BullMQ's `active` events, stamped by Redis), as `{ company, job, at }`. */
function recordTakes(redisUrl: string) {
  const client = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const takes: { company: string; job: string; at: number }[] = [];
  let stopped = false;
  const read = async () => {
    let last = '$';
    while (!stopped) {
      const got = (await client.xread('COUNT', 2000, 'BLOCK', 1000, 'STREAMS', `bull:${SYNC_QUEUE}:events`, last)) as
        | [string, [string, string[]][]][]
        | null;
      for (const [id, fields] of got?.[0]?.[1] ?? []) {
        last = id;
        if (fields[1] !== 'active') continue;
        const [company, job] = String(fields[3]).split('.');
        takes.push({ company: company!, job: job!, at: Number(id.split('-')[0]) });
      }
    }
  };
  const reading = read();
  let stopping: Promise<void> | undefined;
  return {
    takes,
    stop: () => {
      stopped = true;
      stopping ??= reading.finally(() => client.quit().then(() => undefined));
      return stopping;
    },
  };
}

/**
 * From each take of a job to its first stream's `started_at` (the run lock, the fence, stream locks, a dependency
 * read first), per job, in seconds; a take with no start within one interval (a run skipped) is counted apart.
 */
function takeToStart(
  takes: readonly { company: string; job: string; at: number }[],
  runs: readonly { company: string; stream: string; at: number }[],
  schedule: ReturnType<typeof compressedSchedule>['schedule'],
) {
  const starts = new Map<string, number[]>();
  for (const r of runs) {
    const key = `${r.company}/${r.stream}`;
    const list = starts.get(key) ?? [];
    starts.set(key, list);
    list.push(r.at);
  }
  for (const list of starts.values()) list.sort((a, b) => a - b);
  const out: Record<
    string,
    {
      takes: number;
      median: number | null;
      p90: number | null;
      p99: number | null;
      max: number | null;
      noStart: number;
    }
  > = {};
  for (const { job, ms } of schedule) {
    const seconds: number[] = [];
    let noStart = 0;
    for (const t of takes) {
      if (t.job !== job.name) continue;
      const list = starts.get(`${t.company}/${job.streams[0]}`) ?? [];
      const start = list.find((at) => at >= t.at - 50);
      if (start === undefined || start - t.at > ms) noStart++;
      else seconds.push((start - t.at) / 1000);
    }
    if (seconds.length + noStart === 0) continue;
    const max = seconds.length ? Math.max(...seconds) : null;
    out[job.name] = {
      takes: seconds.length + noStart,
      median: round2(quantile(seconds, 0.5)),
      p90: round2(quantile(seconds, 0.9)),
      p99: round2(quantile(seconds, 0.99)),
      max: round2(max),
      noStart,
    };
  }
  return out;
}

/** How often a cron fires between two instants. */
function firings(cron: string, from: number, to: number): number {
  let n = 0;
  for (
    let at = new Cron(cron, { paused: true }).nextRun(new Date(from));
    at && at.getTime() < to;
    at = new Cron(cron, { paused: true }).nextRun(at)
  )
    n++;
  return n;
}

const round2 = (x: number | null) => (x === null ? null : Math.round(x * 100) / 100);

/** The jobs' crons compressed `factor` times, and each stream's shortest interval and its cron. */
function compressedSchedule(factor: number) {
  const schedule = jobs
    .filter((j) => j.cron && !j.run)
    .map((j) => ({ job: j, ...compressedCron(intervalMs(j.cron) / factor) }));
  const intervalOf = new Map<string, number>();
  const cronOf = new Map<string, string>();
  for (const s of schedule) {
    for (const stream of s.job.streams) {
      if (s.ms >= (intervalOf.get(stream) ?? Infinity)) continue;
      intervalOf.set(stream, s.ms);
      cronOf.set(stream, s.cron);
    }
  }
  const env = Object.fromEntries(
    schedule.map((s) => [`WFS_CRON_${s.job.name.toUpperCase().replace(/-/g, '_')}`, s.cron]),
  );
  return { factor, schedule, intervalOf, cronOf, env };
}

async function main(): Promise<void> {
  const warm = compressedSchedule(FACTOR);
  // For the last OVERLOAD_MINUTES, the scheduler is restarted with crons OVERLOAD_FACTOR times compressed.
  const overload = OVERLOAD_FACTOR ? compressedSchedule(OVERLOAD_FACTOR) : undefined;
  let current = warm;

  const pg = await startPostgres({ durable: true });
  const redis = await startRedis();
  const keys = Array.from({ length: COMPANIES + 1 }, (_, i) => apiKey(i));
  const sandbox = await startSandboxProcess({ size: SIZE, rateLimit: `${LIMIT}/60s`, seed: 11, keys });
  const info = sandbox.info;
  const entry = (i: number) => ({
    key: company(i),
    apiKey: apiKey(i),
    baseUrl: sandbox.url,
    formIds: info.formIds,
    runTypeIds: info.runTypeIds,
  });
  const env: Record<string, string> = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    WFS_RATE_LIMIT: `${LIMIT}/60s`,
    LOG_LEVEL: 'info',
    WFS_COMPANIES: JSON.stringify(Array.from({ length: COMPANIES }, (_, i) => entry(i))),
    WFS_SECRET_KEY: 'bench-fleet-secret-key',
    WFS_PUSH_TOKEN: PUSH_TOKEN,
    WFS_HTTP_PORT: '0',
    WFS_COMPANIES_REFRESH_SECONDS: '5',
    ...warm.env,
  };
  const migrate = spawnWfsync(['migrate'], env);
  if ((await migrate.exited()).code !== 0) throw new Error(`migrate failed: ${migrate.output()}`);
  const procs: { role: string; p: Spawned }[] = [
    { role: 'scheduler', p: spawnWfsync(['scheduler'], env) },
    ...Array.from({ length: WORKERS }, () => ({ role: 'workers', p: spawnWfsync(['worker'], env) })),
    { role: 'server', p: spawnWfsync(['serve'], env) },
  ];
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue<SyncJobData>(SYNC_QUEUE, { connection });
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  const wh = await openWarehouse({ databaseUrl: pg.url });
  let takes: ReturnType<typeof recordTakes> | undefined;
  try {
    const server = procs.find((p) => p.role === 'server')!.p;
    const url = await waitFor(
      () => `server: ${server.output().slice(-800)}`,
      async () => /status at (http:\/\/[^\s/]+)\//.exec(server.output())?.[1],
      120_000,
    );
    // Every company's first runs, queued as `start` queues them (the scheduler alone waits for each cron).
    const firedAt = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const fairness = fleetFairness(
      wh,
      jobs,
      () => Array.from({ length: COMPANIES }, (_, i) => company(i)),
      pino({ level: 'warn' }),
    );
    for (const job of jobs.filter((j) => !j.fullRefresh && !j.run)) {
      for (let i = 0; i < COMPANIES; i++)
        await enqueueRun(queue, { company: company(i), job, firedAt }, { fairness, connection });
    }
    fairness.stop();
    takes = recordTakes(redis.url);
    const t0 = Date.now();
    const cpu0 = procs.map((p) => processCpu(p.p.proc.pid!));
    /** The warm-up scheduler's CPU, once it was replaced; when the overload began. */
    let schedulerCpuBefore = 0;
    let overloadFrom: number | undefined;
    const sandbox0 = processCpu(sandbox.proc.pid!);
    const pg0 = postgresCpuSeconds(pg.dataDir) ?? 0;
    const redis0 = await redisCpuSeconds(connection);
    const lateSince = new Map<string, number>();
    const lateFor = new Map<string, number>();
    const steadyLateFor = new Map<string, number>();
    /** Streams late at the warm-up's end, and how long into the steady state they stayed late. */
    const carriedLateFor = new Map<string, number>();
    /** The added company's own streams, late while it backfills: not the others'. */
    const addedLateFor = new Map<string, number>();
    const warmupMs = WARMUP_MINUTES * 60_000;
    const overloadAt = t0 + (MINUTES - OVERLOAD_MINUTES) * 60_000;
    const overloadDelays: number[] = [];
    const delays: number[] = [];
    const steadyDelays: number[] = [];
    let added: { at: number; doneAt?: number } | undefined;
    const end = t0 + MINUTES * 60_000;
    while (Date.now() < end) {
      await sleep(SAMPLE_MS);
      const now = Date.now();
      if (!added && now >= (t0 + warmupMs + overloadAt) / 2) {
        const res = await fetch(`${url}/api/companies`, {
          method: 'POST',
          headers: { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            key: company(COMPANIES),
            apiKey: apiKey(COMPANIES),
            baseUrl: sandbox.url,
            formIds: info.formIds,
            runTypeIds: info.runTypeIds,
            rateLimit: `${LIMIT}/60s`,
          }),
        });
        if (res.status !== 201) throw new Error(`adding a company: ${res.status} ${await res.text()}`);
        added = { at: now };
      }
      const delay = (await scheduleDelaySeconds(connection)) ?? 0;
      delays.push(delay);
      // Past the warm-up, the first syncs are done: the steady state, until the overload.
      const overloaded = overload !== undefined && now >= overloadAt;
      const steady = now - t0 >= warmupMs && !overloaded;
      if (steady) steadyDelays.push(delay);
      if (overloaded) overloadDelays.push(delay);
      if (overloaded && current !== overload) {
        current = overload;
        const i = procs.findIndex((p) => p.role === 'scheduler');
        const old = procs[i]!;
        schedulerCpuBefore += processCpu(old.p.proc.pid!) - cpu0[i]!;
        old.p.proc.kill('SIGTERM');
        await old.p.exited();
        old.role = 'scheduler (warm-up)';
        procs.push({ role: 'scheduler', p: spawnWfsync(['scheduler'], { ...env, ...overload.env }) });
        cpu0.push(0);
        overloadFrom = now;
        lateSince.clear();
      }
      // Each stream past its first success: late once its lag passes 1.5 of its compressed interval.
      const rows = await sql<{ company: string; stream: string; lag: number }[]>`
        select company_key as company, stream, extract(epoch from now() - max(started_at))::float8 * 1000 as lag
        from workforce.sync_runs where outcome = 'ok' group by company_key, stream`;
      // Overloaded, every stream is late by design: what counts there is how the runs were shared.
      for (const r of overloaded ? [] : rows) {
        const key = `${r.company}/${r.stream}`;
        const interval = current.intervalOf.get(r.stream);
        if (interval === undefined) continue;
        if (r.lag > 1.5 * interval) {
          if (!lateSince.has(key)) lateSince.set(key, now - (r.lag - 1.5 * interval));
          // A stream late since before the warm-up ended is the first syncs' backlog draining, not the steady state's.
          const since = lateSince.get(key)!;
          const track =
            r.company === company(COMPANIES)
              ? addedLateFor
              : !steady
                ? lateFor
                : since < t0 + warmupMs
                  ? carriedLateFor
                  : steadyLateFor;
          track.set(
            key,
            Math.max(track.get(key) ?? 0, now - Math.max(since, track === carriedLateFor ? t0 + warmupMs : 0)),
          );
        } else lateSince.delete(key);
      }
      if (added && !added.doneAt) {
        const [done] = await sql<{ n: number }[]>`
          select count(distinct stream)::int as n from workforce.sync_runs where company_key = ${company(COMPANIES)} and outcome = 'ok'`;
        if (done!.n >= current.intervalOf.size) added.doneAt = now;
      }
    }
    const seconds = (Date.now() - t0) / 1000;
    // Days of compressed schedule time: each phase's seconds at its own factor.
    const warmSeconds = ((overloadFrom ?? Date.now()) - t0) / 1000;
    const companyDays =
      ((COMPANIES + 0.5) * (warmSeconds * FACTOR + (seconds - warmSeconds) * (OVERLOAD_FACTOR ?? FACTOR))) / 86_400;
    const cpuOf = (role: string) =>
      procs.reduce(
        (n, p, i) => n + (p.role === role ? processCpu(p.p.proc.pid!) - cpu0[i]! : 0),
        role === 'scheduler' ? schedulerCpuBefore : 0,
      );
    const perCompanyDay = (cpu: number) => Math.round((cpu * 1000) / companyDays);
    // Wall time counts the wait for a core of a box saturated by the workers; the server's own CPU does not.
    const serverPid = procs.find((p) => p.role === 'server')!.p.proc.pid!;
    const overviewAt = Date.now();
    const overviewCpuAt = processCpu(serverPid);
    const overview = await (await fetch(`${url}/`)).text();
    const overviewMs = Date.now() - overviewAt;
    const overviewCpuMs = Math.round((processCpu(serverPid) - overviewCpuAt) * 1000);
    const late = [...lateFor].sort((a, b) => b[1] - a[1]);
    const steadyLate = [...steadyLateFor].sort((a, b) => b[1] - a[1]);
    const lateness = (list: [string, number][]) => ({
      count: list.length,
      longestSeconds: list.length ? Math.round(list[0]![1] / 1000) : 0,
      worst: list.slice(0, 5).map(([k, ms]) => ({ stream: k, seconds: Math.round(ms / 1000) })),
    });
    const [outcomes] = await sql<{ ok: number; failed: number }[]>`
      select count(*) filter (where outcome = 'ok')::int as ok, count(*) filter (where outcome = 'failed')::int as failed
      from workforce.sync_runs where started_at >= ${new Date(t0)}`;
    const stats = (await (await fetch(`${sandbox.url}/_sandbox/stats`)).json()) as {
      requests: number;
      rateLimited: number;
    };
    const fleet = Array.from({ length: COMPANIES }, (_, i) => company(i));
    /** How the runs of a phase were shared among the companies there from the start. */
    const sharedIn = async (from: number, to: number, s: ReturnType<typeof compressedSchedule>, settled = false) => {
      const runs = await sql<{ company: string; stream: string; at: number }[]>`
        select company_key as company, stream, extract(epoch from started_at)::float8 * 1000 as at
        from workforce.sync_runs where outcome = 'ok' and started_at >= ${new Date(from)} and started_at < ${new Date(to)}
          and company_key <> ${company(COMPANIES)}`;
      return sharing(runs, s.intervalOf, s.cronOf, from, to, fleet, settled);
    };
    const ended = Date.now();
    const steadyTo = overload ? (overloadFrom ?? ended) : ended;
    const shared = await sharedIn(t0 + warmupMs, steadyTo, warm);
    const sharedOverloaded = overload && overloadFrom ? await sharedIn(overloadFrom, ended, overload) : undefined;
    const sharedSettled = overload && overloadFrom ? await sharedIn(overloadFrom, ended, overload, true) : undefined;
    await takes!.stop();
    /** The takes of a phase: how the queue shared it, before the runs' own starts move them apart. */
    const takesIn = async (from: number, to: number, s: ReturnType<typeof compressedSchedule>, settled = false) => {
      const inSpan = takes!.takes.filter((t) => t.at >= from && t.at < to && t.company !== company(COMPANIES));
      const runs = await sql<{ company: string; stream: string; at: number }[]>`
        select company_key as company, stream, extract(epoch from started_at)::float8 * 1000 as at
        from workforce.sync_runs where started_at >= ${new Date(from)} and company_key <> ${company(COMPANIES)}`;
      const byJob = (f: (x: { job: JobDef; ms: number; cron: string }) => number | string) =>
        new Map(s.schedule.map((x) => [x.job.name, f(x)]));
      const { gapsInIntervals, passedOver, passedOverByStream, companyStreamsWithoutRuns } = sharing(
        inSpan.map((t) => ({ company: t.company, stream: t.job, at: t.at })),
        byJob((x) => x.ms) as Map<string, number>,
        byJob((x) => x.cron) as Map<string, string>,
        from,
        to,
        fleet,
        settled,
      );
      return {
        companyJobsWithoutTakes: companyStreamsWithoutRuns,
        gapsInIntervals,
        passedOver,
        passedOverByJob: passedOverByStream,
        takeToStartSeconds: takeToStart(inSpan, runs, s.schedule),
      };
    };
    if (process.env.TAKES_FILE) {
      writeFileSync(
        process.env.TAKES_FILE,
        JSON.stringify({ t0, steadyFrom: t0 + warmupMs, steadyTo, overloadFrom, ended, takes: takes!.takes }),
      );
      writeFileSync(`${process.env.TAKES_FILE}.queue.json`, JSON.stringify(await queueState(connection, queue)));
    }
    const steadyTakes = await takesIn(t0 + warmupMs, steadyTo, warm);
    const settledTakes = overload && overloadFrom ? await takesIn(overloadFrom, ended, overload, true) : undefined;
    process.stdout.write(
      `${JSON.stringify(
        {
          companies: COMPANIES,
          size: SIZE,
          factor: FACTOR,
          ...(OVERLOAD_FACTOR ? { overloadFactor: OVERLOAD_FACTOR } : {}),
          minutes: MINUTES,
          workers: WORKERS,
          cpus: availableParallelism(),
          crons: Object.fromEntries(warm.schedule.map((s) => [s.job.name, s.cron])),
          ...(overload
            ? { overloadCrons: Object.fromEntries(overload.schedule.map((s) => [s.job.name, s.cron])) }
            : {}),
          runs: outcomes,
          requests: stats.requests,
          rateLimited: stats.rateLimited,
          lateStreams: {
            firstSyncs: lateness(late),
            steady: lateness(steadyLate),
            lateAtWarmupEnd: lateness([...carriedLateFor].sort((a, b) => b[1] - a[1])),
          },
          steadyState: {
            fromMinute: WARMUP_MINUTES,
            toMinute: round2((steadyTo - t0) / 60_000),
            ...shared,
            takes: steadyTakes,
          },
          ...(sharedOverloaded
            ? { overloaded: { fromMinute: round2((overloadFrom! - t0) / 60_000), ...sharedOverloaded } }
            : {}),
          ...(sharedSettled ? { overloadedSettled: { ...sharedSettled, takes: settledTakes } } : {}),
          scheduleDelaySeconds: {
            all: {
              median: quantile(delays, 0.5),
              p90: quantile(delays, 0.9),
              max: delays.length ? Math.max(...delays) : null,
            },
            steady: {
              median: quantile(steadyDelays, 0.5),
              p90: quantile(steadyDelays, 0.9),
              max: steadyDelays.length ? Math.max(...steadyDelays) : null,
            },
            ...(overload
              ? {
                  overloaded: {
                    median: quantile(overloadDelays, 0.5),
                    p90: quantile(overloadDelays, 0.9),
                    max: overloadDelays.length ? Math.max(...overloadDelays) : null,
                  },
                }
              : {}),
          },
          addedCompany: added
            ? {
                key: company(COMPANIES),
                firstSyncSeconds: added.doneAt ? Math.round((added.doneAt - added.at) / 1000) : null,
                itsOwnLateStreams: lateness([...addedLateFor].sort((a, b) => b[1] - a[1])),
              }
            : null,
          cpuMsPerCompanyDay: {
            workers: perCompanyDay(cpuOf('workers')),
            scheduler: perCompanyDay(cpuOf('scheduler')),
            server: perCompanyDay(cpuOf('server')),
            postgres: perCompanyDay((postgresCpuSeconds(pg.dataDir) ?? 0) - pg0),
            redis: perCompanyDay((await redisCpuSeconds(connection)) - redis0),
            sandbox: perCompanyDay(processCpu(sandbox.proc.pid!) - sandbox0),
          },
          overview: {
            bytes: Buffer.byteLength(overview),
            ms: overviewMs,
            serverCpuMs: overviewCpuMs,
            rows: (overview.match(/<tr data-company=/g) ?? []).length,
          },
          note: 'lateness counts a stream only once it has succeeded, the added company apart; steady is past the warm-up; the sandbox, Postgres and Redis share the CPUs',
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await takes?.stop();
    if (process.env.LOGS_DIR) {
      mkdirSync(process.env.LOGS_DIR, { recursive: true });
      for (const [i, { role, p }] of procs.entries())
        writeFileSync(`${process.env.LOGS_DIR}/${i}-${role}.log`, p.output());
    }
    for (const { p } of procs) {
      if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
      await p.exited();
    }
    await queue.close();
    await connection.quit();
    await sql.end();
    await wh.close();
    sandbox.proc.kill('SIGKILL');
    await redis.stop();
    await pg.stop();
  }
}

await main();
