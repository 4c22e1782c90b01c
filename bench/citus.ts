import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobs } from '../jobs/index.ts';
import { enqueueRun, queuedRuns, SYNC_QUEUE, type SyncJobData } from '../src/queue/sync-queue.ts';
import type { SandboxStats } from '../src/sandbox/http.ts';
import { onNode } from '../test/support/citus.ts';
import { type Spawned, spawnWfsync, waitFor } from '../test/support/processes.ts';
import { startRedis } from '../test/support/services.ts';
import { citusWarehouse, plainWarehouse, type Warehouse } from './citus-servers.ts';
import { postgresCpuSeconds, type SandboxProcess, startSandboxProcess } from './sync-process.ts';

/**
 * The warehouse on Citus against one plain Postgres: COMPANIES companies (default 40; one sandbox of SIZE, default
 * small, a key each at LIMIT requests per 60 s, the real budget) backfill, every job's first run at full budget, by
 * WORKERS wfsync workers sharing Redis: into a Citus cluster (a coordinator and two workers, ../shared/citus, the
 * default 32 shards a table), then the same into one Postgres 15 server of the same binaries without Citus. All of
 * it on this one machine, so the measure is CPU a page (a request the service answered), not wall time: of each
 * Postgres server (postmaster and backends, from /proc), and of the cluster's, beside rows written per worker,
 * over MINUTES (default 4) once the first WARMUP_SECONDS (default 60) of the backfills are past. Goals: the workers
 * share the writes within 40/60, the coordinator spends at most a quarter of the cluster's CPU a page, and the
 * cluster at most 1.5 times the plain server's. Prints one JSON object.
 *
 *   COMPANIES=40 SIZE=small WORKERS=1 MINUTES=4 node --import tsx bench/citus.ts
 */

const COMPANIES = Number(process.env.COMPANIES ?? 40);
const SIZE = process.env.SIZE ?? 'small';
const WORKERS = Number(process.env.WORKERS ?? 1);
const LIMIT = Number(process.env.LIMIT ?? 100);
const MINUTES = Number(process.env.MINUTES ?? 4);
const WARMUP_SECONDS = Number(process.env.WARMUP_SECONDS ?? 60);
const SEED = 7;

const apiKey = (i: number) => `citus-key-${String(i).padStart(3, '0')}`;
const company = (i: number) => `c${String(i).padStart(3, '0')}`;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Rows the sync wrote into the node's warehouse tables (on a worker: its shards, which Citus otherwise hides). */
async function rowsWritten(url: string): Promise<number> {
  return onNode(url, async (sql) => {
    await sql`set citus.override_table_visibility = off`;
    const [r] = await sql<{ n: string }[]>`
      select coalesce(sum(n_tup_ins + n_tup_upd), 0)::bigint as n from pg_stat_user_tables where schemaname = 'workforce'`;
    return Number(r!.n);
  });
}

async function stats(url: string): Promise<SandboxStats> {
  return (await (await fetch(`${url}/_sandbox/stats`)).json()) as SandboxStats;
}

/** The companies with a job queued, waiting or running. */
async function busy(queue: Queue<SyncJobData>, connection: Redis): Promise<number> {
  const pending = await queue.getJobs(['waiting', 'active', 'delayed', 'waiting-children'], 0, -1);
  const queued = await queuedRuns(connection);
  return new Set([...pending.filter(Boolean), ...queued].map((j) => j.data.company)).size;
}

/** Each server's CPU seconds and rows written, and the pages the service answered, at one moment. */
async function reading(wh: Warehouse, sandboxUrl: string) {
  return {
    at: Date.now(),
    cpu: wh.nodes.map((n) => postgresCpuSeconds(n.dataDir) ?? 0),
    rows: await Promise.all(wh.nodes.map((n) => rowsWritten(n.url))),
    stats: await stats(sandboxUrl),
  };
}

/** The companies' settings: each its own key of one sandbox. */
function companiesEnv(sandbox: SandboxProcess): string {
  return JSON.stringify(
    Array.from({ length: COMPANIES }, (_, i) => ({
      key: company(i),
      apiKey: apiKey(i),
      baseUrl: sandbox.url,
      formIds: sandbox.info.formIds,
      runTypeIds: sandbox.info.runTypeIds,
    })),
  );
}

const errorLines = (workers: Spawned[]) =>
  workers.reduce(
    (n, w) =>
      n +
      w
        .output()
        .split('\n')
        .filter((l) => /"level":50/.test(l)).length,
    0,
  );

/** Every company's first sync under way in the warehouse, measured over MINUTES past the warm-up. */
async function backfill(label: string, wh: Warehouse) {
  const redis = await startRedis();
  const keys = Array.from({ length: COMPANIES }, (_, i) => apiKey(i));
  const sandbox = await startSandboxProcess({ size: SIZE, rateLimit: `${LIMIT}/60s`, seed: SEED, keys });
  const env = { DATABASE_URL: wh.url, REDIS_URL: redis.url, WFS_RATE_LIMIT: `${LIMIT}/60s`, LOG_LEVEL: 'info' };
  const withCompanies = { ...env, WFS_COMPANIES: companiesEnv(sandbox) };
  const migrate = spawnWfsync(['migrate'], withCompanies);
  if ((await migrate.exited()).code !== 0) throw new Error(`migrate failed: ${migrate.output()}`);
  const workers = Array.from({ length: WORKERS }, () => spawnWfsync(['worker'], withCompanies));
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue<SyncJobData>(SYNC_QUEUE, { connection });
  try {
    for (const w of workers)
      await waitFor(
        () => `worker started: ${w.output().slice(-1000)}`,
        async () => /worker started/.test(w.output()),
        120_000,
      );
    const firedAt = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    for (const job of jobs.filter((j) => !j.fullRefresh))
      for (let i = 0; i < COMPANIES; i++) await enqueueRun(queue, { company: company(i), job, firedAt });
    await sleep(WARMUP_SECONDS * 1000);
    const before = await reading(wh, sandbox.url);
    await sleep(MINUTES * 60_000);
    const after = await reading(wh, sandbox.url);
    const cpu = after.cpu.map((c, i) => c - before.cpu[i]!);
    const pages = after.stats.requests - before.stats.requests;
    return {
      label,
      seconds: Math.round((after.at - before.at) / 1000),
      pages,
      companiesStillBackfilling: await busy(queue, connection),
      rateLimited: after.stats.rateLimited - before.stats.rateLimited,
      workerErrors: errorLines(workers),
      nodes: wh.nodes.map((n, i) => ({
        role: n.role,
        cpuSeconds: round(cpu[i]!),
        msPerPage: round((cpu[i]! * 1000) / Math.max(1, pages)),
        rowsWritten: after.rows[i]! - before.rows[i]!,
      })),
      msPerPage: round((cpu.reduce((a, b) => a + b, 0) * 1000) / Math.max(1, pages)),
    };
  } finally {
    for (const w of workers) {
      if (w.proc.exitCode === null) w.proc.kill('SIGTERM');
      await w.exited();
    }
    await queue.close();
    await connection.quit();
    sandbox.stop();
    await redis.stop();
  }
}

async function measure(label: string, make: () => Promise<{ wh: Warehouse; stop: () => Promise<void> }>) {
  const { wh, stop } = await make();
  try {
    return await backfill(label, wh);
  } finally {
    await stop();
  }
}

const citus = await measure('citus', citusWarehouse);
const plain = await measure('postgres', plainWarehouse);
const workers = citus.nodes.filter((n) => n.role === 'worker');
const written = workers.reduce((n, w) => n + w.rowsWritten, 0);
const coordinator = citus.nodes.find((n) => n.role === 'coordinator')!;
process.stdout.write(
  `${JSON.stringify(
    {
      companies: COMPANIES,
      size: SIZE,
      budget: `${LIMIT}/60s per key`,
      workers: WORKERS,
      cpus: availableParallelism(),
      citus,
      postgres: plain,
      workersShareOfWrites: workers.map((w) => round(w.rowsWritten / Math.max(1, written), 3)),
      coordinatorShareOfClusterCpu: round(coordinator.msPerPage / Math.max(0.001, citus.msPerPage), 3),
      clusterOverPostgres: round(citus.msPerPage / Math.max(0.001, plain.msPerPage), 3),
    },
    null,
    2,
  )}\n`,
);
