import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { ScheduledRun } from './scheduler.ts';
import {
  BACKFILL_SLOTS,
  EPOCH_KEY,
  incrementalTurn,
  reprioritize,
  takeTurn,
  TURN_SPAN,
  turnPriority,
  type IncrementalTurn,
  type Turn,
} from './turns.ts';
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
  /** Where the run's turn starts (turns.ts), for a fleet's incremental run. */
  turnStartMs?: number;
  /** Where it ends: its priority counts this from the epoch (turns.ts). */
  turnEndMs?: number;
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
  return `${dedupIdOf(run)}.${run.firedAt.getTime()}`;
}

/** BullMQ's deduplication id of a company's runs of a job: at most one of them queued, and one kept behind a running one. */
export function dedupIdOf(run: Pick<ScheduledRun, 'company'> & { job: { name: string } }): string {
  return `${run.company}.${run.job.name}`;
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
 * How a saturated box shares itself. BullMQ takes lower priorities first and, within one, the oldest first. An
 * incremental run's priority is the end of its turn (turns.ts): the company's turns at a job come one interval apart.
 * A backfill (a company's first sync, a full re-read) comes after every incremental run, in the jobs' order, so a
 * first sync reads a dependency before the jobs that read it.
 */
export interface Fairness {
  /** The company has streams never synced yet: its runs are its backfill. */
  backfilling(company: string): boolean;
  /** The job's place among the jobs (0 first). */
  slotOf(job: string): number;
}

/** Backfills get this plus their slot: after every incremental run's turn, within BullMQ's 2,097,151. */
export const BACKFILL_PRIORITY = TURN_SPAN + 1;

export function isBackfill(run: ScheduledRun, fairness: Fairness): boolean {
  return Boolean(run.job.fullRefresh) || fairness.backfilling(run.company);
}

export function backfillPriority(run: ScheduledRun, fairness: Fairness): number {
  return BACKFILL_PRIORITY + Math.min(BACKFILL_SLOTS - 1, Math.max(0, fairness.slotOf(run.job.name)));
}

/** Jobs queued and not yet taken, by when they were queued: the oldest one's wait is the schedule's delay. */
export const QUEUED_KEY = 'wfsync:sync:queued';

/**
 * Queues a run. A firing that finds the same job of the same company still queued coalesces with it, and gives it its
 * own turn when that is earlier (the job's cron was made more frequent); one that finds it running is kept, and queued
 * once the running one ends (BullMQ's deduplication, `keepLastIfActive`): the queue never holds more than
 * companies × jobs, and a long run does not cost its company the next turn.
 */
export async function enqueueRun(
  queue: Queue<SyncJobData>,
  run: ScheduledRun,
  fleet?: { fairness: Fairness; connection: Redis },
): Promise<void> {
  const dedupId = dedupIdOf(run);
  const held = fleet || run.startAfterMs ? await heldRun(queue, dedupId) : undefined;
  const running = held?.active === true;
  const order: ({ priority: number } & Partial<IncrementalTurn>) | undefined =
    fleet &&
    (isBackfill(run, fleet.fairness)
      ? { priority: backfillPriority(run, fleet.fairness) }
      : await incrementalTurn(queue, fleet.connection, run, running ? held.job.data.turnStartMs : undefined));
  if (order?.turn && held && !held.active) await takeEarlierTurn(held.job, order.turn, order.priority);
  const data: SyncJobData = {
    company: run.company,
    job: run.job.name,
    streams: [...run.job.streams],
    fullRefresh: run.job.fullRefresh,
    firedAt: run.firedAt.toISOString(),
    ...(run.dependencyBoundsMs ? { dependencyBoundsMs: { ...run.dependencyBoundsMs } } : {}),
    ...(order?.turn ? { turnStartMs: order.turn.startMs, turnEndMs: order.turn.endMs } : {}),
  };
  const jobId = syncJobId(run);
  // A run kept behind a running one is queued when that one ends, by which time its spread share is long past; on a
  // box behind its schedule, the share would only make it miss its turn.
  const delay = run.startAfterMs && !running && !order?.behind ? run.startAfterMs : 0;
  await addRun(queue, data, { jobId, dedupId, priority: order?.priority, delay }, fleet?.connection);
  if (fleet && order?.turn && held && !held.active)
    await followTakenRun(queue, fleet.connection, run, data, String(held.job.id));
  if (fleet && order?.epochMs !== undefined && Number(await fleet.connection.get(EPOCH_KEY)) !== order.epochMs) {
    await reprioritize(queue, fleet.connection, dedupId, [jobId, ...(held ? [String(held.job.id)] : [])]);
  }
}

/**
 * Adds a run under its company's job's deduplication id. With `connection`, one that was queued (not coalesced with
 * a run queued or running) counts its wait from when it is due, not from its queueing. Answers whether it was queued.
 */
async function addRun(
  queue: Queue<SyncJobData>,
  data: SyncJobData,
  o: { jobId: string; dedupId: string; priority?: number; delay: number },
  connection?: Redis,
): Promise<boolean> {
  const added = await queue.add(data.job, data, {
    jobId: o.jobId,
    deduplication: { id: o.dedupId, keepLastIfActive: true },
    ...(o.priority ? { priority: o.priority } : {}),
    ...(o.delay > 0 ? { delay: o.delay } : {}),
  });
  const queued = added.id === o.jobId;
  if (connection && queued) await connection.zadd(QUEUED_KEY, added.timestamp + o.delay, o.jobId);
  return queued;
}

/**
 * Queues a run taken before again, as `jobId` (a stalled run's retry: stalled.ts), as a firing queues one: in the
 * turn it had, its priority counted from the epoch as it is now (the epoch may have moved while it ran), or the
 * backfill's priority it had, and under its company's job's deduplication id, so that a firing meanwhile coalesces
 * with it. A run of the job queued since (kept behind it while it ran) stands for it: answers false.
 */
export async function requeueRun(
  queue: Queue<SyncJobData>,
  connection: Redis,
  run: Job<SyncJobData>,
  o: { jobId: string; delay: number },
): Promise<boolean> {
  const { data } = run;
  const epoch = data.turnEndMs === undefined ? null : await connection.get(EPOCH_KEY);
  const priority = epoch === null ? run.priority : turnPriority(data.turnEndMs!, Number(epoch));
  const dedupId = dedupIdOf({ company: data.company, job: { name: data.job } });
  return addRun(queue, data, { ...o, dedupId, priority }, connection);
}

/** Sets the data of the run BullMQ keeps behind a running one (`keepLastIfActive`), if it is `jobId`. */
const SET_KEPT_RUN = `if redis.call('HGET', KEYS[1], 'jid') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[2])
return 1`;

/**
 * A worker may take the queued run this firing meant to coalesce with between the firing's read of it and its
 * queueing: BullMQ then keeps this run to queue once that one ends, with the turn the taken run had, and the company
 * would be taken twice for one turn, the second time as soon as the first ends. The run kept takes the turn after the
 * taken one instead.
 */
export async function followTakenRun(
  queue: Queue<SyncJobData>,
  connection: Redis,
  run: ScheduledRun,
  data: SyncJobData,
  takenId: string,
): Promise<void> {
  const jobId = syncJobId(run);
  const dedupId = dedupIdOf(run);
  const keptKey = queue.toKey(`dn:${dedupId}`);
  if ((await connection.hget(keptKey, 'jid')) !== jobId) return;
  const running = await queue.getJob(takenId);
  if (running?.data.turnStartMs === undefined || (data.turnStartMs ?? -Infinity) > running.data.turnStartMs) return;
  const next = await incrementalTurn(queue, connection, run, running.data.turnStartMs);
  const followed: SyncJobData = { ...data, turnStartMs: next.turn.startMs, turnEndMs: next.turn.endMs };
  if ((await connection.eval(SET_KEPT_RUN, 1, keptKey, jobId, JSON.stringify(followed))) !== 1) {
    // The taken run ended meanwhile, and this one was queued.
    const queued = await queue.getJob(jobId);
    if (!queued || (await queued.getState()) === 'active') return;
    await queued.updateData(followed);
  }
  // Its priority from its new turn, as every queued run's is counted (turns.ts).
  await reprioritize(queue, connection, dedupId, [jobId]);
}

/** The company's run of the job that is queued or that a worker holds, if any. */
async function heldRun(
  queue: Queue<SyncJobData>,
  dedupId: string,
): Promise<{ job: Job<SyncJobData>; active: boolean } | undefined> {
  const id = await queue.getDeduplicationJobId(dedupId);
  if (id === null) return undefined;
  const state = await queue.getJobState(id);
  if (state !== 'active' && state !== 'waiting' && state !== 'prioritized' && state !== 'delayed') return undefined;
  const job = await queue.getJob(id);
  return job ? { job, active: state === 'active' } : undefined;
}

/** A queued run whose turn ends later than `priority` says takes that turn instead. */
async function takeEarlierTurn(job: Job<SyncJobData>, turn: Turn, priority: number): Promise<void> {
  if (job.priority <= priority || job.data.turnStartMs === undefined) return;
  await job.updateData({ ...job.data, turnStartMs: turn.startMs, turnEndMs: turn.endMs });
  await job.changePriority({ priority });
}

/**
 * A worker took the job: it no longer waits, and its company's next turn at the job follows on from this one. A run
 * without a turn (a backfill, one run by hand) leaves the turns as they were.
 */
export async function taken(
  connection: Redis,
  jobId: string,
  run: Pick<SyncJobData, 'company' | 'job' | 'turnStartMs'>,
): Promise<void> {
  const tx = connection.multi().zrem(QUEUED_KEY, jobId);
  if (run.turnStartMs !== undefined) takeTurn(tx, run.company, run.job, run.turnStartMs);
  await tx.exec();
}

/**
 * How long the oldest run still queued has waited, in seconds; null when none waits. An entry whose job left the
 * queue another way (removed from /queues, obliterated) is dropped on the way.
 */
export async function scheduleDelaySeconds(
  queue: Queue<SyncJobData>,
  client: Redis,
  now = Date.now(),
): Promise<number | null> {
  for (let tries = 0; tries < 100; tries++) {
    const [id, score] = await client.zrange(QUEUED_KEY, 0, 0, 'WITHSCORES');
    if (id === undefined) return null;
    const state = await queue.getJobState(id);
    if (state === 'waiting' || state === 'prioritized' || state === 'delayed' || state === 'waiting-children')
      return Math.max(0, (now - Number(score)) / 1000);
    await client.zrem(QUEUED_KEY, id);
  }
  return null;
}
