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

/**
 * How a saturated box shares itself. BullMQ takes lower priorities first and, within one, the oldest first: each
 * company's k-th job (`slot`, its place among the jobs) has the same priority as every other company's, so the
 * companies take turns; a backfill (a company's first sync, a full re-read) comes after every incremental run.
 */
export interface Fairness {
  /** The company has streams never synced yet: its runs are its backfill. */
  backfilling(company: string): boolean;
  /** The job's place among the jobs (0 first). */
  slotOf(job: string): number;
}

/** Incremental runs get 1 + slot, backfills this plus their slot: well within BullMQ's 2,097,151. */
export const BACKFILL_PRIORITY = 1000;

export function runPriority(run: ScheduledRun, fairness: Fairness): number {
  const slot = Math.min(BACKFILL_PRIORITY - 2, Math.max(0, fairness.slotOf(run.job.name)));
  return (run.job.fullRefresh || fairness.backfilling(run.company) ? BACKFILL_PRIORITY : 1) + slot;
}

/** Jobs queued and not yet taken, by when they were queued: the oldest one's wait is the schedule's delay. */
export const QUEUED_KEY = 'wfsync:sync:queued';

/**
 * Queues a run. A firing that finds the same job of the same company still queued or running coalesces with it
 * (BullMQ's deduplication, until that job ends), so the queue never holds more than companies × jobs.
 */
export async function enqueueRun(queue: Queue<SyncJobData>, run: ScheduledRun, fleet?: { fairness: Fairness; connection: Redis }): Promise<void> {
  const data: SyncJobData = {
    company: run.company,
    job: run.job.name,
    streams: [...run.job.streams],
    fullRefresh: run.job.fullRefresh,
    firedAt: run.firedAt.toISOString(),
    ...(run.dependencyBoundsMs ? { dependencyBoundsMs: { ...run.dependencyBoundsMs } } : {}),
  };
  const jobId = syncJobId(run);
  const delay = run.startAfterMs ?? 0;
  const added = await queue.add(run.job.name, data, {
    jobId,
    deduplication: { id: `${run.company}.${run.job.name}` },
    ...(fleet ? { priority: runPriority(run, fleet.fairness) } : {}),
    ...(delay > 0 ? { delay } : {}),
  });
  // A run waits from when it is due, not from its firing.
  if (fleet && added.id === jobId) await fleet.connection.zadd(QUEUED_KEY, added.timestamp + delay, jobId);
}

/** A worker took the job: it no longer waits. */
export async function taken(connection: Redis, jobId: string): Promise<void> {
  await connection.zrem(QUEUED_KEY, jobId);
}

/**
 * How long the oldest run still queued has waited, in seconds; null when none waits. An entry whose job left the
 * queue another way (removed from /queues, obliterated) is dropped on the way.
 */
export async function scheduleDelaySeconds(queue: Queue<SyncJobData>, client: Redis, now = Date.now()): Promise<number | null> {
  for (let tries = 0; tries < 100; tries++) {
    const [id, score] = await client.zrange(QUEUED_KEY, 0, 0, 'WITHSCORES');
    if (id === undefined) return null;
    const state = await queue.getJobState(id);
    if (state === 'waiting' || state === 'prioritized' || state === 'delayed' || state === 'waiting-children') return Math.max(0, (now - Number(score)) / 1000);
    await client.zrem(QUEUED_KEY, id);
  }
  return null;
}
