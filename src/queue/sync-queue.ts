import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { ScheduledRun } from './scheduler.ts';
import { REDIS_STARTUP_MS, waitForRedis, type RedisHealth } from '../redis-health.ts';

export const SYNC_QUEUE = 'sync';

export interface SyncJobData {
  company: string;
  job: string;
  streams: string[];
  fullRefresh?: boolean;
  firedAt: string;
  /** ScheduledRun `dependencyBoundsMs`. */
  dependencyBoundsMs?: Record<string, number>;
}

/**
 * BullMQ needs `maxRetriesPerRequest: null` on connections that block. With `health`, the connection's errors
 * are logged once per outage (redis-health.ts) instead of at every reconnection attempt.
 */
export function redisConnection(url: string, health?: RedisHealth): Redis {
  const connection = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true });
  health?.watch(connection);
  return connection;
}

/** A connection to Redis once it answers; a Redis that does not answer at start-up stops the command with one line. */
export async function reachRedis(url: string, health: RedisHealth, timeoutMs = REDIS_STARTUP_MS): Promise<Redis> {
  const connection = redisConnection(url);
  // Until it answers, the one line that stops the command says it all.
  const quiet = () => {};
  connection.on('error', quiet);
  try {
    await waitForRedis(connection, url, timeoutMs);
    connection.off('error', quiet);
    health.watch(connection);
    return connection;
  } catch (e) {
    connection.disconnect();
    throw e;
  }
}

/**
 * The job id names the company, job and scheduled time, so every scheduler replica that fires the same run
 * produces the same id and BullMQ keeps one. BullMQ ids must not contain `:`.
 */
export function syncJobId(run: Pick<ScheduledRun, 'company' | 'firedAt'> & { job: { name: string } }): string {
  return `${run.company}.${run.job.name}.${run.firedAt.getTime()}`;
}

export function createSyncQueue(connection: Redis): Queue<SyncJobData> {
  return new Queue<SyncJobData>(SYNC_QUEUE, {
    connection,
    defaultJobOptions: {
      attempts: 3,
      backoff: { type: 'exponential', delay: 30_000 },
      removeOnComplete: { count: 1000, age: 7 * 86_400 },
      removeOnFail: { count: 5000 },
    },
  });
}

export async function enqueueRun(queue: Queue<SyncJobData>, run: ScheduledRun): Promise<void> {
  const data: SyncJobData = {
    company: run.company,
    job: run.job.name,
    streams: [...run.job.streams],
    fullRefresh: run.job.fullRefresh,
    firedAt: run.firedAt.toISOString(),
    ...(run.dependencyBoundsMs ? { dependencyBoundsMs: { ...run.dependencyBoundsMs } } : {}),
  };
  await queue.add(run.job.name, data, { jobId: syncJobId(run) });
}
