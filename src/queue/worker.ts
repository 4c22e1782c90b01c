import { asResync } from './resync.ts';
import { DelayedError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { runStreams, selectStreams, type SyncSummary } from '../sync/runner.ts';
import type { CompanyContexts } from '../sync/context.ts';
import type { JobDef } from './job.ts';
import { fenced, takeFence } from '../warehouse/fencing.ts';
import { acquireRunLock } from '../locks/run-lock.ts';
import { redisStreamLocks } from '../locks/stream-lock.ts';
import { retryStalledJobs } from './stalled.ts';
import { REDIS_GOODBYE_MS, settlesWithin, type RedisHealth } from '../redis-health.ts';
import { DEFAULTS } from '../config.ts';
import { createSyncQueue, SYNC_QUEUE, taken, type SyncJobData } from './sync-queue.ts';
import { finishJob, startFeeder } from './feeder.ts';

export interface SyncWorkerOptions {
  env: CompanyContexts;
  /** The jobs a queued run may name (jobs/). */
  jobs: readonly JobDef[];
  connection: Redis;
  concurrency: number;
  /** BullMQ's job lock; a worker that dies is noticed after about this long and its job runs elsewhere. */
  lockDurationMs?: number;
  log: Logger;
  /** Logs Redis outages once each; without it every reconnection attempt is logged. */
  health?: RedisHealth;
  /** Resolves once the runs this process started have recorded their end (warehouse/runs.ts `runEndsRecorded`). */
  runsEnded?: () => Promise<void>;
}

export type SyncJobResult = SyncSummary | { skipped: string };

export interface SyncWorker {
  worker: Worker<SyncJobData, SyncJobResult>;
  /** Stops taking jobs; the running ones stop after the page they are writing, and go back on the queue. */
  close(): Promise<void>;
}

export function startSyncWorker(opts: SyncWorkerOptions): SyncWorker {
  const shutdown = new AbortController();
  const lockDuration = opts.lockDurationMs ?? DEFAULTS.jobLockMs;
  let running = 0;
  const worker = new Worker<SyncJobData, SyncJobResult>(
    SYNC_QUEUE,
    async (job, token) => {
      running++;
      try {
        return await processSyncJob(opts, job, token, shutdown.signal, lockDuration);
      } finally {
        running--;
      }
    },
    {
      connection: opts.connection,
      concurrency: opts.concurrency,
      lockDuration,
      stalledInterval: Math.max(1000, Math.floor(lockDuration / 2)),
      maxStalledCount: 2,
    },
  );
  if (opts.health) opts.health.watch(worker);
  else worker.on('error', (err) => opts.log.warn({ err: { message: err.message } }, 'queue connection error'));
  const feeder = feedWorker(opts, worker, () => worker.concurrency - running);
  worker.on('failed', (job, err) => opts.log.error({ jobId: job?.id, err }, 'sync job failed'));
  worker.on('stalled', (jobId) => opts.log.warn({ jobId }, 'sync job stalled; it runs again'));
  const stalled = retryStalledJobs(opts.connection, opts.log);
  stalled.catch((err: unknown) => opts.log.warn({ err }, 'could not watch for sync jobs that stalled too often'));
  return {
    worker,
    close: async () => {
      feeder.stop();
      shutdown.abort();
      await opts.runsEnded?.();
      // The runs have ended; what is left is Redis's part (jobs put back on the queue, locks released). A Redis that
      // is gone never answers it: the connections are cut instead, and the jobs' locks expire and their jobs run
      // again from their checkpoints on another worker.
      const gone = opts.health?.down || opts.connection.status !== 'ready';
      if (gone) opts.log.warn('Redis is out of reach; the running jobs go back to the queue when their locks expire');
      // Forced, BullMQ does not wait for the jobs' last words to Redis, and stops its timers.
      const answered = await settlesWithin(worker.close(gone), REDIS_GOODBYE_MS);
      if (!answered) {
        opts.log.warn(
          { waitedMs: REDIS_GOODBYE_MS },
          'Redis did not answer; the running jobs go back to the queue when their locks expire',
        );
        void worker.disconnect().catch(() => undefined);
      }
      // A Redis that did not answer the worker's goodbye (one shutting down) is not waited for a second time.
      const unanswered = gone || !answered || opts.connection.status !== 'ready';
      await settlesWithin(
        Promise.all([
          stalled.then((retries) => retries.close(unanswered ? 0 : REDIS_GOODBYE_MS)),
          feeder.close(unanswered ? 0 : REDIS_GOODBYE_MS),
        ]),
        REDIS_GOODBYE_MS,
      );
    },
  };
}

/**
 * Gives the worker queued runs as its slots free (feeder.ts), and, once BullMQ is done with a job for good
 * (completed, or failed with no attempt left), lets its company's job be given out again.
 */
function feedWorker(opts: SyncWorkerOptions, worker: Worker<SyncJobData, SyncJobResult>, free: () => number) {
  const queue = createSyncQueue(opts.connection);
  queue.on('error', () => {});
  const feeder = startFeeder({ queue, connection: opts.connection, free, log: opts.log });
  const finished = (job: Job<SyncJobData> | undefined) => {
    if (!job?.id) return feeder.feedSoon();
    void finishJob(opts.connection, job.id, job.data)
      .catch((err: unknown) => opts.log.debug({ err, jobId: job.id }, 'could not record a sync job finished'))
      .finally(feeder.feedSoon);
  };
  worker.on('completed', (job) => finished(job));
  // A job failed with attempts left is retried by BullMQ: it stays given out. `finishedOn` is set on the last failure.
  worker.on('failed', (job) => (job?.finishedOn ? finished(job) : feeder.feedSoon()));
  return {
    stop: feeder.stop,
    close: async (waitMs: number) => {
      feeder.stop();
      if (!(await settlesWithin(queue.close(), waitMs))) void queue.disconnect().catch(() => undefined);
    },
  };
}

async function processSyncJob(
  opts: SyncWorkerOptions,
  job: Job<SyncJobData, SyncJobResult>,
  token: string | undefined,
  signal: AbortSignal,
  lockDuration: number,
): Promise<SyncJobResult> {
  const log = opts.log.child({ jobId: job.id, job: job.data.job, company: job.data.company });
  await taken(opts.connection, job.data);
  // The companies table is read again when the job names a company added since the last refresh.
  const company = await opts.env.resolve(job.data.company);
  if (!company || company.paused) {
    const why = company ? 'company paused' : 'company not in the companies table';
    log.info(`${why}; this run is skipped`);
    return { skipped: why };
  }
  const { ctx } = company;
  const outcome = await acquireRunLock(opts.connection, job.data.company, job.data.job, String(job.id), lockDuration);
  if (!('lock' in outcome)) {
    log.info({ runningJobId: outcome.heldBy }, 'previous run of this job is still going; this run is skipped');
    return { skipped: `run ${outcome.heldBy} still going` };
  }
  const { lock } = outcome;
  try {
    // Pages of this run are refused by Postgres once a later run took the lock (fencing.ts).
    const fence = await takeFence(ctx.warehouse, job.data.company, job.data.job, String(job.id));
    const warehouse = fenced(ctx.warehouse, fence);
    // A company paused or removed meanwhile stops like a shutdown: after the page in flight.
    const runSignal = AbortSignal.any([signal, lock.lost, company.stopped]);
    const own = opts.jobs.find((j) => j.name === job.data.job)?.run;
    const summary = own
      ? await own({ ...ctx, warehouse, log, signal: runSignal })
      : await asResync(ctx.warehouse, job.data.company, job.data.job, () =>
          runStreams({ ...ctx, warehouse, log, signal: runSignal }, selectStreams(job.data.streams), {
            fullRefresh: job.data.fullRefresh,
            // Another job's run of one of its streams is waited for (the credentials job reads `individuals` first).
            locks: redisStreamLocks(opts.connection, { holder: String(job.id), ttlMs: lockDuration }),
            freshness: { firedAt: new Date(job.data.firedAt), dependencyBoundsMs: job.data.dependencyBoundsMs },
          }),
        );
    if (lock.lost.aborted || summary.streams.some((s) => s.fencedOff)) {
      log.warn({ fence: fence.token }, 'this run lost its lock and stopped writing; the run that holds it now goes on');
      throw new Error('run lost its lock to a later run');
    }
    if (signal.aborted && token) {
      // Shutting down: what was written is checkpointed; the rest runs again soon, on any worker.
      await job.moveToDelayed(Date.now() + 1000, token);
      throw new DelayedError();
    }
    if (summary.failed > 0) {
      const failed = summary.streams.filter((s) => s.outcome === 'failed');
      throw new Error(`streams failed: ${failed.map((s) => `${s.stream} (${s.error})`).join('; ')}`);
    }
    return summary;
  } finally {
    await lock.release();
  }
}
