import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { retryStalledJobs, STALLED_TOO_OFTEN, stalledRetryId } from '../../src/queue/stalled.ts';
import type { JobDef } from '../../src/queue/job.ts';
import {
  createSyncQueue,
  enqueueRun,
  queuedRuns,
  SYNC_QUEUE,
  type Fairness,
  type SyncJobData,
} from '../../src/queue/sync-queue.ts';
import { feedRuns } from '../../src/queue/feeder.ts';
import { FED_KEY, LATER_KEY } from '../../src/queue/scripts.ts';
import { waitFor } from '../support/processes.ts';
import { emptySyncQueue } from '../support/sync-queue.ts';

const REDIS_DB = 12;
let redis: Redis;
beforeAll(async () => {
  redis = new Redis(`${inject('redisUrl')}/${REDIS_DB}`, { maxRetriesPerRequest: null });
  await redis.flushdb();
});
afterAll(async () => {
  await redis?.quit();
});

describe('a sync job that stalled too often', () => {
  it('runs again a few seconds later, at most three more times, and the operator is told', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const retries = await retryStalledJobs(redis, log);
    const queue = new Queue<SyncJobData>(SYNC_QUEUE, { connection: redis });
    const worker = new Worker<SyncJobData>(SYNC_QUEUE, null, { connection: redis.duplicate() });
    try {
      const data: SyncJobData = {
        company: 'acme',
        job: 'credentials',
        streams: ['individual-certifications'],
        firedAt: new Date().toISOString(),
      };
      // Given out to a worker, as the queue does.
      await queue.add('credentials', data, { jobId: 'acme.credentials.1' });
      await redis.hset(FED_KEY, 'acme.credentials', JSON.stringify({ jobId: 'acme.credentials.1', order: 1, data }));
      const job = (await worker.getNextJob('t1'))!;
      expect(job.id).toBe('acme.credentials.1');
      // What BullMQ's stalled-job check does to a job over maxStalledCount.
      await job.moveToFailed(new Error(STALLED_TOO_OFTEN), 't1', false);
      const [again] = await waitFor(
        'the run back on the queue',
        async () => {
          const runs = await queuedRuns(redis);
          return runs.length > 0 ? runs : undefined;
        },
        10_000,
        100,
      );
      expect(again!.jobId).toBe('acme.credentials.1.stalled');
      expect(again!.data).toMatchObject(data);
      // Held a few seconds, and no longer given out.
      const heldUntil = Number(await redis.zscore(LATER_KEY, 'acme.credentials'));
      expect(heldUntil).toBeGreaterThan(Date.now());
      expect(await redis.hexists(FED_KEY, 'acme.credentials')).toBe(0);
      expect(lines.join('')).toMatch(/stalled too often.*runs again soon/);
      expect(stalledRetryId('a.stalled.stalled')).toBe('a.stalled.stalled.stalled');
      expect(stalledRetryId('a.stalled.stalled.stalled')).toBeUndefined();
    } finally {
      await worker.close();
      await queue.close();
      await retries.close();
    }
  });
});

describe('a stalled run put back on a saturated queue', () => {
  const job: JobDef = {
    name: 'credentials',
    cron: '',
    streams: ['individual-certifications'],
    description: 'certifications',
  };
  const fairness: Fairness = { backfilling: () => false, slotOf: () => 0 };
  /** A firing of the job for `company` at `atMs`: its turn is the minute after. */
  const fire = (company: string, atMs: number) =>
    enqueueRun(
      queue,
      { company, job, firedAt: new Date(atMs), intervalMs: 60_000, share: 0 },
      { fairness, connection: redis },
    );
  let queue: ReturnType<typeof createSyncQueue>;

  it('waits for its turn among the queued runs, and a firing of its job meanwhile coalesces with it', async () => {
    await redis.flushdb();
    const retries = await retryStalledJobs(redis, pino({ level: 'silent' }));
    queue = createSyncQueue(redis);
    const worker = new Worker<SyncJobData>(SYNC_QUEUE, null, { connection: redis.duplicate() });
    try {
      const now = Date.now();
      await fire('acme', now);
      await feedRuns(queue, redis, 1);
      const stalled = (await worker.getNextJob('t0'))!;
      // While acme's run runs, beta's and gamma's turns (ending before acme's) and delta's (after) are queued.
      await fire('beta', now - 30_000);
      await fire('gamma', now - 20_000);
      await fire('delta', now + 30_000);
      // What BullMQ's worker does to a job its stalled-job check marked failed: no attempt left, whatever its options.
      await stalled.moveToFailed(new UnrecoverableError(STALLED_TOO_OFTEN), 't0', false);
      const again = await waitFor(
        'the run back on the queue',
        async () => (await queuedRuns(redis)).find((r) => r.jobId === `${stalled.id}.stalled`),
        10_000,
        100,
      );
      await fire('acme', now + 60_000);
      const acmeRuns = (await queuedRuns(redis)).filter((r) => r.data.company === 'acme');
      expect(acmeRuns.map((r) => r.jobId)).toEqual([again.jobId]);
      // Its hold over, the runs are given out one at a time, as slots free.
      await redis.zadd(LATER_KEY, 0, 'acme.credentials');
      const takes: string[] = [];
      for (let i = 1; i <= 5; i++) {
        await feedRuns(queue, redis, 1);
        const next = await worker.getNextJob(`t${i}`, { block: false });
        if (next) takes.push(next.data.company);
      }
      expect(takes).toEqual(['beta', 'gamma', 'acme', 'delta']);
    } finally {
      await worker.close();
      await emptySyncQueue(queue, redis);
      await queue.close();
      await retries.close();
    }
  });
});
