import { UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { JobDef } from '../../src/queue/job.ts';
import { dropStaleRuns, feedRuns, startFeeder } from '../../src/queue/feeder.ts';
import { FED_KEY } from '../../src/queue/scripts.ts';
import { createSyncQueue, enqueueRun, queuedRuns, SYNC_QUEUE, type SyncJobData } from '../../src/queue/sync-queue.ts';
import { waitFor } from '../support/processes.ts';
import { emptySyncQueue } from '../support/sync-queue.ts';

/** How queued runs reach BullMQ: only as slots free, and a run given out whose job is gone stops holding its company. */

let redis: Redis;
let queue: ReturnType<typeof createSyncQueue>;
const job: JobDef = { name: 'time-off', cron: '', streams: ['time-off-requests'], description: 'time off' };
const fire = (company: string, atMs = Date.now()) => enqueueRun(queue, { company, job, firedAt: new Date(atMs) });

beforeAll(async () => {
  redis = new Redis(`${inject('redisUrl')}/10`, { maxRetriesPerRequest: null });
  queue = createSyncQueue(redis);
});
beforeEach(async () => {
  await redis.flushdb();
});
afterAll(async () => {
  await queue?.close();
  await redis?.quit();
});

describe('the feeder', () => {
  it('gives BullMQ only what the free slots can take, less what BullMQ already holds, in the queue order', async () => {
    const now = Date.now();
    for (const [i, company] of ['a', 'b', 'c', 'd', 'e'].entries()) await fire(company, now + i);
    let free = 2;
    let looks = 0;
    const feeder = startFeeder({
      queue,
      connection: redis,
      free: () => {
        looks++;
        return free;
      },
      log: pino({ level: 'silent' }),
    });
    try {
      await waitFor('two runs given out', async () => (await queue.getWaitingCount()) === 2, 10_000, 20);
      free = 3;
      await waitFor('a third', async () => (await queue.getWaitingCount()) === 3, 10_000, 20);
      // Many looks later, nothing more is given out: BullMQ holds what the three slots can take.
      const after = looks;
      await waitFor('more looks', async () => looks >= after + 5, 10_000, 20);
    } finally {
      feeder.stop();
    }
    expect(await queue.getWaitingCount()).toBe(3);
    const given = await queue.getJobs(['waiting'], 0, -1, true);
    expect(given.map((j) => j.data.company)).toEqual(['a', 'b', 'c']);
    expect((await queuedRuns(redis)).map((r) => r.data.company).sort()).toEqual(['d', 'e']);
    await emptySyncQueue(queue, redis);
  });

  it("puts two workers' feeds on BullMQ's wait list in the queue order, also when the first reaches BullMQ last", async () => {
    const now = Date.now();
    for (const [i, company] of ['a', 'b', 'c', 'd'].entries()) await fire(company, now + i);
    // The first feed's worker is slow to hand its runs to BullMQ; the second is not.
    const slow = createSyncQueue(redis.duplicate());
    const addBulk = slow.addBulk.bind(slow);
    slow.addBulk = async (jobs) => {
      await new Promise((r) => setTimeout(r, 300));
      return addBulk(jobs);
    };
    const other = redis.duplicate();
    try {
      const first = feedRuns(slow, redis, 2);
      await waitFor(
        'the first feed under way',
        async () => (await redis.hexists(FED_KEY, 'a.time-off')) === 1,
        5_000,
        5,
      );
      const second = await feedRuns(queue, other, 2);
      expect((await first).map((r) => r.data.company)).toEqual(['a', 'b']);
      expect(second.map((r) => r.data.company)).toEqual(['c', 'd']);
      const waiting = await queue.getJobs(['waiting'], 0, -1, true);
      expect(waiting.map((j) => j.data.company)).toEqual(['a', 'b', 'c', 'd']);
    } finally {
      await slow.close();
      other.disconnect();
    }
    await emptySyncQueue(queue, redis);
  });

  it('drops a run given out whose job completed or failed unseen at once, and one whose job is gone at the second look', async () => {
    for (const company of ['done', 'failed', 'gone', 'waits']) await fire(company);
    await feedRuns(queue, redis, 4);
    const worker = new Worker<SyncJobData>(SYNC_QUEUE, null, { connection: redis.duplicate() });
    try {
      const done = (await worker.getNextJob('t1'))!;
      await done.moveToCompleted('ok', 't1', false);
      const failed = (await worker.getNextJob('t2'))!;
      await failed.moveToFailed(new UnrecoverableError('no attempt left'), 't2', false);
      const gone = (await worker.getNextJob('t3'))!;
      await gone.moveToCompleted('ok', 't3', false);
      await gone.remove();
      const missing = new Map<string, string>();
      expect((await dropStaleRuns(queue, redis, missing)).sort()).toEqual([done.id, failed.id]);
      expect((await redis.hkeys(FED_KEY)).sort()).toEqual(['gone.time-off', 'waits.time-off']);
      expect(await dropStaleRuns(queue, redis, missing)).toEqual([gone.id]);
      // The run whose job waits in BullMQ keeps its company's job given out: a firing queues behind it.
      expect(await redis.hkeys(FED_KEY)).toEqual(['waits.time-off']);
      await fire('waits', Date.now() + 60_000);
      expect(await feedRuns(queue, redis, 10)).toEqual([]);
      // The others' companies take turns again.
      for (const company of ['done', 'failed', 'gone']) await fire(company, Date.now() + 60_000);
      expect((await feedRuns(queue, redis, 10)).map((r) => r.data.company).sort()).toEqual(['done', 'failed', 'gone']);
    } finally {
      await worker.close();
      await emptySyncQueue(queue, redis);
    }
  });
});
