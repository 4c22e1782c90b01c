import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobs } from '../../jobs/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { sandboxSettings } from '../support/sandbox-settings.ts';
import { SYNC_QUEUE, syncJobCounts } from '../../src/queue/sync-queue.ts';
import { selectStreams } from '../../src/sync/runner.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync, waitFor, type Spawned } from '../support/processes.ts';
import { spawnSchedulerFiringOnce } from '../support/schedule.ts';
import { startRestartableRedis, type RestartableRedis } from '../support/restartable-redis.ts';

/**
 * Redis dies for longer than the job lock while two workers and a scheduler sync: the locks expire, the jobs
 * they covered are taken up again, and the runs that lost their lock must stop writing before the new ones write.
 * Every page records which run of its job wrote it (the fence check sets `wfsync.run_fence` in the page's
 * transaction); a trigger of this test logs it with the time.
 */
const LOCK_MS = 3000;
const OUTAGE_MS = 3 * LOCK_MS;
let sandbox: RunningSandbox;
let redis: RestartableRedis;
let wh: Warehouse;
let env: Record<string, string>;
const children: Spawned[] = [];

/** The jobs run here: every one that reads streams but the weekly full refresh, whose streams another job runs too. */
const scheduled = jobs.filter((j) => !j.fullRefresh && !j.run);

beforeAll(async () => {
  [sandbox, redis] = await Promise.all([
    startSandbox({ port: 0, seed: 41, size: 'small', rateLimit: { limit: 100, periodMs: 1000 }, latencyMs: 20 }),
    startRestartableRedis(),
  ]);
  const databaseUrl = await freshDatabase({ migrated: true });
  wh = await openWarehouse({ databaseUrl });
  await wh.migrate();
  await wh.sql.unsafe(`
    create table public.page_log (company_key text, stream text, partition text, run_fence text, at timestamptz);
    create function public.log_page() returns trigger language plpgsql as $$
    begin
      insert into public.page_log values (NEW.company_key, NEW.stream, NEW.partition, current_setting('wfsync.run_fence', true), clock_timestamp());
      return NEW;
    end $$;
    create trigger page_log after insert or update on "${wh.schema}".sync_state for each row execute function public.log_page();
  `);
  env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    ...sandboxSettings(sandbox),
    WFS_RATE_LIMIT: '100/1s',
    WFS_RATE_LIMIT_MARGIN_MS: '100',
    WFS_JOB_LOCK_MS: String(LOCK_MS),
    WFS_WORKER_CONCURRENCY: '4',
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  await wh?.close();
  await sandbox?.close();
  await redis?.destroy();
});

async function openRuns(): Promise<number> {
  const [r] = await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.sync_runs where finished_at is null`;
  return r!.n as number;
}

interface PageLine {
  stream: string;
  run_fence: string | null;
  at: Date;
}

/** Pages of one job written by an earlier run after a later run of the job had written: none may be. */
function writesAfterALaterRun(pages: readonly PageLine[]): string[] {
  const latest = new Map<string, number>();
  const out: string[] = [];
  for (const p of pages) {
    const [job, token] = p.run_fence!.split(':') as [string, string];
    const seen = latest.get(job) ?? 0;
    if (Number(token) < seen) out.push(`${p.stream} by ${p.run_fence} at ${p.at.toISOString()} after token ${seen}`);
    latest.set(job, Math.max(seen, Number(token)));
  }
  return out;
}

describe('Redis killed for longer than the job lock, under two workers and a scheduler', () => {
  it('every process stays up, no two runs of a job write at once, and the warehouse equals the sandbox', async () => {
    const workers = [spawnWfsync(['worker'], env), spawnWfsync(['worker'], env)];
    children.push(...workers);
    const scheduler = await spawnSchedulerFiringOnce(
      scheduled.map((j) => j.name),
      env,
    );
    const processes = [...workers, scheduler];
    children.push(scheduler);
    const said = () => processes.map((p, i) => `--- process ${i}:\n${p.output().slice(-2500)}`).join('\n');

    await waitFor(
      () => `streams running: ${said()}`,
      async () => (await openRuns()) >= 3,
      90_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 500));
    await redis.kill();
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    for (const p of processes) expect(p.proc.exitCode, p.output().slice(-3000)).toBeNull();
    await redis.start();

    const observer = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(SYNC_QUEUE, { connection: observer });
    try {
      await waitFor(
        () => `the queue to drain: ${said()}`,
        async () => {
          const c = await syncJobCounts(queue, observer);
          const n = (k: string) => c[k] ?? 0;
          return n('completed') >= scheduled.length && n('waiting') + n('active') + n('delayed') + n('queued') === 0;
        },
        300_000,
        500,
      );
    } finally {
      await queue.close();
      await observer.quit();
    }
    for (const p of processes) expect(p.proc.exitCode, p.output().slice(-3000)).toBeNull();

    // Jobs share no stream but `individuals` (the credentials job reads it first): each other stream's pages
    // come from one job, whose runs are ordered by their fence tokens.
    const shared = new Set(
      scheduled.flatMap((j) => selectStreams(j.streams).map((s) => s.name)).filter((s, i, all) => all.indexOf(s) !== i),
    );
    const pages = (await wh.sql<PageLine[]>`select stream, run_fence, at from public.page_log order by at`).filter(
      (p) => !shared.has(p.stream as never),
    );
    expect(pages.length).toBeGreaterThan(0);
    expect(pages.filter((p) => !p.run_fence)).toEqual([]);
    expect(writesAfterALaterRun(pages)).toEqual([]);

    // The outage outlasted the locks: jobs were taken up again by later runs.
    const fences = await wh.sql<
      { job: string; token: string }[]
    >`select job, token from ${wh.sql(wh.schema)}.run_fences`;
    expect(
      fences.some((f) => Number(f.token) > 1),
      JSON.stringify(fences),
    ).toBe(true);

    expect(summarizeDivergence(await divergence(wh, sandbox.data, 'default'))).toEqual({});
    expect(sandbox.stats().rateLimited).toBe(0);

    // The runs that lost their lock said so, and stopped.
    expect(workers.map((w) => w.output()).join('')).toMatch(/this run lost its lock and stopped writing/);
    // One line per outage and recovery: the lost locks are not taken for Redis going away again.
    for (const p of processes) expect(p.output().match(/Redis unreachable/g), p.output().slice(-3000)).toHaveLength(1);
    for (const p of processes) {
      p.proc.kill('SIGTERM');
      const { code } = await p.exited();
      expect(code, p.output().slice(-3000)).toBe(0);
    }
  }, 480_000);
});
