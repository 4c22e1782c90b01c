import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import { backfillingCompanies } from '../../src/queue/fairness.ts';
import { createSyncQueue, enqueueRun, scheduleDelaySeconds, SYNC_QUEUE, taken, type Fairness, type SyncJobData } from '../../src/queue/sync-queue.ts';
import { shareOf } from '../../src/queue/spread.ts';
import { EPOCH_KEY, FRONTIER_KEY, TAKEN_KEY, TURN_SPAN_S, turnOf } from '../../src/queue/turns.ts';
import { streams } from '../../src/resources/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';

/** A saturated queue, in real Redis over a real warehouse: companies take turns, backfills wait, firings coalesce or follow a running job. */

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

/** Runs `fn` with a worker that takes jobs by hand, then closes it and empties the queue. */
async function withTaker(fn: (taker: Worker<SyncJobData>) => Promise<void>): Promise<void> {
  const taker = new Worker<SyncJobData>(SYNC_QUEUE, null, { connection: connection.duplicate() });
  try {
    await fn(taker);
  } finally {
    await taker.close();
    await queue.obliterate({ force: true });
  }
}

describe('a saturated queue', () => {
  it('knows which companies backfill from their runs', async () => {
    expect([...(await backfillingCompanies(wh, ['alpha', 'beta', 'gamma']))]).toEqual(['alpha']);
  });

  it('takes the company served longest ago first, incremental runs before a backfill queued earlier, and coalesces firings of a queued job', async () => {
    const firedAt = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000);
    const intervalMs = 600_000;
    // beta's turns at every job last started a minute before the firing, gamma's ten minutes before: gamma's next
    // turn ends first.
    for (const job of incremental) {
      await taken(connection, 'x', { company: 'beta', job: job.name, turnStartMs: firedAt.getTime() - 60_000 });
      await taken(connection, 'x', { company: 'gamma', job: job.name, turnStartMs: firedAt.getTime() - intervalMs });
    }
    // alpha's backfill is queued first, then beta's and gamma's every job.
    for (const company of ['alpha', 'beta', 'gamma']) for (const job of incremental) await enqueueRun(queue, { company, job, firedAt, intervalMs }, { fairness, connection });
    const total = 3 * incremental.length;
    expect(await queue.count()).toBe(total);
    // The next firings find every job still queued: nothing more is queued.
    const later = new Date(firedAt.getTime() + 120_000);
    for (const company of ['alpha', 'beta', 'gamma']) for (const job of incremental) await enqueueRun(queue, { company, job, firedAt: later, intervalMs }, { fairness, connection });
    expect(await queue.count()).toBe(total);

    const order = (await queue.getJobs(['prioritized', 'waiting'], 0, -1, true)).map((j) => `${j.data.company}/${j.data.job}`);
    const expected = [
      ...incremental.map((j) => `gamma/${j.name}`),
      ...incremental.map((j) => `beta/${j.name}`),
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
  it("follows a company's last turn by one interval, and puts a company behind on its own grid no more than an interval before the frontier", () => {
    const intervalMs = 60_000;
    const run = { company: 'beta', job: { name: 'shift-assignments' }, firedAt: new Date(1_000_000), startAfterMs: 5_000, intervalMs };
    expect(turnOf(run, 2_000_000, 1_500_000)).toEqual({ startMs: 2_060_000, endMs: 2_120_000 });
    // A company paused or passed by while the others went on earns at most one turn: its grid's first point from an
    // interval before the frontier, at its share of the interval.
    const behind = turnOf(run, 2_000_000, 3_000_000);
    expect(behind.startMs).toBeGreaterThanOrEqual(3_000_000 - intervalMs);
    expect(behind.startMs).toBeLessThan(3_000_000);
    expect(behind.startMs % intervalMs).toBe(Math.floor(shareOf('beta', 'shift-assignments') * intervalMs));
    expect(behind.endMs).toBe(behind.startMs + intervalMs);
    expect(turnOf(run, null, 3_000_000)).toEqual(behind);
    // Its next turn follows on from that one, on the same grid.
    expect(turnOf(run, behind.startMs, 3_000_000).startMs).toBe(behind.startMs + intervalMs);
    // Nothing taken yet anywhere: the turn starts when the run fell due.
    expect(turnOf(run, null, null)).toEqual({ startMs: 1_005_000, endMs: 1_065_000 });
  });

  it("spreads a job's companies joining at once over its interval, so a shorter job's turns are not held behind them in a block", () => {
    const frontierMs = 10_000_000;
    const fourMinutes = 240_000;
    // Forty companies join a four-minute job at the frontier; one company's thirty-second turns follow on from it.
    const joining = Array.from({ length: 40 }, (_, i) => turnOf({ company: `c${i}`, job: { name: 'time-off' }, firedAt: new Date(0), intervalMs: fourMinutes }, null, frontierMs));
    const short = Array.from({ length: 8 }, (_, i) => ({ startMs: frontierMs + i * 30_000, endMs: frontierMs + (i + 1) * 30_000 }));
    const taken = [...joining.map((t) => ({ ...t, short: false })), ...short.map((t) => ({ ...t, short: true }))].sort((a, b) => a.endMs - b.endMs);
    let inARow = 0;
    let most = 0;
    for (const turn of taken) {
      inARow = turn.short ? 0 : inARow + 1;
      most = Math.max(most, inARow);
    }
    // Evenly spread, five of the long job's turns come between two of the short job's; all at one instant, forty would.
    expect(most).toBeLessThanOrEqual(12);
    expect(new Set(joining.map((t) => t.startMs)).size).toBeGreaterThan(35);
  });

  it('serves a company once before any company served after it is served again, and a new company at the frontier', async () => {
    await queue.obliterate({ force: true });
    await connection.del(FRONTIER_KEY, TAKEN_KEY);
    const now = Date.now();
    const job = incremental[0]!;
    // beta's turn started 10 s before gamma's, the latest taken; delta has never run this job.
    await taken(connection, 'x', { company: 'beta', job: job.name, turnStartMs: now - 10_000 });
    await taken(connection, 'x', { company: 'gamma', job: job.name, turnStartMs: now });
    for (const company of ['gamma', 'beta', 'delta']) await enqueueRun(queue, { company, job, firedAt: new Date(now), intervalMs: 60_000 }, { fairness, connection });
    const order = (await queue.getJobs(['prioritized'], 0, -1, true)).map((j) => j.data.company);
    expect(order).toEqual(['delta', 'beta', 'gamma']);
    await queue.obliterate({ force: true });
  });

  it('queues a firing that finds its job running once that run ends, at once, and counts the next turn from the take', async () => {
    await queue.obliterate({ force: true });
    const job = incremental[0]!;
    await enqueueRun(queue, { company: 'beta', job, firedAt: new Date(Date.now() - 60_000), intervalMs: 30_000 }, { fairness, connection });
    await withTaker(async (taker) => {
      const running = (await taker.getNextJob('token'))!;
      await taken(connection, String(running.id), running.data);
      // A firing while it runs, with a spread share: not coalesced into the running job, and not queued yet.
      const next = new Date();
      await enqueueRun(queue, { company: 'beta', job, firedAt: next, intervalMs: 30_000, startAfterMs: 60_000 }, { fairness, connection });
      expect(await queue.getJobCounts('prioritized', 'delayed', 'waiting')).toEqual({ prioritized: 0, delayed: 0, waiting: 0 });
      await running.moveToCompleted('done', 'token', false);
      const [queued] = await queue.getJobs(['prioritized', 'waiting']);
      expect(queued?.id).toBe(`beta.${job.name}.${next.getTime()}`);
      // Its turn follows on from the one taken, an interval later.
      expect(queued!.data.turnStartMs).toBe(running.data.turnStartMs! + 30_000);
      expect(await connection.get(FRONTIER_KEY)).toBe(String(running.data.turnStartMs));
    });
  });

  it("follows on from the turn of the run a worker holds, before the worker has recorded its take", async () => {
    await queue.obliterate({ force: true });
    await connection.del(FRONTIER_KEY, TAKEN_KEY);
    const job = incremental[0]!;
    await enqueueRun(queue, { company: 'gamma', job, firedAt: new Date(Date.now() - 60_000), intervalMs: 30_000 }, { fairness, connection });
    await withTaker(async (taker) => {
      const running = (await taker.getNextJob('token'))!;
      // The next firing comes between the worker's take and its record of it: the company gets no second go at that turn.
      await enqueueRun(queue, { company: 'gamma', job, firedAt: new Date(), intervalMs: 30_000 }, { fairness, connection });
      await running.moveToCompleted('done', 'token', false);
      const [queued] = await queue.getJobs(['prioritized', 'waiting']);
      expect(queued!.data.turnStartMs).toBe(running.data.turnStartMs! + 30_000);
    });
  });

  it('gives a queued run the earlier turn of a firing on more frequent crons, and leaves it as it is otherwise', async () => {
    await queue.obliterate({ force: true });
    await connection.del(FRONTIER_KEY, TAKEN_KEY);
    const job = incremental[0]!;
    const now = Date.now();
    await taken(connection, 'x', { company: 'delta', job: job.name, turnStartMs: now });
    try {
      // Queued under a cron every 15 minutes: its turn ends half an hour on.
      await enqueueRun(queue, { company: 'delta', job, firedAt: new Date(now), intervalMs: 900_000 }, { fairness, connection });
      const [before] = await queue.getJobs(['prioritized']);
      // A firing on the same cron coalesces and changes nothing.
      await enqueueRun(queue, { company: 'delta', job, firedAt: new Date(now + 1_000), intervalMs: 900_000 }, { fairness, connection });
      expect((await queue.getJob(before!.id!))!.priority).toBe(before!.priority);
      // The cron now fires every 30 seconds: the queued run takes the turn that ends a minute on.
      await enqueueRun(queue, { company: 'delta', job, firedAt: new Date(now + 2_000), intervalMs: 30_000 }, { fairness, connection });
      const queued = await queue.getJobs(['prioritized']);
      expect(queued.map((j) => j.id)).toEqual([before!.id]);
      expect(queued[0]!.data.turnStartMs).toBe(now + 30_000);
      expect(before!.priority - queued[0]!.priority).toBe(1740);
    } finally {
      await queue.obliterate({ force: true });
    }
  });

  it('moves the epoch on before the turns run out, and the queued turns keep their order', async () => {
    await connection.del(FRONTIER_KEY, TAKEN_KEY);
    const now = Date.now();
    const day = 86_400_000;
    await connection.set(EPOCH_KEY, String(now - 10.5 * day));
    const job = incremental[0]!;
    // gamma's last turn started half an hour ago (the frontier); its next is queued under the old epoch. beta's daily
    // turn last started an hour ago.
    await taken(connection, 'x', { company: 'beta', job: job.name, turnStartMs: now - 3_600_000 });
    await taken(connection, 'x', { company: 'gamma', job: job.name, turnStartMs: now - 1_800_000 });
    await enqueueRun(queue, { company: 'gamma', job, firedAt: new Date(now), intervalMs: 600_000 }, { fairness, connection });
    expect(Number(await connection.get(EPOCH_KEY))).toBe(now - 10.5 * day);
    // beta's next daily turn ends past what the old epoch can count: the epoch moves to a day before the frontier.
    await enqueueRun(queue, { company: 'beta', job, firedAt: new Date(now), intervalMs: day }, { fairness, connection });
    await enqueueRun(queue, { company: 'alpha', job, firedAt: new Date(now), intervalMs: 600_000 }, { fairness, connection });
    expect(Number(await connection.get(EPOCH_KEY))).toBe(now - 1_800_000 - day);
    const queued = await queue.getJobs(['prioritized'], 0, -1, true);
    expect(queued.map((j) => j.data.company)).toEqual(['gamma', 'beta', 'alpha']);
    expect(queued[0]!.priority).toBeLessThan(TURN_SPAN_S / 2);
    expect(queued[1]!.priority).toBeLessThan(TURN_SPAN_S / 2);
    expect(queued[2]!.priority).toBeGreaterThan(TURN_SPAN_S);
    await queue.obliterate({ force: true });
  });
});
