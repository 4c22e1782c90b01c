import { QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { REDIS_GOODBYE_MS, settlesWithin } from '../redis-health.ts';
import { memberOf } from './scripts.ts';
import { createSyncQueue, finishRun, requeueRun, SYNC_QUEUE } from './sync-queue.ts';

/** What BullMQ gives as the reason of a job it failed for stalling more than `maxStalledCount` times. */
export const STALLED_TOO_OFTEN = 'job stalled more than allowable limit';
/** A job failed for stalling runs again this soon, instead of waiting for its next cron. */
export const STALLED_RETRY_DELAY_MS = 5_000;
/** How many times a run is given again after stalling too often: a job that keeps killing its workers stops. */
const MAX_STALLED_RETRIES = 3;
const SUFFIX = '.stalled';

/** The id of the retry of a job (BullMQ keeps one job per id, so every worker that notices adds it once). */
export function stalledRetryId(jobId: string): string | undefined {
  const retries = jobId.split(SUFFIX).length - 1;
  return retries >= MAX_STALLED_RETRIES ? undefined : `${jobId}${SUFFIX}`;
}

export interface StalledRetries {
  /** Closes its connections, cut after `waitMs` when Redis does not answer. */
  close(waitMs?: number): Promise<void>;
}

/**
 * BullMQ fails a job that stalled too often (its workers died or lost Redis each time), and it would wait for its
 * next cron, hours away for some jobs. This puts it back on the queue a few seconds later, from its checkpoints,
 * in the order it had and coalescing with its job's firings as any run does (`requeueRun`), and tells the operator
 * with one error line. A job that keeps stalling lets its company's job be given out again at its next cron.
 */
export async function retryStalledJobs(connection: Redis, log: Logger): Promise<StalledRetries> {
  const own = connection.duplicate();
  // Its outages are the same Redis's as the worker's, which logs them once.
  own.on('error', () => {});
  const events = new QueueEvents(SYNC_QUEUE, { connection: own });
  const queue = createSyncQueue(connection);
  events.on('error', () => {});
  queue.on('error', () => {});
  events.on('failed', ({ jobId, failedReason }) => {
    if (failedReason !== STALLED_TOO_OFTEN) return;
    void (async () => {
      const job = await queue.getJob(jobId);
      const retryId = stalledRetryId(jobId);
      if (!job) return;
      if (!retryId) {
        await finishRun(connection, memberOf(job.data.company, job.data.job), jobId);
        log.error(
          { jobId, job: job.data.job, company: job.data.company },
          'sync job stalled too often, again; it waits for its next cron',
        );
        return;
      }
      const context = { jobId, job: job.data.job, company: job.data.company };
      if (await requeueRun(connection, job, { jobId: retryId, delayMs: STALLED_RETRY_DELAY_MS })) {
        log.error(
          { ...context, retryJobId: retryId, delayMs: STALLED_RETRY_DELAY_MS },
          'sync job stalled too often (its workers died or lost Redis); it runs again soon from its checkpoints',
        );
        return;
      }
      log.error(
        context,
        'sync job stalled too often (its workers died or lost Redis); its next run, already queued, goes on from its checkpoints',
      );
    })().catch((err: unknown) => log.warn({ err, jobId }, 'could not put a stalled sync job back on the queue'));
  });
  await events.waitUntilReady();
  return {
    close: async (waitMs = REDIS_GOODBYE_MS) => {
      if (!(await settlesWithin(Promise.all([events.close(), queue.close()]), waitMs)))
        void events.disconnect().catch(() => undefined);
      own.disconnect();
    },
  };
}
