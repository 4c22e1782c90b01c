import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobs } from '../../jobs/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { SYNC_QUEUE, syncJobCounts } from '../../src/queue/sync-queue.ts';
import { freshDatabase } from '../support/db.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { spawnWfsync, waitFor, type Spawned } from '../support/processes.ts';
import { cronSetting, spawnSchedulerFiringOnce } from '../support/schedule.ts';

/**
 * Two worker processes and a scheduler process sync two sandbox companies through BullMQ, with real Redis and
 * Postgres; one worker is killed mid-stream and the other finishes its jobs. Then, on that warehouse, every job
 * fires every few seconds: no stream runs twice at once for a company, and the individuals the credentials job
 * depends on are not read again while the individuals job's last read is within its interval.
 */
const rateLimit = { limit: 100, periodMs: 1000 };
const REDIS_DB = 3;
let sandboxes: Record<'north' | 'south', RunningSandbox>;
let wh: Warehouse;
let redis: Redis;
let env: Record<string, string>;
const children: Spawned[] = [];

beforeAll(async () => {
  const [north, south] = await Promise.all([
    startSandbox({
      port: 0,
      seed: 21,
      size: 'small',
      rateLimit,
      keys: [{ key: 'north-key', scopes: ['individuals', 'certifications'] }],
    }),
    startSandbox({
      port: 0,
      seed: 22,
      size: 'small',
      rateLimit,
      keys: [{ key: 'south-key', scopes: ['individuals', 'certifications'] }],
    }),
  ]);
  sandboxes = { north: north!, south: south! };
  const databaseUrl = await freshDatabase({ migrated: true });
  wh = await openWarehouse({ databaseUrl });
  await wh.migrate();
  const redisUrl = `${inject('redisUrl')}/${REDIS_DB}`;
  redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  await redis.flushdb();
  env = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    WFS_RATE_LIMIT: '100/1s',
    // The sandbox shares two cores with the whole test run: it may count a request tens of ms after it was sent.
    WFS_RATE_LIMIT_MARGIN_MS: '100',
    WFS_JOB_LOCK_MS: '3000',
    WFS_WORKER_CONCURRENCY: '3',
    LOG_LEVEL: 'warn',
    WFS_COMPANIES: JSON.stringify(
      Object.entries(sandboxes).map(([key, s]) => ({
        key,
        apiKey: `${key}-key`,
        baseUrl: s.url,
        formIds: s.data.formIds(),
        runTypeIds: s.data.runTypeIds(),
      })),
    ),
  };
});

afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  await redis?.quit();
  await wh?.close();
  await Promise.all(Object.values(sandboxes ?? {}).map((s) => s.close()));
});

describe('workers and scheduler', () => {
  it('sync every stream of two companies; a killed worker’s jobs finish elsewhere; the warehouse converges', async () => {
    const workers = [spawnWfsync(['worker'], env), spawnWfsync(['worker'], env)];
    children.push(...workers);
    const scheduler = await spawnSchedulerFiringOnce(
      jobs.map((j) => j.name),
      env,
    );
    children.push(scheduler);

    // Kill the first worker while streams are being written.
    await waitFor(
      () =>
        `streams running (worker said: ${workers[0]!.output().slice(-2000)} scheduler said: ${scheduler.output().slice(-2000)})`,
      async () =>
        (await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.sync_runs where finished_at is null`)[0]!.n >=
        3,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1000));
    workers[0]!.proc.kill('SIGKILL');

    const queue = new Queue(SYNC_QUEUE, { connection: redis });
    const expected = jobs.length * 2;
    const counts = await waitFor(
      () => `every job to finish (worker said: ${workers[1]!.output().slice(-3000)})`,
      async () => {
        const c = await syncJobCounts(queue, redis);
        const n = (k: string) => c[k] ?? 0;
        return n('completed') + n('failed') >= expected && n('waiting') + n('active') + n('delayed') + n('queued') === 0
          ? { completed: n('completed'), failed: n('failed') }
          : undefined;
      },
      300_000,
      500,
    );
    expect(counts.failed).toBe(0);
    // The killed worker held jobs: the survivor noticed them stalled and ran them again.
    expect(workers[1]!.output()).toContain('sync job stalled; it runs again');
    expect(counts.completed).toBe(expected);
    const results = (await queue.getCompleted(0, expected)).map((j) => j.returnvalue as { skipped?: string });
    expect(results.filter((r) => r.skipped)).toEqual([]);
    await queue.close();

    for (const company of ['north', 'south'] as const) {
      expect(summarizeDivergence(await divergence(wh, sandboxes[company].data, company)), company).toEqual({});
      expect(sandboxes[company].stats().rateLimited, `${company} got 429s`).toBe(0);
    }
    const [rejects] = await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.sync_rejects`;
    expect(rejects!.n).toBe(0);

    // The surviving worker and the scheduler stop cleanly on SIGTERM, well within 10 s.
    for (const p of [workers[1]!, scheduler]) {
      const started = Date.now();
      p.proc.kill('SIGTERM');
      const { code } = await p.exited();
      expect(code, p.output()).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  }, 420_000);

  it('with every job firing every few seconds, no stream runs twice at once, and fresh individuals are not read again', async () => {
    const since = new Date();
    const individualsRequests = () => Object.values(sandboxes).map((s) => s.stats().byEndpoint.individuals ?? 0);
    const before = individualsRequests();
    const workers = [spawnWfsync(['worker'], env), spawnWfsync(['worker'], env)];
    // Every job every 15 s (the weekly full refresh aside), the credentials job every 5 s and the individuals job
    // every 20 s: each credentials run reads the individuals first, and every 20 s both jobs fire together.
    const crons = {
      ...Object.fromEntries(jobs.filter((j) => !j.fullRefresh).map((j) => [cronSetting(j.name), '*/15 * * * * *'])),
      [cronSetting('credentials')]: '*/5 * * * * *',
      [cronSetting('individuals')]: '*/20 * * * * *',
    };
    const scheduler = spawnWfsync(['scheduler'], { ...env, ...crons });
    children.push(...workers, scheduler);
    const queue = new Queue(SYNC_QUEUE, { connection: redis });
    const said = () => workers.map((w) => w.output().slice(-2000)).join('\n---\n');
    const firedSince = async () =>
      (await queue.getJobs(['completed', 'failed', 'active', 'waiting', 'delayed'])).filter(
        (j) => Date.parse(j.data.firedAt) >= since.getTime(),
      );
    // Until the individuals job fired three times for each company, and the credentials job ran three more times
    // than that (a loaded machine starts the processes late and skips runs while the last one goes on).
    await waitFor(
      () => `enough runs of both jobs (workers said: ${said()})`,
      async () => {
        const jobsNow = await firedSince();
        return (['north', 'south'] as const).every((company) => {
          const of = (job: string) => jobsNow.filter((j) => j.data.company === company && j.data.job === job);
          const individuals = of('individuals').length;
          const credentials = of('credentials').filter(
            (j) => j.finishedOn && !j.failedReason && !j.returnvalue?.skipped,
          ).length;
          return individuals >= 3 && credentials >= individuals + 3;
        });
      },
      180_000,
      1000,
    );
    scheduler.proc.kill('SIGTERM');
    expect((await scheduler.exited()).code, scheduler.output()).toBe(0);

    await waitFor(
      () => `the queue to drain (workers said: ${said()})`,
      async () => {
        const c = await syncJobCounts(queue, redis);
        return c.waiting === 0 && c.active === 0 && c.delayed === 0 && c.queued === 0;
      },
      120_000,
      500,
    );
    const fired = await firedSince();
    await queue.close();
    for (const w of workers) {
      w.proc.kill('SIGTERM');
      expect((await w.exited()).code, w.output().slice(-3000)).toBe(0);
    }
    expect(fired.filter((j) => j.failedReason).map((j) => `${j.id}: ${j.failedReason}`)).toEqual([]);

    const schema = wh.sql(wh.schema);
    const overlapping = await wh.sql`
      select a.company_key, a.stream, a.id as first, b.id as second from ${schema}.sync_runs a
      join ${schema}.sync_runs b on b.company_key = a.company_key and b.stream = a.stream and b.id > a.id
      where a.started_at >= ${since} and b.started_at >= ${since}
        and b.started_at < a.finished_at and a.started_at < b.finished_at`;
    expect(overlapping).toEqual([]);

    const after = individualsRequests();
    for (const [i, company] of (['north', 'south'] as const).entries()) {
      const ofCompany = fired.filter((j) => j.data.company === company);
      const individualsJobs = ofCompany.filter((j) => j.data.job === 'individuals').length;
      const credentialsRuns = ofCompany.filter((j) => j.data.job === 'credentials' && !j.returnvalue?.skipped);
      const [reads] = await wh.sql<{ runs: number; requests: number; open: number }[]>`
        select count(*)::int as runs, coalesce(sum(requests), 0)::int as requests, count(*) filter (where finished_at is null)::int as open
        from ${schema}.sync_runs where company_key = ${company} and stream = 'individuals' and started_at >= ${since}`;
      const summary = { individualsJobs, credentialsRuns: credentialsRuns.length, reads };
      // Each read is recorded: the service counted no other request for individuals.
      expect(after[i]! - before[i]!, JSON.stringify(summary)).toBe(reads!.requests);
      expect(reads!.open).toBe(0);
      // About one read per firing of the individuals job (a credentials run finding them older than 20 s reads
      // them, and the individuals job then takes that read), instead of one per firing of either job.
      expect(credentialsRuns.length, JSON.stringify(summary)).toBeGreaterThan(individualsJobs + 2);
      expect(reads!.runs, JSON.stringify(summary)).toBeLessThanOrEqual(individualsJobs + 2);
      const tookFresh = credentialsRuns.filter((j) =>
        j.returnvalue?.streams?.some(
          (o: { stream: string; freshFrom?: string }) => o.stream === 'individuals' && o.freshFrom,
        ),
      );
      expect(tookFresh.length, JSON.stringify(summary)).toBeGreaterThan(0);
    }
  }, 300_000);
});
