import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { jobs } from '../jobs/index.ts';
import { enqueueRun, queuedRuns, SYNC_QUEUE, type SyncJobData } from '../src/queue/sync-queue.ts';
import type { SandboxStats } from '../src/sandbox/http.ts';
import { spawnWfsync, waitFor, type Spawned } from '../test/support/processes.ts';
import { startPostgres, startRedis } from '../test/support/services.ts';
import { postgresCpuSeconds, startSandboxProcess } from './sync-process.ts';

/**
 * Many companies on one box: COMPANIES companies (one sandbox, one API key each, each key LIMIT per 60 s, the real
 * period) synced by worker processes for PERIODS periods, first by one worker, then by two sharing Redis. For each:
 * the share of each key's budget used per period by the keys that still had work at its end (goal ≥ 95% for
 * every one), 429s (goal 0), rows written per second, the CPU left on the machine, and the CPU per page (request)
 * of the workers, Postgres (server and backends), Redis and the sandbox. Prints one JSON object.
 *
 *   COMPANIES=100 PERIODS=3 SIZE=small WORKERS=1,2 [CONCURRENCY=n] node --import tsx bench/tenants.ts
 */

const COMPANIES = Number(process.env.COMPANIES ?? 100);
const PERIODS = Number(process.env.PERIODS ?? 3);
const SIZE = process.env.SIZE ?? 'small';
const WORKERS = (process.env.WORKERS ?? '1,2').split(',').map(Number);
const CONCURRENCY = process.env.CONCURRENCY;
const LIMIT = Number(process.env.LIMIT ?? 100);
const PERIOD_MS = 60_000;
const SEED = 7;

const apiKey = (i: number) => `tenant-key-${String(i).padStart(3, '0')}`;
const company = (i: number) => `c${String(i).padStart(3, '0')}`;

/** CPU seconds Redis has spent since it started (its own INFO: user and system). */
async function redisCpuSeconds(connection: Redis): Promise<number> {
  const info = await connection.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Busy and total jiffies of the whole machine. */
function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = fields[3]! + fields[4]!;
  return { busy: total - idle, total };
}

/** utime + stime of a process, in jiffies. */
function processCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

const HZ = 100;

async function stats(url: string): Promise<SandboxStats> {
  return (await (await fetch(`${url}/_sandbox/stats`)).json()) as SandboxStats;
}

async function rowsWritten(sql: postgres.Sql): Promise<number> {
  const [r] = await sql<{ n: string }[]>`
    select coalesce(sum(n_tup_ins + n_tup_upd), 0)::bigint as n from pg_stat_user_tables
    where schemaname = 'workforce' and relname not like 'sync\\_%' and relname <> 'run_fences'`;
  return Number(r!.n);
}

/** Companies with a job still to do or doing. */
async function companiesWithWork(queue: Queue<SyncJobData>, connection: Redis): Promise<Set<string>> {
  const pending = await queue.getJobs(['waiting', 'active', 'delayed', 'waiting-children'], 0, -1);
  const queued = await queuedRuns(connection);
  return new Set([...pending.filter(Boolean), ...queued].map((j) => j.data.company));
}

const pct = (x: number) => Math.round(x * 1000) / 10;

function spread(values: number[]): { min: number; p10: number; median: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { min: pct(s[0] ?? 0), p10: pct(at(0.1)), median: pct(at(0.5)), max: pct(s.at(-1) ?? 0) };
}

async function run(workerCount: number, pgAdminUrl: string, pgDataDir: string) {
  const redis = await startRedis();
  const sandbox = await startSandboxProcess({
    size: SIZE,
    rateLimit: `${LIMIT}/60s`,
    seed: SEED,
    keys: Array.from({ length: COMPANIES }, (_, i) => apiKey(i)),
  });
  const admin = postgres(pgAdminUrl, { max: 1, onnotice: () => {} });
  const dbName = `tenants_${workerCount}_${Date.now()}`;
  await admin.unsafe(`create database ${dbName}`);
  await admin.end();
  const databaseUrl = pgAdminUrl.replace(/\/[^/]*$/, `/${dbName}`);
  const info = sandbox.info;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    WFS_RATE_LIMIT: `${LIMIT}/60s`,
    // Info: the worker says when it has started.
    LOG_LEVEL: 'info',
    WFS_COMPANIES: JSON.stringify(
      Array.from({ length: COMPANIES }, (_, i) => ({
        key: company(i),
        apiKey: apiKey(i),
        baseUrl: sandbox.url,
        formIds: info.formIds,
        runTypeIds: info.runTypeIds,
      })),
    ),
    ...(CONCURRENCY ? { WFS_WORKER_CONCURRENCY: CONCURRENCY } : {}),
  };
  const migrate = spawnWfsync(['migrate'], env);
  if ((await migrate.exited()).code !== 0) throw new Error(`migrate failed: ${migrate.output()}`);
  const workers: Spawned[] = Array.from({ length: workerCount }, () => spawnWfsync(['worker'], env));
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue<SyncJobData>(SYNC_QUEUE, { connection });
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    for (const w of workers)
      await waitFor(
        () => `worker started: ${w.output().slice(-1000)}`,
        async () => /worker started/.test(w.output()),
        120_000,
      );
    // Job by job across companies, as a scheduler firing every company's job at once would.
    const firedAt = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    for (const job of jobs.filter((j) => !j.fullRefresh)) {
      for (let i = 0; i < COMPANIES; i++) await enqueueRun(queue, { company: company(i), job, firedAt });
    }
    const t0 = Date.now();
    const cpu0 = machineCpu();
    const own0 = workers.map((w) => processCpu(w.proc.pid!));
    const sandbox0 = processCpu(sandbox.proc.pid!);
    const postgres0 = postgresCpuSeconds(pgDataDir) ?? 0;
    const redis0 = await redisCpuSeconds(connection);
    const rows0 = await rowsWritten(sql);
    let before = await stats(sandbox.url);
    const periods = [];
    for (let w = 0; w < PERIODS; w++) {
      await sleep(t0 + (w + 1) * PERIOD_MS - Date.now());
      const now = await stats(sandbox.url);
      const busy = await companiesWithWork(queue, connection);
      const shares: number[] = [];
      for (let i = 0; i < COMPANIES; i++) {
        if (!busy.has(company(i))) continue;
        shares.push((now.byKey[apiKey(i)]!.requests - before.byKey[apiKey(i)]!.requests) / LIMIT);
      }
      periods.push({
        period: w + 1,
        keysWithWork: shares.length,
        keysBelow95: shares.filter((s) => s < 0.95).length,
        share: spread(shares),
        requests: now.requests - before.requests,
        rateLimited: now.rateLimited - before.rateLimited,
      });
      before = now;
    }
    const seconds = (Date.now() - t0) / 1000;
    const cpu1 = machineCpu();
    const rows = (await rowsWritten(sql)) - rows0;
    const machineBusy = (cpu1.busy - cpu0.busy) / (cpu1.total - cpu0.total);
    const last = await stats(sandbox.url);
    // Pages are requests: every request the workers sent in the periods, each a page (or a lookup) to write.
    const pages = periods.reduce((n, w) => n + w.requests, 0);
    const msPerPage = (cpuSeconds: number) => Math.round(((cpuSeconds * 1000) / Math.max(1, pages)) * 100) / 100;
    const workersCpu = workers.reduce((sum, w, i) => sum + (processCpu(w.proc.pid!) - own0[i]!) / HZ, 0);
    const redisCpu = (await redisCpuSeconds(connection)) - redis0;
    return {
      workers: workerCount,
      concurrency: CONCURRENCY ? Number(CONCURRENCY) : 'default',
      seconds: Math.round(seconds),
      periods,
      rateLimited: last.rateLimited,
      rowsPerSecond: Math.round(rows / seconds),
      requestsPerSecond: Math.round((periods.reduce((n, w) => n + w.requests, 0) / seconds) * 10) / 10,
      cpu: {
        machineLeftPct: pct(1 - machineBusy),
        workersPctOfOneCore: workers.map((w, i) => pct((processCpu(w.proc.pid!) - own0[i]!) / HZ / seconds)),
        sandboxPctOfOneCore: pct((processCpu(sandbox.proc.pid!) - sandbox0) / HZ / seconds),
        redisPctOfOneCore: pct(redisCpu / seconds),
        msPerPage: {
          workers: msPerPage(workersCpu),
          postgres: msPerPage((postgresCpuSeconds(pgDataDir) ?? 0) - postgres0),
          sandbox: msPerPage((processCpu(sandbox.proc.pid!) - sandbox0) / HZ),
          redis: msPerPage(redisCpu),
        },
      },
      workerErrors: workers.map(
        (w) =>
          w
            .output()
            .split('\n')
            .filter((l) => /"level":50/.test(l)).length,
      ),
    };
  } finally {
    for (const w of workers) {
      if (w.proc.exitCode === null) w.proc.kill('SIGKILL');
      await w.exited();
    }
    await queue.close();
    await connection.quit();
    await sql.end();
    sandbox.proc.kill('SIGKILL');
    await redis.stop();
  }
}

async function main(): Promise<void> {
  const pg = await startPostgres({ durable: true });
  try {
    const runs = [];
    for (const n of WORKERS) runs.push(await run(n, pg.url, pg.dataDir));
    process.stdout.write(
      `${JSON.stringify({ companies: COMPANIES, size: SIZE, budget: `${LIMIT}/60s per key`, periods: PERIODS, cpus: availableParallelism(), note: 'the sandbox, Postgres and Redis share these CPUs with the workers', runs }, null, 2)}\n`,
    );
  } finally {
    await pg.stop();
  }
}

await main();
