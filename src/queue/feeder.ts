import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { DUE_KEY, FED_KEY, FEEDING_KEY, LATER_KEY, memberOf, QUEUED_KEY, RUNS_KEY, runScript } from './scripts.ts';
import { finishRun, type QueuedRun, type SyncJobData } from './sync-queue.ts';

/**
 * BullMQ is given only what a worker's free slots can take at once, in the queue's order (feed.lua): its wait list
 * never holds more, so the order the workers take is the queue's, whatever BullMQ's own.
 */

/** How often a worker looks for runs to take besides when one of its jobs ends: a run queued elsewhere waits no longer. */
export const FEED_EVERY_MS = 300;
/** How often the runs given out are checked for a BullMQ job that is gone or ended unseen. */
export const STALE_CHECK_MS = 15_000;

/**
 * How long a feed holds the others back at most: a worker that died between giving runs out and handing them to
 * BullMQ holds no feed for longer (its runs are dropped by the stale check).
 */
const FEED_HOLD_MS = 5_000;
/** How soon a feed that found another under way looks again. */
const FEED_RETRY_MS = 5;

/**
 * Gives up to `free` queued runs to BullMQ, lowest order first; answers them. One feed at a time across the workers
 * (feed.lua holds the others back until these runs are on BullMQ's wait list): otherwise a later feed could reach the
 * wait list first, and its later turns be taken first. A feed that waits past FEED_HOLD_MS gives nothing out.
 */
export async function feedRuns(queue: Queue<SyncJobData>, connection: Redis, free: number): Promise<QueuedRun[]> {
  if (free <= 0) return [];
  const token = randomUUID();
  const until = Date.now() + FEED_HOLD_MS;
  for (;;) {
    const keys = [DUE_KEY, RUNS_KEY, LATER_KEY, FED_KEY, QUEUED_KEY, FEEDING_KEY];
    const entries = (await runScript(connection, 'feed', keys, [free, Date.now(), token, FEED_HOLD_MS])) as
      | string[]
      | null;
    if (entries !== null) return entries.length > 0 ? handOver(queue, connection, entries, token) : [];
    if (Date.now() > until) return [];
    await sleep(FEED_RETRY_MS);
  }
}

/** Puts the runs given out on BullMQ's wait list, in their order, then lets the next feed go (release-feed.lua). */
async function handOver(
  queue: Queue<SyncJobData>,
  connection: Redis,
  entries: string[],
  token: string,
): Promise<QueuedRun[]> {
  const runs = entries.map((e) => JSON.parse(e) as QueuedRun);
  try {
    await queue.addBulk(runs.map((r) => ({ name: r.data.job, data: r.data, opts: { jobId: r.jobId } })));
  } finally {
    await runScript(connection, 'releaseFeed', [FEEDING_KEY], [token]);
  }
  return runs;
}

/** Done with a BullMQ job for good: its run is no longer given out. */
export function finishJob(connection: Redis, jobId: string, data: SyncJobData): Promise<boolean> {
  return finishRun(connection, memberOf(data.company, data.job), jobId);
}

/**
 * A run given out whose BullMQ job ended without a worker seeing it (a worker that died between its end and its
 * word), or is gone (removed or obliterated from /queues), no longer holds its company's job. A job not found is
 * dropped only when it was not found at the last check either: it may be on its way to BullMQ.
 */
export async function dropStaleRuns(
  queue: Queue<SyncJobData>,
  connection: Redis,
  missing: Map<string, string>,
): Promise<string[]> {
  const fed = await connection.hgetall(FED_KEY);
  const dropped: string[] = [];
  const seen = new Set<string>();
  await Promise.all(
    Object.entries(fed).map(async ([member, entry]) => {
      const { jobId } = JSON.parse(entry) as QueuedRun;
      const state = await queue.getJobState(jobId);
      const gone = state === 'unknown';
      if (gone) seen.add(member);
      const stale = state === 'completed' || state === 'failed' || (gone && missing.get(member) === jobId);
      if (gone) missing.set(member, jobId);
      if (stale && (await finishRun(connection, member, jobId))) dropped.push(jobId);
    }),
  );
  for (const member of missing.keys()) if (!seen.has(member)) missing.delete(member);
  return dropped;
}

/** Drops the stale runs given out (`dropStaleRuns`), one check at a time: with Redis away, a check waits for it. */
function staleCheck(o: { queue: Queue<SyncJobData>; connection: Redis; log: Logger }): () => void {
  const missing = new Map<string, string>();
  let checking = false;
  return () => {
    if (checking) return;
    checking = true;
    void dropStaleRuns(o.queue, o.connection, missing)
      .then((dropped) => {
        if (dropped.length > 0)
          o.log.warn({ jobIds: dropped }, 'sync jobs ended or removed unseen; their companies take turns again');
      })
      .catch((err: unknown) => o.log.debug({ err }, 'could not check the runs given to the workers'))
      .finally(() => {
        checking = false;
      });
  };
}

export interface Feeder {
  /** Gives out runs now if a slot is free (a job ended). */
  feedSoon(): void;
  stop(): void;
}

/**
 * Gives runs to BullMQ as `free()` slots of this worker open (less those BullMQ already holds for any worker): at
 * once, whenever asked, and every FEED_EVERY_MS; and checks the runs given out every STALE_CHECK_MS.
 */
export function startFeeder(o: {
  queue: Queue<SyncJobData>;
  connection: Redis;
  free: () => number;
  log: Logger;
}): Feeder {
  let feeding: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const feedOnce = async () => {
    const local = o.free();
    if (local <= 0) return;
    const free = local - (await o.queue.getWaitingCount());
    await feedRuns(o.queue, o.connection, free);
  };
  const feedSoon = () => {
    if (stopped) return;
    if (feeding) {
      again = true;
      return;
    }
    feeding = feedOnce()
      // An outage is logged once by the connection's health; the next timer tries again.
      .catch((err: unknown) => o.log.debug({ err }, 'could not give queued runs to the workers'))
      .finally(() => {
        feeding = undefined;
        if (again) {
          again = false;
          feedSoon();
        }
      });
  };
  const check = staleCheck(o);
  const timers = [setInterval(feedSoon, FEED_EVERY_MS), setInterval(check, STALE_CHECK_MS)];
  for (const t of timers) t.unref();
  feedSoon();
  return {
    feedSoon,
    stop: () => {
      stopped = true;
      for (const t of timers) clearInterval(t);
    },
  };
}
