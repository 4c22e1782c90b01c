import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import { backfillingCompanies } from '../../src/queue/fairness.ts';
import { createSyncQueue, enqueueRun, scheduleDelaySeconds, type Fairness, type SyncJobData } from '../../src/queue/sync-queue.ts';
import { streams } from '../../src/resources/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';

/** A saturated queue, in real Redis over a real warehouse: companies take turns, backfills wait, firings coalesce. */

let wh: Warehouse;
let connection: Redis;
let queue: Queue<SyncJobData>;
let fairness: Fairness;
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

  it('takes companies in turns, incremental runs before a backfill queued earlier, and coalesces firings of a queued job', async () => {
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
    const expected = [
      ...incremental.flatMap((j) => [`beta/${j.name}`, `gamma/${j.name}`]),
      ...incremental.map((j) => `alpha/${j.name}`),
    ];
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
});
