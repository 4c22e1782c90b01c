import { availableParallelism } from 'node:os';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { pino } from 'pino';
import { jobs } from '../jobs/index.ts';
import { fleetFairness } from '../src/queue/fairness.ts';
import { enqueueRun, SYNC_QUEUE, type SyncJobData } from '../src/queue/sync-queue.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { spawnWfsync, waitFor, type Spawned } from '../test/support/processes.ts';
import { startPostgres, startRedis } from '../test/support/services.ts';
import { startSandboxProcess } from './sync-process.ts';

/**
 * A host shutting down under a fleet: a scheduler and a worker serving COMPANIES companies, each
 * job every minute, get SIGTERM at the same moment as the service stops and Redis shuts down, once runs are in
 * flight. Each of ROUNDS rounds starts from scratch (Postgres, Redis, the service). Prints one JSON object: per
 * round and process, its exit code, the ms from the signal to its exit, whether it logged `stopped` (or a forced
 * end), and the runs left open in sync_runs once both exited, before any other process starts (0 expected).
 *
 *   COMPANIES=50 ROUNDS=3 IN_FLIGHT=20 node --import tsx bench/stop.ts
 */

const COMPANIES = Number(process.env.COMPANIES ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** Open runs to wait for before the signal. */
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 20);
const SIZE = process.env.SIZE ?? 'tiny';
const LIMIT = Number(process.env.LIMIT ?? 100);
/** The processes' shutdown bound (WFS_SHUTDOWN_MS's default). */
const SHUTDOWN_MS = Number(process.env.SHUTDOWN_MS ?? 15_000);
const EVERY_MINUTE = '0 * * * * *';

const apiKey = (i: number) => `stop-key-${String(i).padStart(4, '0')}`;
const company = (i: number) => `s${String(i).padStart(4, '0')}`;
/** The line a forced end names what was still running in (lifecycle.ts). */
const FORCED = /"level":60,[^\n]*: exiting with [^\n]* still running/;

interface Exit {
  code: number | null;
  signal: string | null;
  msFromSignal: number;
  loggedStopped: boolean;
  forced: boolean;
}

interface Round {
  runsInFlightAtSignal: number;
  scheduler: Exit;
  worker: Exit;
  runsLeftOpen: number;
  /** How the runs open at the signal were recorded, by outcome. */
  outcomes: Record<string, number>;
}

/** How a process ended after the signal sent at `signalAt`. */
async function exitOf(p: Spawned, signalAt: number): Promise<Exit> {
  const closed = new Promise((resolve) => p.proc.once('close', resolve));
  const { code, signal } = await p.exited();
  const msFromSignal = Date.now() - signalAt;
  await closed;
  const out = p.output();
  return { code, signal, msFromSignal, loggedStopped: out.includes('"msg":"stopped"'), forced: FORCED.test(out) };
}

/** Every company's first runs, queued as `start` queues them: runs are in flight well before the first cron. */
async function enqueueFirstRuns(redisUrl: string, databaseUrl: string): Promise<void> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue<SyncJobData>(SYNC_QUEUE, { connection });
  const wh = await openWarehouse({ databaseUrl });
  try {
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
  } finally {
    await queue.close();
    await connection.quit();
    await wh.close();
  }
}

async function round(): Promise<Round> {
  const pg = await startPostgres();
  const redis = await startRedis();
  const keys = Array.from({ length: COMPANIES }, (_, i) => apiKey(i));
  const sandbox = await startSandboxProcess({ size: SIZE, rateLimit: `${LIMIT}/60s`, seed: 48, keys });
  const { info } = sandbox;
  const env: Record<string, string> = {
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    WFS_RATE_LIMIT: `${LIMIT}/60s`,
    WFS_SHUTDOWN_MS: String(SHUTDOWN_MS),
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
    WFS_SECRET_KEY: 'bench-stop-secret-key',
    ...Object.fromEntries(
      jobs
        .filter((j) => j.cron && !j.run)
        .map((j) => [`WFS_CRON_${j.name.toUpperCase().replace(/-/g, '_')}`, EVERY_MINUTE]),
    ),
  };
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  const procs: Spawned[] = [];
  try {
    const migrate = spawnWfsync(['migrate'], env);
    if ((await migrate.exited()).code !== 0) throw new Error(`migrate failed: ${migrate.output()}`);
    const scheduler = spawnWfsync(['scheduler'], env);
    const worker = spawnWfsync(['worker'], env);
    procs.push(scheduler, worker);
    await waitFor(
      () => `the scheduler and the worker to start: ${scheduler.output().slice(-500)} ${worker.output().slice(-500)}`,
      async () => scheduler.output().includes('scheduler started') && worker.output().includes('worker started'),
      120_000,
      250,
    );
    await enqueueFirstRuns(redis.url, pg.url);
    const open = async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from workforce.sync_runs where finished_at is null`)[0]!.n;
    const inFlight = await waitFor(
      `${IN_FLIGHT} runs in flight`,
      async () => {
        const n = await open();
        return n >= IN_FLIGHT ? n : undefined;
      },
      180_000,
      250,
    );
    const openAtSignal = await sql<{ id: string }[]>`select id from workforce.sync_runs where finished_at is null`;
    // The host shuts down: the processes, the service and Redis are all told at once.
    const signalAt = Date.now();
    scheduler.proc.kill('SIGTERM');
    worker.proc.kill('SIGTERM');
    sandbox.stop();
    const redisDown = redis.stop();
    const [schedulerExit, workerExit] = await Promise.all([exitOf(scheduler, signalAt), exitOf(worker, signalAt)]);
    await redisDown;
    const runsLeftOpen = await open();
    const outcomes = await sql<{ outcome: string | null; n: number }[]>`
      select outcome, count(*)::int as n from workforce.sync_runs where id = any(${openAtSignal.map((r) => r.id)}::bigint[]) group by outcome`;
    return {
      runsInFlightAtSignal: inFlight,
      scheduler: schedulerExit,
      worker: workerExit,
      runsLeftOpen,
      outcomes: Object.fromEntries(outcomes.map((r) => [r.outcome ?? 'open', r.n])),
    };
  } finally {
    for (const p of procs) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
    sandbox.proc.kill('SIGKILL');
    await sql.end({ timeout: 1 }).catch(() => undefined);
    await redis.stop();
    await pg.stop();
  }
}

async function main(): Promise<void> {
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round());
  const exits = rounds.flatMap((r) => [r.scheduler, r.worker]);
  process.stdout.write(
    `${JSON.stringify(
      {
        companies: COMPANIES,
        size: SIZE,
        cron: EVERY_MINUTE,
        shutdownMs: SHUTDOWN_MS,
        cpus: availableParallelism(),
        rounds,
        slowestExitMs: Math.max(...exits.map((e) => e.msFromSignal)),
        allOrderly: exits.every((e) => e.code === 0 && e.loggedStopped && !e.forced),
        runsLeftOpen: rounds.reduce((n, r) => n + r.runsLeftOpen, 0),
        note: 'SIGTERM to the scheduler and the worker, SIGTERM to the sandbox and to redis-server at the same moment, once runs are in flight; runs left open are counted before any other process starts',
      },
      null,
      2,
    )}\n`,
  );
}

await main();
