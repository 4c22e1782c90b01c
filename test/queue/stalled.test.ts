import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { retryStalledJobs, STALLED_TOO_OFTEN, stalledRetryId } from '../../src/queue/stalled.ts';
import { SYNC_QUEUE, type SyncJobData } from '../../src/queue/sync-queue.ts';
import { waitFor } from '../support/processes.ts';

const REDIS_DB = 5;
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
      await queue.add('credentials', data, { jobId: 'acme.credentials.1' });
      const job = (await worker.getNextJob('t1'))!;
      expect(job.id).toBe('acme.credentials.1');
      // What BullMQ's stalled-job check does to a job over maxStalledCount.
      await job.moveToFailed(new Error(STALLED_TOO_OFTEN), 't1', false);
      const again = await waitFor(
        'the job back on the queue',
        async () => queue.getJob('acme.credentials.1.stalled'),
        10_000,
        100,
      );
      expect(again.data).toEqual(data);
      expect(await again.getState()).toBe('delayed');
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
