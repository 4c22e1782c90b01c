import { type Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import type { JobDef } from '../../src/queue/job.ts';
import { backfillingCompanies } from '../../src/queue/fairness.ts';
import { feedRuns, finishJob } from '../../src/queue/feeder.ts';
import { DUE_KEY, LATER_KEY, QUEUED_KEY } from '../../src/queue/scripts.ts';
import {
  createSyncQueue,
  enqueueRun,
  queuedRuns,
  scheduleDelaySeconds,
  SYNC_QUEUE,
  syncJobId,
  taken,
  type Fairness,
  type SyncJobData,
} from '../../src/queue/sync-queue.ts';
import { shareOf, sharesOf } from '../../src/queue/spread.ts';
import { FRONTIER_KEY, TAKEN_KEY, turnOf, turnOrder } from '../../src/queue/turns.ts';
import { streams } from '../../src/resources/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { emptySyncQueue, takeAll, takeOne } from '../support/sync-queue.ts';

/** A saturated queue, in real Redis over a real warehouse: companies take turns, backfills wait, firings coalesce or follow a running job. */

let wh: Warehouse;
let connection: Redis;
let queue: Queue<SyncJobData>;
let fairness: Fairness;
const incremental = jobs.filter((j) => !j.fullRefresh && !j.run);

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
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
    await emptySyncQueue(queue, connection);
  }
}

/** An empty queue and no turn taken yet: the job to queue runs of, and when. */
async function emptyQueue(): Promise<{ job: JobDef; now: number }> {
  await emptySyncQueue(queue, connection);
  await connection.del(FRONTIER_KEY, TAKEN_KEY);
  return { job: incremental[0]!, now: Date.now() };
}

/** The company and job of every run given out to workers with `free` slots, in the order given. */
async function givenOut(free = 10_000): Promise<string[]> {
  return (await feedRuns(queue, connection, free)).map((r) => `${r.data.company}/${r.data.job}`);
}

describe('a saturated queue', () => {
  it('knows which companies backfill from their runs', async () => {
    expect([...(await backfillingCompanies(wh, ['alpha', 'beta', 'gamma']))]).toEqual(['alpha']);
  });

  it('gives out the company served longest ago first, incremental runs before a backfill queued earlier, and coalesces firings of a queued job', async () => {
    await emptySyncQueue(queue, connection);
    const intervalMs = 600_000;
    const firedAt = new Date(Math.floor(Date.now() / intervalMs) * intervalMs - 3_600_000);
    // beta's turns at every job last started a minute before the firing, gamma's ten minutes before, on a grid of whole
    // intervals: gamma's next turn ends first.
    for (const job of incremental) {
      await taken(connection, { company: 'beta', job: job.name, turnStartMs: firedAt.getTime() - 60_000 });
      await taken(connection, { company: 'gamma', job: job.name, turnStartMs: firedAt.getTime() - intervalMs });
    }
    // alpha's backfill is queued first, then beta's and gamma's every job.
    for (const company of ['alpha', 'beta', 'gamma'])
      for (const job of incremental)
        await enqueueRun(queue, { company, job, firedAt, intervalMs, share: 0 }, { fairness, connection });
    const total = 3 * incremental.length;
    expect(await queuedRuns(connection)).toHaveLength(total);
    // The next firings find every job still queued: nothing more is queued.
    const later = new Date(firedAt.getTime() + 120_000);
    for (const company of ['alpha', 'beta', 'gamma'])
      for (const job of incremental)
        await enqueueRun(queue, { company, job, firedAt: later, intervalMs, share: 0 }, { fairness, connection });
    expect(await queuedRuns(connection)).toHaveLength(total);

    // Nothing is in BullMQ until a worker has a free slot.
    expect(await queue.count()).toBe(0);
    const order = [...(await givenOut(4)), ...(await givenOut())];
    const expected = [
      ...incremental.map((j) => `gamma/${j.name}`),
      ...incremental.map((j) => `beta/${j.name}`),
      ...incremental.map((j) => `alpha/${j.name}`),
    ];
    expect(order).toEqual(expected);
    // BullMQ holds what was given out, in that order, as plain jobs.
    const held = await queue.getJobs(['waiting'], 0, -1, true);
    expect(held.map((j) => `${j.data.company}/${j.data.job}`)).toEqual(expected);
    expect(held.every((j) => !j.opts.priority && !j.opts.deduplication)).toBe(true);
    await emptySyncQueue(queue, connection);
  });

  it('says how long the oldest queued run has waited, and nothing once it is given out', async () => {
    await enqueueRun(queue, { company: 'beta', job: incremental[0]!, firedAt: new Date() }, { fairness, connection });
    const [, oldest] = await connection.zrange(QUEUED_KEY, 0, 0, 'WITHSCORES');
    expect(await scheduleDelaySeconds(connection, Number(oldest) + 90_000)).toBe(90);
    await givenOut();
    expect(await scheduleDelaySeconds(connection)).toBeNull();
    expect(await connection.zcard(QUEUED_KEY)).toBe(0);
    await emptySyncQueue(queue, connection);
  });

  it('holds a spread run until its share of the spread is up, and counts its wait from then', async () => {
    const firedAt = new Date();
    await enqueueRun(
      queue,
      { company: 'beta', job: incremental[0]!, firedAt, startAfterMs: 60_000 },
      { fairness, connection },
    );
    expect(await givenOut()).toEqual([]);
    const [held, untilMs] = await connection.zrange(LATER_KEY, 0, 0, 'WITHSCORES');
    expect(held).toBe(`beta.${incremental[0]!.name}`);
    // Due in a minute: nothing has waited yet, and a minute and a half after its firing it has waited 30 s.
    expect(await scheduleDelaySeconds(connection)).toBe(0);
    expect(await scheduleDelaySeconds(connection, Number(untilMs) + 30_000)).toBe(30);
    await emptySyncQueue(queue, connection);
  });
  it("follows a company's last turn by one interval on its grid, and puts a company behind on it no more than an interval before the frontier", () => {
    const intervalMs = 60_000;
    // beta's share puts its turns a quarter of an interval past each whole one.
    const run = {
      company: 'beta',
      job: { name: 'shift-assignments' },
      firedAt: new Date(1_000_000),
      startAfterMs: 5_000,
      intervalMs,
      share: 0.25,
    };
    expect(turnOf(run, 2_055_000, 1_500_000)).toEqual({ startMs: 2_115_000, endMs: 2_175_000 });
    // The fleet grew and beta's share moved a little: the next turn is on the grid as it is now.
    expect(turnOf({ ...run, share: 0.26 }, 2_055_000, 1_500_000).startMs).toBe(2_115_600);
    // A company paused or passed by while the others went on earns at most one turn: its grid's first point from an
    // interval before the frontier, at its share of the interval.
    const behind = turnOf(run, 2_055_000, 3_000_000);
    expect(behind.startMs).toBeGreaterThanOrEqual(3_000_000 - intervalMs);
    expect(behind.startMs).toBeLessThan(3_000_000);
    expect(behind.startMs % intervalMs).toBe(15_000);
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
    const joining = Array.from({ length: 40 }, (_, i) =>
      turnOf(
        { company: `c${i}`, job: { name: 'time-off' }, firedAt: new Date(0), intervalMs: fourMinutes },
        null,
        frontierMs,
      ),
    );
    const short = Array.from({ length: 8 }, (_, i) => ({
      startMs: frontierMs + i * 30_000,
      endMs: frontierMs + (i + 1) * 30_000,
    }));
    const taken = [...joining.map((t) => ({ ...t, short: false })), ...short.map((t) => ({ ...t, short: true }))].sort(
      (a, b) => a.endMs - b.endMs,
    );
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
    await emptyQueue();
    const now = Date.now();
    const job = incremental[0]!;
    // beta's turn started 6 s before gamma's, the latest taken, each on its grid; delta has never run this job.
    const minute = Math.floor(now / 60_000) * 60_000;
    const share = { beta: 0.1, gamma: 0.2, delta: 0.5 };
    await taken(connection, { company: 'beta', job: job.name, turnStartMs: minute + 6_000 });
    await taken(connection, { company: 'gamma', job: job.name, turnStartMs: minute + 12_000 });
    for (const company of ['gamma', 'beta', 'delta'] as const)
      await enqueueRun(
        queue,
        { company, job, firedAt: new Date(now), intervalMs: 60_000, share: share[company] },
        { fairness, connection },
      );
    expect(await givenOut()).toEqual(['delta', 'beta', 'gamma'].map((c) => `${c}/${job.name}`));
    await emptySyncQueue(queue, connection);
  });

  it('queues a firing that finds its job running once that run ends, at once, and counts the next turn from the take', async () => {
    await emptySyncQueue(queue, connection);
    const job = incremental[0]!;
    await enqueueRun(
      queue,
      { company: 'beta', job, firedAt: new Date(Date.now() - 60_000), intervalMs: 30_000 },
      { fairness, connection },
    );
    await withTaker(async (taker) => {
      await givenOut(1);
      const running = (await taker.getNextJob('token'))!;
      await taken(connection, running.data);
      // A firing while it runs, with a spread share: not coalesced into the running job, and not given out yet.
      const next = new Date();
      await enqueueRun(
        queue,
        { company: 'beta', job, firedAt: next, intervalMs: 30_000, startAfterMs: 60_000 },
        { fairness, connection },
      );
      expect(await givenOut()).toEqual([]);
      expect(await connection.zcard(LATER_KEY)).toBe(0);
      await running.moveToCompleted('done', 'token', false);
      await finishJob(connection, running.id!, running.data);
      const [queued] = await feedRuns(queue, connection, 10);
      expect(queued?.jobId).toBe(`beta.${job.name}.${next.getTime()}`);
      // Its turn follows on from the one taken, an interval later.
      expect(queued!.data.turnStartMs).toBe(running.data.turnStartMs! + 30_000);
      expect(await connection.get(FRONTIER_KEY)).toBe(String(running.data.turnStartMs));
    });
  });

  it('follows on from the turn of the run a worker holds, before the worker has recorded its take', async () => {
    const { job } = await emptyQueue();
    await enqueueRun(
      queue,
      { company: 'gamma', job, firedAt: new Date(Date.now() - 60_000), intervalMs: 30_000 },
      { fairness, connection },
    );
    await withTaker(async (taker) => {
      await givenOut(1);
      const running = (await taker.getNextJob('token'))!;
      // The next firing comes between the worker's take and its record of it: the company gets no second go at that turn.
      await enqueueRun(
        queue,
        { company: 'gamma', job, firedAt: new Date(), intervalMs: 30_000 },
        { fairness, connection },
      );
      await running.moveToCompleted('done', 'token', false);
      await finishJob(connection, running.id!, running.data);
      const [queued] = await feedRuns(queue, connection, 10);
      // The grid's next point from half an interval on.
      expect(queued!.data.turnStartMs! - running.data.turnStartMs!).toBeGreaterThanOrEqual(15_000);
      expect(queued!.data.turnStartMs! - running.data.turnStartMs!).toBeLessThan(45_000);
    });
  });

  it("gives a firing's run the turn after its company's queued run when a worker takes that run as the firing queues", async () => {
    const { job } = await emptyQueue();
    await enqueueRun(
      queue,
      { company: 'gamma', job, firedAt: new Date(Date.now() - 60_000), intervalMs: 30_000 },
      { fairness, connection },
    );
    const [queued] = await queuedRuns(connection);
    await withTaker(async (taker) => {
      // The next firing reads gamma's run as queued; a worker takes that run before the firing's run is queued.
      const racing = connection.duplicate();
      const multi = racing.multi.bind(racing);
      let running: Awaited<ReturnType<typeof taker.getNextJob>>;
      racing.multi = ((...args: Parameters<typeof multi>) => {
        const tx = multi(...args);
        const exec = tx.exec.bind(tx);
        tx.exec = async () => {
          const read = await exec();
          if (!running) {
            await givenOut(1);
            running = await taker.getNextJob('token');
          }
          return read;
        };
        return tx;
      }) as typeof racing.multi;
      const run = { company: 'gamma', job, firedAt: new Date(), intervalMs: 30_000 };
      try {
        await enqueueRun(queue, run, { fairness, connection: racing });
      } finally {
        racing.disconnect();
      }
      expect(running!.id).toBe(queued!.jobId);
      // Not given out beside the running one.
      expect(await givenOut()).toEqual([]);
      await running!.moveToCompleted('done', 'token', false);
      await finishJob(connection, running!.id!, running!.data);
      const [kept] = await feedRuns(queue, connection, 10);
      expect(kept!.jobId).toBe(syncJobId(run));
      // Its turn is the grid's next point after the taken one, not the taken one again.
      expect(kept!.data.turnStartMs! - running!.data.turnStartMs!).toBeGreaterThanOrEqual(15_000);
      expect(kept!.data.turnStartMs! - running!.data.turnStartMs!).toBeLessThan(45_000);
      expect(Math.floor(kept!.order)).toBe(kept!.data.turnEndMs);
    });
  });

  it('gives a queued run the earlier turn of a firing on more frequent crons, and leaves it as it is otherwise', async () => {
    const { job, now } = await emptyQueue();
    await taken(connection, { company: 'delta', job: job.name, turnStartMs: now });
    try {
      // Queued under a cron every 10 minutes: its turn ends 15 to 25 minutes on.
      await enqueueRun(
        queue,
        { company: 'delta', job, firedAt: new Date(now), intervalMs: 600_000 },
        { fairness, connection },
      );
      const [before] = await queuedRuns(connection);
      // A firing on the same cron coalesces and changes nothing.
      await enqueueRun(
        queue,
        { company: 'delta', job, firedAt: new Date(now + 1_000), intervalMs: 600_000 },
        { fairness, connection },
      );
      expect(await queuedRuns(connection)).toEqual([before]);
      // The cron now fires every 30 seconds: the queued run takes the turn on that grid from 15 s on.
      await enqueueRun(
        queue,
        { company: 'delta', job, firedAt: new Date(now + 2_000), intervalMs: 30_000 },
        { fairness, connection },
      );
      const queued = await queuedRuns(connection);
      expect(queued.map((r) => r.jobId)).toEqual([before!.jobId]);
      const turn = queued[0]!.data;
      expect(turn.turnStartMs).toBeGreaterThanOrEqual(now + 15_000);
      expect(turn.turnStartMs).toBeLessThan(now + 45_000);
      expect(turn.turnEndMs).toBe(turn.turnStartMs! + 30_000);
      // It sorts by its new turn's end.
      expect(Math.floor(Number(await connection.zscore(DUE_KEY, `delta.${job.name}`)))).toBe(turn.turnEndMs);
    } finally {
      await emptySyncQueue(queue, connection);
    }
  });

  it('takes a fleet in the same order at every turn, whatever order its runs were queued in', async () => {
    const { job, now } = await emptyQueue();
    await connection.set(FRONTIER_KEY, String(now));
    // Four hundred companies take turns at a ten-second job: 25 ms apart, forty to a second.
    const fleet = Array.from({ length: 400 }, (_, i) => `t${i}`);
    const shares = sharesOf(fleet, job.name);
    const round = async (firedAt: number, order: string[]) => {
      for (const company of order)
        await enqueueRun(
          queue,
          { company, job, firedAt: new Date(firedAt), intervalMs: 10_000, share: shares.get(company) },
          { fairness, connection },
        );
      let takes: string[] = [];
      await withTaker(async (taker) => {
        takes = (await takeAll(queue, connection, taker)).map((t) => t.company);
      });
      return takes;
    };
    const first = await round(now, fleet);
    const second = await round(now + 10_000, [...fleet].reverse());
    const third = await round(
      now + 20_000,
      [...fleet].sort((a, b) => shareOf(a, 'shuffled') - shareOf(b, 'shuffled')),
    );
    expect(first).toHaveLength(400);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
  });

  it("queues a firing in the order of its companies' turns when some were taken since the last firing and the others not yet", async () => {
    const { job, now } = await emptyQueue();
    const intervalMs = 10_000;
    const fleet = Array.from({ length: 100 }, (_, i) => `o${i}`);
    const shares = sharesOf(fleet, job.name);
    // Every company took a turn an interval ago on its grid; the first half of the grid has taken its next one too.
    const gridStart = Math.floor((now - 3 * intervalMs) / intervalMs) * intervalMs;
    const lastStart = (company: string) =>
      gridStart + Math.floor(shares.get(company)! * intervalMs) + (shares.get(company)! < 0.5 ? intervalMs : 0);
    await connection.hset(TAKEN_KEY, Object.fromEntries(fleet.map((c) => [`${c}.${job.name}`, String(lastStart(c))])));
    await connection.set(FRONTIER_KEY, String(Math.max(...fleet.map(lastStart))));
    const firedAt = new Date(now);
    const ordered = await turnOrder(connection, job.name, intervalMs, shares, firedAt);
    expect(new Set(ordered)).toEqual(new Set(fleet));
    // A box behind its schedule takes each run as soon as it is queued.
    const takes: SyncJobData[] = [];
    await withTaker(async (taker) => {
      for (const company of ordered) {
        await enqueueRun(
          queue,
          { company, job, firedAt, intervalMs, share: shares.get(company) },
          { fairness, connection },
        );
        takes.push((await takeOne(queue, connection, taker))!);
      }
    });
    const ends = takes.map((t) => t.turnEndMs!);
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    // The second half of the grid, its turn still to come, goes before the first half's next one.
    expect(shares.get(takes[0]!.company)).toBeGreaterThanOrEqual(0.5);
    expect(shares.get(takes.at(-1)!.company)).toBeLessThan(0.5);
  });

  it('on a box behind its schedule, queues a run at once rather than after its share of the spread', async () => {
    const { job, now } = await emptyQueue();
    // The latest turn taken started a second ago: the box keeps up, and the run waits for its share.
    await connection.set(FRONTIER_KEY, String(now - 1_000));
    const fire = () =>
      enqueueRun(
        queue,
        { company: 'beta', job, firedAt: new Date(now), intervalMs: 60_000, startAfterMs: 20_000 },
        { fairness, connection },
      );
    await fire();
    expect([await connection.zcard(DUE_KEY), await connection.zcard(LATER_KEY)]).toEqual([0, 1]);
    await emptySyncQueue(queue, connection);
    // It started ten minutes ago: the box is behind, and the run is due at once.
    await connection.set(FRONTIER_KEY, String(now - 600_000));
    await fire();
    expect([await connection.zcard(DUE_KEY), await connection.zcard(LATER_KEY)]).toEqual([1, 0]);
    await emptySyncQueue(queue, connection);
  });
});
