import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ScheduledRun } from './scheduler.ts';

/**
 * Whose turn it is on a saturated box. A company's incremental run of a job should start within two of the job's
 * intervals of a worker last taking that job of that company, and the queue takes the earliest such deadline first:
 * a company just served waits behind every company served before it, and a job of a short interval is not held to
 * the lateness of one of a long interval.
 * BullMQ orders by an integer priority, so the deadline is counted in seconds from an epoch kept in Redis and moved
 * on, with the queued runs' priorities, before the count runs out.
 */

/** When a worker last took each company's job, epoch ms, by `company.job`. */
export const TAKEN_KEY = 'wfsync:sync:taken';
/** The instant incremental runs' priorities count seconds from. */
export const EPOCH_KEY = 'wfsync:sync:epoch';
const REBASE_LOCK_KEY = 'wfsync:sync:epoch-lock';

/** Incremental runs take priorities 1 to 2^20 − 1 (twelve days of seconds); backfills come after them all. */
export const TURN_SPAN_S = 2 ** 20 - 1;
/** A new epoch starts a day back, so a deadline passed by up to a day still counts from it. */
const HEADROOM_MS = 86_400_000;

export function takenField(company: string, job: string): string {
  return `${company}.${job}`;
}

/** Intervals after its last take by which a company's run of a job should start. */
export const TURN_INTERVALS = 2;

/** The run's deadline: two intervals after its job was last taken for the company, else when it fell due. */
export function deadlineOf(run: Pick<ScheduledRun, 'firedAt' | 'startAfterMs' | 'intervalMs'>, lastTakenMs: number | null): number {
  const fell = run.firedAt.getTime() + (run.startAfterMs ?? 0);
  return lastTakenMs !== null && run.intervalMs ? lastTakenMs + TURN_INTERVALS * run.intervalMs : fell;
}

/** A deadline as a priority: seconds from the epoch, within 1 and TURN_SPAN_S. */
export function turnPriority(deadlineMs: number, epochMs: number): number {
  return Math.min(TURN_SPAN_S, Math.max(1, 1 + Math.floor((deadlineMs - epochMs) / 1000)));
}

/** The priority of a company's incremental run; starts an epoch when none is set, and moves it on when it runs out. */
export async function incrementalPriority(queue: Queue, connection: Redis, run: ScheduledRun, now = Date.now()): Promise<number> {
  const [taken, epoch] = await connection.multi().hget(TAKEN_KEY, takenField(run.company, run.job.name)).get(EPOCH_KEY).exec() ?? [];
  const lastTakenMs = taken?.[1] ? Number(taken[1]) : null;
  const deadline = deadlineOf(run, lastTakenMs);
  let epochMs = epoch?.[1] ? Number(epoch[1]) : null;
  if (epochMs === null) {
    await connection.set(EPOCH_KEY, String(now - HEADROOM_MS), 'NX');
    epochMs = Number(await connection.get(EPOCH_KEY));
  }
  if (turnPriority(deadline, epochMs) >= TURN_SPAN_S - HEADROOM_MS / 1000) epochMs = await rebase(queue, connection, epochMs, now);
  return turnPriority(deadline, epochMs);
}

/**
 * Moves the epoch to a day before `now` and the queued incremental runs' priorities with it, so their order holds.
 * One enqueuer does it at a time; the others go on with the epoch they read until it is done.
 */
export async function rebase(queue: Queue, connection: Redis, fromMs: number, now = Date.now()): Promise<number> {
  const toMs = now - HEADROOM_MS;
  if ((await connection.set(REBASE_LOCK_KEY, '1', 'PX', 60_000, 'NX')) !== 'OK') return fromMs;
  try {
    await connection.set(EPOCH_KEY, String(toMs));
    const shift = Math.floor((toMs - fromMs) / 1000);
    for (const job of await queue.getJobs(['prioritized', 'delayed'])) {
      if (job.priority >= 1 && job.priority <= TURN_SPAN_S) await job.changePriority({ priority: Math.max(1, job.priority - shift) });
    }
    return toMs;
  } finally {
    await connection.del(REBASE_LOCK_KEY);
  }
}
