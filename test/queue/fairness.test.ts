import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import { backfillingCompanies } from '../../src/queue/fairness.ts';
import { CLOCK_KEY, PASSES_KEY } from '../../src/queue/passes.ts';
import { createSyncQueue, enqueueRun, scheduleDelaySeconds, SYNC_QUEUE, taken, type Fairness, type SyncJobData } from '../../src/queue/sync-queue.ts';
import { streams } from '../../src/resources/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';

/** A saturated queue, in real Redis over a real warehouse: companies take turns, backfills wait, firings coalesce. */

let wh: Warehouse;
let connection: Redis;
let queue: Queue<SyncJobData>;
let fairness: Fairness;
/** Every company past its first sync. */
let steady: Fairness;
const incremental = jobs.filter((j) => !j.fullRefresh && !j.run);

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase() });
  await wh.migrate();
  // beta and gamma have synced every stream once; alpha has synced nothing.
  await wh.sql`
    insert into ${wh.sql(wh.schema)}.sync_runs (company_key, stream, finished_at, outcome)
    select c, s, now(), 'ok' from unnest(${['beta', 'gamma']}::text[]) c, unnest(${streams.map((s) => s.name)}::text[]) s`;
  connection = new Redis(`${inject('redisUrl')}/13`, { maxRetriesPerRequest: null });
  await connection.flushdb();
  queue = createSyncQueue(connection);
  const backfilling = await backfillingCompanies(wh, ['alpha', 'beta', 'gamma']);
  const slots = new Map(jobs.map((j, i) => [j.name, i]));
  fairness = { backfilling: (c) => backfilling.has(c), slotOf: (j) => slots.get(j) ?? 0 };
  steady = { backfilling: () => false, slotOf: (j) => slots.get(j) ?? 0 };
});

afterAll(async () => {
  await queue?.close();
  connection?.disconnect();
  await wh?.close();
});

describe('a saturated queue', () => {
  it('knows which companies backfill from their runs', async () => {
    expect([...(await backfillingCompanies(wh, ['alpha', 'beta', 'gamma']))]).toEqual(['alpha']);
  });

  it('queues incremental runs before a backfill queued earlier, and coalesces firings of a queued job', async () => {
    const firedAt = new Date('2026-11-26T06:00:00Z');
    // alpha's backfill is queued first, then beta's and gamma's every job.
    for (const company of ['alpha', 'beta', 'gamma']) for (const job of incremental) await enqueueRun(queue, { company, job, firedAt }, { fairness, connection });
    const total = 3 * incremental.length;
    expect(await queue.count()).toBe(total);
    // The next firings find every job still queued: nothing more is queued.
    const later = new Date(firedAt.getTime() + 120_000);
    for (const company of ['alpha', 'beta', 'gamma']) for (const job of incremental) await enqueueRun(queue, { company, job, firedAt: later }, { fairness, connection });
    expect(await queue.count()).toBe(total);

    const order = (await queue.getJobs(['prioritized', 'waiting'], 0, -1, true)).map((j) => `${j.data.company}/${j.data.job}`);
    const expected = [...incremental.map((j) => `beta/${j.name}`), ...incremental.map((j) => `gamma/${j.name}`), ...incremental.map((j) => `alpha/${j.name}`)];
    expect(order).toEqual(expected);
  });

  it("says how long the oldest queued run has waited, and nothing once the queue is empty", async () => {
    const [oldest] = await connection.zrange('wfsync:sync:queued', 0, 0, 'WITHSCORES').then((r) => [Number(r[1])]);
    const delay = await scheduleDelaySeconds(queue, connection, oldest! + 90_000);
    expect(delay).toBe(90);
    await queue.obliterate({ force: true });
    expect(await scheduleDelaySeconds(queue, connection)).toBeNull();
    expect(await connection.zcard('wfsync:sync:queued')).toBe(0);
  });

  it('holds a spread run until its share of the window is up, and counts its wait from then', async () => {
    const firedAt = new Date();
    await enqueueRun(queue, { company: 'beta', job: incremental[0]!, firedAt, startAfterMs: 60_000 }, { fairness, connection });
    const [job] = await queue.getJobs(['delayed']);
    expect(job?.data.company).toBe('beta');
    // Due in a minute: nothing has waited yet, and a minute and a half after its firing it has waited 30 s.
    expect(await scheduleDelaySeconds(queue, connection)).toBe(0);
    expect(await scheduleDelaySeconds(queue, connection, job!.timestamp + 90_000)).toBe(30);
    await queue.obliterate({ force: true });
  });

  it('past capacity, gives every company every job in proportion to its interval, none passed over', async () => {
    await connection.del(PASSES_KEY, CLOCK_KEY, 'wfsync:sync:queued');
    // Three companies, a job every minute and one every two; the box does two thirds of what they ask.
    const companies = ['beta', 'gamma', 'delta'];
    const [everyMinute, everyTwo] = [incremental[0]!, incremental[1]!];
    const intervalMs = new Map([[everyMinute.name, 60_000], [everyTwo.name, 120_000]]);
    const taker = new Worker<SyncJobData>(SYNC_QUEUE, null, { connection });
    const runs = new Map<string, number[]>();
    try {
      for (let minute = 0; minute < 30; minute++) {
        const firedAt = new Date(Date.UTC(2026, 10, 26, 7, minute));
        const firing = minute % 2 === 0 ? [everyMinute, everyTwo] : [everyMinute];
        for (const job of firing) for (const company of companies) await enqueueRun(queue, { company, job, firedAt, intervalMs: intervalMs.get(job.name) }, { fairness: steady, connection });
        for (let i = 0; i < 3; i++) {
          const job = (await taker.getNextJob('taker'))!;
          await taken(connection, job);
          await job.moveToCompleted('ok', 'taker', false);
          const key = `${job.data.company}/${job.data.job}`;
          runs.set(key, [...(runs.get(key) ?? []), minute]);
        }
      }
    } finally {
      await taker.close();
    }
    for (const company of companies) {
      for (const [job, ms] of intervalMs) {
        const minutes = runs.get(`${company}/${job}`) ?? [];
        const every = ms / 60_000;
        // Asked 30 / every, done two thirds of it: a run every 1.5 intervals, never more than two apart.
        expect(minutes.length, `${company}/${job}`).toBeGreaterThanOrEqual(Math.floor((30 / every / 1.5) * 0.9));
        const gaps = minutes.slice(1).map((m, i) => (m - minutes[i]!) / every);
        expect(Math.max(...gaps), `${company}/${job} ran at minutes ${minutes.join(' ')}`).toBeLessThanOrEqual(2);
      }
    }
    await queue.obliterate({ force: true });
  });

  it("renumbers its turns from the clock when nothing waits, and only then, runs held for their spread included", async () => {
    await connection.del(PASSES_KEY, CLOCK_KEY);
    const [a, b, c] = incremental;
    const run = (job: typeof a, startAfterMs = 0) => ({ company: 'beta', job: job!, firedAt: new Date(), intervalMs: 60_000, startAfterMs });
    const priorityOf = async (job: typeof a) => (await queue.getJobs(['delayed', 'prioritized', 'waiting'])).find((j) => j.data.job === job!.name)!.priority;
    await connection.zadd(CLOCK_KEY, 400_000, 'at');
    await enqueueRun(queue, run(a, 60_000), { fairness: steady, connection });
    expect(await priorityOf(a)).toBe(400_001);
    // Half a span of clock on, with only a held run queued: the base moves up, and the held run is renumbered.
    await connection.zadd(CLOCK_KEY, 600_000, 'at');
    await enqueueRun(queue, run(b, 60_000), { fairness: steady, connection });
    expect(Number(await connection.zscore(CLOCK_KEY, 'base'))).toBe(600_000);
    expect([await priorityOf(a), await priorityOf(b)]).toEqual([1, 1]);
    // With a run waiting, the base stays where it is.
    await connection.zadd(CLOCK_KEY, 1_200_000, 'at');
    await queue.promoteJobs();
    await enqueueRun(queue, run(c), { fairness: steady, connection });
    expect(Number(await connection.zscore(CLOCK_KEY, 'base'))).toBe(600_000);
    expect(await priorityOf(c)).toBe(600_001);
    await queue.obliterate({ force: true });
  });
});
