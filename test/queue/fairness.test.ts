import { type Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import type { JobDef } from '../../src/queue/job.ts';
import { backfillingCompanies } from '../../src/queue/fairness.ts';
import {
  createSyncQueue,
  enqueueRun,
  followTakenRun,
  scheduleDelaySeconds,
  SYNC_QUEUE,
  syncJobId,
  taken,
  type Fairness,
  type SyncJobData,
} from '../../src/queue/sync-queue.ts';
import { shareOf, sharesOf } from '../../src/queue/spread.ts';
import {
  EPOCH_KEY,
  FRONTIER_KEY,
  rebase,
  TAKEN_KEY,
  TURN_SPAN,
  turnOf,
  turnOrder,
  turnPriority,
} from '../../src/queue/turns.ts';
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

/** An empty queue and no turn taken yet: the job to queue runs of, and when. */
async function emptyQueue(): Promise<{ job: JobDef; now: number }> {
  await queue.obliterate({ force: true });
  await connection.del(FRONTIER_KEY, TAKEN_KEY);
  return { job: incremental[0]!, now: Date.now() };
}

describe('a saturated queue', () => {
  it('knows which companies backfill from their runs', async () => {
    expect([...(await backfillingCompanies(wh, ['alpha', 'beta', 'gamma']))]).toEqual(['alpha']);
  });

  it('takes the company served longest ago first, incremental runs before a backfill queued earlier, and coalesces firings of a queued job', async () => {
    const intervalMs = 600_000;
    const firedAt = new Date(Math.floor(Date.now() / intervalMs) * intervalMs - 3_600_000);
    // beta's turns at every job last started a minute before the firing, gamma's ten minutes before, on a grid of whole
    // intervals: gamma's next turn ends first.
    for (const job of incremental) {
      await taken(connection, 'x', { company: 'beta', job: job.name, turnStartMs: firedAt.getTime() - 60_000 });
      await taken(connection, 'x', { company: 'gamma', job: job.name, turnStartMs: firedAt.getTime() - intervalMs });
    }
    // alpha's backfill is queued first, then beta's and gamma's every job.
    for (const company of ['alpha', 'beta', 'gamma'])
      for (const job of incremental)
        await enqueueRun(queue, { company, job, firedAt, intervalMs, share: 0 }, { fairness, connection });
    const total = 3 * incremental.length;
    expect(await queue.count()).toBe(total);
    // The next firings find every job still queued: nothing more is queued.
    const later = new Date(firedAt.getTime() + 120_000);
    for (const company of ['alpha', 'beta', 'gamma'])
      for (const job of incremental)
        await enqueueRun(queue, { company, job, firedAt: later, intervalMs, share: 0 }, { fairness, connection });
    expect(await queue.count()).toBe(total);

    const order = (await queue.getJobs(['prioritized', 'waiting'], 0, -1, true)).map(
      (j) => `${j.data.company}/${j.data.job}`,
    );
    const expected = [
      ...incremental.map((j) => `gamma/${j.name}`),
      ...incremental.map((j) => `beta/${j.name}`),
      ...incremental.map((j) => `alpha/${j.name}`),
    ];
    expect(order).toEqual(expected);
  });

  it('says how long the oldest queued run has waited, and nothing once the queue is empty', async () => {
    const [oldest] = await connection.zrange('wfsync:sync:queued', 0, 0, 'WITHSCORES').then((r) => [Number(r[1])]);
    const delay = await scheduleDelaySeconds(queue, connection, oldest! + 90_000);
    expect(delay).toBe(90);
    await queue.obliterate({ force: true });
    expect(await scheduleDelaySeconds(queue, connection)).toBeNull();
    expect(await connection.zcard('wfsync:sync:queued')).toBe(0);
  });

  it('holds a spread run until its share of the window is up, and counts its wait from then', async () => {
    const firedAt = new Date();
    await enqueueRun(
      queue,
      { company: 'beta', job: incremental[0]!, firedAt, startAfterMs: 60_000 },
      { fairness, connection },
    );
    const [job] = await queue.getJobs(['delayed']);
    expect(job?.data.company).toBe('beta');
    // Due in a minute: nothing has waited yet, and a minute and a half after its firing it has waited 30 s.
    expect(await scheduleDelaySeconds(queue, connection)).toBe(0);
    expect(await scheduleDelaySeconds(queue, connection, job!.timestamp + 90_000)).toBe(30);
    await queue.obliterate({ force: true });
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
    await queue.obliterate({ force: true });
    await connection.del(FRONTIER_KEY, TAKEN_KEY);
    const now = Date.now();
    const job = incremental[0]!;
    // beta's turn started 6 s before gamma's, the latest taken, each on its grid; delta has never run this job.
    const minute = Math.floor(now / 60_000) * 60_000;
    const share = { beta: 0.1, gamma: 0.2, delta: 0.5 };
    await taken(connection, 'x', { company: 'beta', job: job.name, turnStartMs: minute + 6_000 });
    await taken(connection, 'x', { company: 'gamma', job: job.name, turnStartMs: minute + 12_000 });
    for (const company of ['gamma', 'beta', 'delta'] as const)
      await enqueueRun(
        queue,
        { company, job, firedAt: new Date(now), intervalMs: 60_000, share: share[company] },
        { fairness, connection },
      );
    const order = (await queue.getJobs(['prioritized'], 0, -1, true)).map((j) => j.data.company);
    expect(order).toEqual(['delta', 'beta', 'gamma']);
    await queue.obliterate({ force: true });
  });

  it('queues a firing that finds its job running once that run ends, at once, and counts the next turn from the take', async () => {
    await queue.obliterate({ force: true });
    const job = incremental[0]!;
    await enqueueRun(
      queue,
      { company: 'beta', job, firedAt: new Date(Date.now() - 60_000), intervalMs: 30_000 },
      { fairness, connection },
    );
    await withTaker(async (taker) => {
      const running = (await taker.getNextJob('token'))!;
      await taken(connection, String(running.id), running.data);
      // A firing while it runs, with a spread share: not coalesced into the running job, and not queued yet.
      const next = new Date();
      await enqueueRun(
        queue,
        { company: 'beta', job, firedAt: next, intervalMs: 30_000, startAfterMs: 60_000 },
        { fairness, connection },
      );
      expect(await queue.getJobCounts('prioritized', 'delayed', 'waiting')).toEqual({
        prioritized: 0,
        delayed: 0,
        waiting: 0,
      });
      await running.moveToCompleted('done', 'token', false);
      const [queued] = await queue.getJobs(['prioritized', 'waiting']);
      expect(queued?.id).toBe(`beta.${job.name}.${next.getTime()}`);
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
      const running = (await taker.getNextJob('token'))!;
      // The next firing comes between the worker's take and its record of it: the company gets no second go at that turn.
      await enqueueRun(
        queue,
        { company: 'gamma', job, firedAt: new Date(), intervalMs: 30_000 },
        { fairness, connection },
      );
      await running.moveToCompleted('done', 'token', false);
      const [queued] = await queue.getJobs(['prioritized', 'waiting']);
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
    const [queued] = await queue.getJobs(['prioritized']);
    await withTaker(async (taker) => {
      // The next firing read gamma's run as queued and took the same turn to coalesce with it; a worker takes that run
      // before the firing's run reaches the queue, and BullMQ keeps the firing's run for when the taken one ends.
      const running = (await taker.getNextJob('token'))!;
      const run = { company: 'gamma', job, firedAt: new Date(), intervalMs: 30_000 };
      const data = { ...queued!.data, firedAt: run.firedAt.toISOString() };
      await queue.add(job.name, data, {
        jobId: syncJobId(run),
        deduplication: { id: `gamma.${job.name}`, keepLastIfActive: true },
        priority: queued!.priority,
      });
      await followTakenRun(queue, connection, run, data, String(running.id));
      await running.moveToCompleted('done', 'token', false);
      const [kept] = await queue.getJobs(['prioritized']);
      expect(kept!.id).toBe(syncJobId(run));
      // Its turn is the grid's next point after the taken one, not the taken one again.
      expect(kept!.data.turnStartMs! - running.data.turnStartMs!).toBeGreaterThanOrEqual(15_000);
      expect(kept!.data.turnStartMs! - running.data.turnStartMs!).toBeLessThan(45_000);
      expect(kept!.priority).toBe(turnPriority(kept!.data.turnEndMs!, Number(await connection.get(EPOCH_KEY))));
      expect(kept!.priority).toBeGreaterThan(queued!.priority);
    });
  });

  it('gives a queued run the earlier turn of a firing on more frequent crons, and leaves it as it is otherwise', async () => {
    const { job, now } = await emptyQueue();
    await connection.set(EPOCH_KEY, String(now - 60_000));
    await taken(connection, 'x', { company: 'delta', job: job.name, turnStartMs: now });
    try {
      // Queued under a cron every 10 minutes: its turn ends 15 to 25 minutes on.
      await enqueueRun(
        queue,
        { company: 'delta', job, firedAt: new Date(now), intervalMs: 600_000 },
        { fairness, connection },
      );
      const [before] = await queue.getJobs(['prioritized']);
      // A firing on the same cron coalesces and changes nothing.
      await enqueueRun(
        queue,
        { company: 'delta', job, firedAt: new Date(now + 1_000), intervalMs: 600_000 },
        { fairness, connection },
      );
      expect((await queue.getJob(before!.id!))!.priority).toBe(before!.priority);
      // The cron now fires every 30 seconds: the queued run takes the turn on that grid from 15 s on.
      await enqueueRun(
        queue,
        { company: 'delta', job, firedAt: new Date(now + 2_000), intervalMs: 30_000 },
        { fairness, connection },
      );
      const queued = await queue.getJobs(['prioritized']);
      expect(queued.map((j) => j.id)).toEqual([before!.id]);
      const turn = queued[0]!.data;
      expect(turn.turnStartMs).toBeGreaterThanOrEqual(now + 15_000);
      expect(turn.turnStartMs).toBeLessThan(now + 45_000);
      expect(turn.turnEndMs).toBe(turn.turnStartMs! + 30_000);
      // Priorities count milliseconds: the earlier turn comes that many places ahead.
      expect(before!.priority - queued[0]!.priority).toBe(before!.data.turnEndMs! - turn.turnEndMs!);
    } finally {
      await queue.obliterate({ force: true });
    }
  });

  it('takes a fleet in the same order at every turn, whatever order its runs were queued in', async () => {
    const { job, now } = await emptyQueue();
    await connection.set(EPOCH_KEY, String(now - 60_000));
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
      const takes: string[] = [];
      await withTaker(async (taker) => {
        for (
          let next = await taker.getNextJob('token', { block: false });
          next;
          next = await taker.getNextJob('token', { block: false })
        ) {
          await taken(connection, String(next.id), next.data);
          await next.moveToCompleted('done', 'token', false);
          takes.push(next.data.company);
        }
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
    await connection.set(EPOCH_KEY, String(now - 120_000));
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
        const next = await taker.getNextJob('token', { block: false });
        await next!.moveToCompleted('done', 'token', false);
        takes.push(next!.data);
      }
    });
    const ends = takes.map((t) => t.turnEndMs!);
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    // The second half of the grid, its turn still to come, goes before the first half's next one.
    expect(shares.get(takes[0]!.company)).toBeGreaterThanOrEqual(0.5);
    expect(shares.get(takes.at(-1)!.company)).toBeLessThan(0.5);
  });

  it('on a box behind its schedule, queues a run at once rather than after its share of the window', async () => {
    const { job, now } = await emptyQueue();
    // The latest turn taken started a second ago: the box keeps up, and the run waits for its share.
    await connection.set(FRONTIER_KEY, String(now - 1_000));
    await enqueueRun(
      queue,
      { company: 'beta', job, firedAt: new Date(now), intervalMs: 60_000, startAfterMs: 20_000 },
      { fairness, connection },
    );
    expect(await queue.getJobCounts('prioritized', 'delayed')).toEqual({ prioritized: 0, delayed: 1 });
    await queue.obliterate({ force: true });
    // It started ten minutes ago: the box is behind, and the run is queued at once.
    await connection.set(FRONTIER_KEY, String(now - 600_000));
    await enqueueRun(
      queue,
      { company: 'beta', job, firedAt: new Date(now), intervalMs: 60_000, startAfterMs: 20_000 },
      { fairness, connection },
    );
    expect(await queue.getJobCounts('prioritized', 'delayed')).toEqual({ prioritized: 1, delayed: 0 });
    await queue.obliterate({ force: true });
  });

  it('moves the epoch on once the frontier is twenty minutes past it, and every queued turn, delayed or held behind a running run, with it', async () => {
    const { job, now } = await emptyQueue();
    await connection.set(EPOCH_KEY, String(now - 15 * 60_000));
    await connection.set(FRONTIER_KEY, String(now));
    const fire = (company: string, intervalMs: number, startAfterMs?: number, at = now, share?: number) =>
      enqueueRun(
        queue,
        { company, job, firedAt: new Date(at), intervalMs, startAfterMs, share },
        { fairness, connection },
      );
    const turnsOf = async () =>
      (await queue.getJobs(['prioritized', 'delayed'])).map((j) => ({
        company: j.data.company,
        priority: j.priority,
        endMs: j.data.turnEndMs!,
      }));
    await withTaker(async (taker) => {
      // epsilon's run is running, and a firing is held behind it.
      await fire('epsilon', 60_000);
      const running = (await taker.getNextJob('token'))!;
      await taken(connection, String(running.id), running.data);
      await fire('epsilon', 60_000, undefined, now + 1_000);
      // gamma and beta are queued, delta waits for its share. beta's half-hour turn starts five minutes ago and ends
      // 25 minutes on, past the span: it takes the last priority.
      await fire('gamma', 600_000);
      const halfHour = 1_800_000;
      await fire('beta', halfHour, undefined, now, (((now - 300_000) % halfHour) + 1) / halfHour);
      await fire('delta', 600_000, 60_000);
      const before = await turnsOf();
      expect(before.find((t) => t.company === 'beta')!.priority).toBe(TURN_SPAN);
      expect(await queue.getJobCounts('delayed')).toEqual({ delayed: 1 });
      // The frontier moves on ten minutes: the epoch follows it, and every turn is counted from there.
      const epoch = await rebase(queue, connection, now - 15 * 60_000, now + 10 * 60_000);
      expect(epoch).toBe(now);
      expect(Number(await connection.get(EPOCH_KEY))).toBe(now);
      const after = await turnsOf();
      expect(after).toHaveLength(3);
      for (const t of after) expect(t.priority).toBe(turnPriority(t.endMs, epoch));
      expect(after.find((t) => t.company === 'beta')!.priority).toBeLessThan(TURN_SPAN);
      // The held run is queued with its turn counted from the new epoch once the running one ends.
      await running.moveToCompleted('done', 'token', false);
      const held = (await queue.getJobs(['prioritized'])).find((j) => j.data.company === 'epsilon')!;
      expect(held.data.turnStartMs).toBe(running.data.turnStartMs! + 60_000);
      expect(held.priority).toBe(turnPriority(held.data.turnEndMs!, epoch));
    });
    // A firing once the frontier is more than twenty minutes past the epoch moves it to ten minutes before the frontier.
    const frontier = Date.now() - 5_000;
    await connection.set(EPOCH_KEY, String(frontier - 21 * 60_000));
    await connection.set(FRONTIER_KEY, String(frontier));
    await fire('gamma', 600_000, undefined, Date.now());
    expect(Number(await connection.get(EPOCH_KEY))).toBe(frontier - 10 * 60_000);
    await queue.obliterate({ force: true });
  });
});
