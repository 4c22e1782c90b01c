import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ScheduledRun } from './scheduler.ts';
import { shareOf } from './spread.ts';

/**
 * Whose turn it is on a saturated box: fair queueing over every company's jobs. A company's job takes turns one of
 * the job's intervals long, and the queue takes the earliest-ending turn first. Past capacity every job of every
 * company is stretched by about the same factor, whether its interval is a minute or an hour, rather than every late
 * run being late by the same seconds.
 * A company's turns at a job fall on its own grid: one interval apart, offset by the company's share of the interval
 * (the share that spreads its runs, spread.ts). A turn follows the last one by an interval; a company behind (paused,
 * new, or with nothing queued when its turn came) takes the first point of its grid no more than an interval before
 * the frontier (the latest turn a worker took), so time away earns at most one turn. The grid keeps a job's companies
 * spread over its interval: without it every company joining at the frontier would share one instant, and a job's
 * whole fleet would be taken in a block while the shorter jobs' turns waited behind it.
 * BullMQ orders by an integer priority, so a turn's end is counted in seconds from an epoch kept in Redis and moved
 * on, with the queued runs' priorities, before the count runs out.
 */

/** Where each company's turn at a job last started (the run a worker last took), epoch ms, by `company.job`. */
export const TAKEN_KEY = 'wfsync:sync:taken';
/** The latest turn's start a worker took, epoch ms: where a company without a turn to follow on from starts. */
export const FRONTIER_KEY = 'wfsync:sync:frontier';
/** The instant incremental runs' priorities count seconds from. */
export const EPOCH_KEY = 'wfsync:sync:epoch';
const REBASE_LOCK_KEY = 'wfsync:sync:epoch-lock';

/** Incremental runs take priorities 1 to 2^20 − 1 (twelve days of seconds); backfills come after them all. */
export const TURN_SPAN_S = 2 ** 20 - 1;
/** A new epoch starts a day before the frontier, so a turn behind it by up to a day still counts from it. */
const HEADROOM_MS = 86_400_000;

export function takenField(company: string, job: string): string {
  return `${company}.${job}`;
}

/** A run's turn at its company's job: the queue takes the earliest `endMs` first. */
export interface Turn {
  startMs: number;
  endMs: number;
}

/** The run's turn: one interval after the last one's start, or its grid's first point an interval before the frontier. */
export function turnOf(
  run: { company: string; job: { name: string } } & Pick<ScheduledRun, 'firedAt' | 'startAfterMs' | 'intervalMs'>,
  lastStartMs: number | null,
  frontierMs: number | null,
): Turn {
  const intervalMs = run.intervalMs ?? 0;
  const earliest = frontierMs === null ? null : onGrid(frontierMs - intervalMs, intervalMs, shareOf(run.company, run.job.name));
  const after = [lastStartMs === null ? null : lastStartMs + intervalMs, earliest].filter((ms) => ms !== null);
  const startMs = after.length > 0 ? Math.max(...after) : run.firedAt.getTime() + (run.startAfterMs ?? 0);
  return { startMs, endMs: startMs + intervalMs };
}

/** The first instant from `atLeastMs` on that is `share` of an interval past a whole number of intervals. */
function onGrid(atLeastMs: number, intervalMs: number, share: number): number {
  if (!(intervalMs > 0)) return atLeastMs;
  const offsetMs = Math.floor(share * intervalMs);
  return offsetMs + Math.ceil((atLeastMs - offsetMs) / intervalMs) * intervalMs;
}

/** A turn's end as a priority: seconds from the epoch, within 1 and TURN_SPAN_S. */
export function turnPriority(endMs: number, epochMs: number): number {
  return Math.min(TURN_SPAN_S, Math.max(1, 1 + Math.floor((endMs - epochMs) / 1000)));
}

const numberOr = (reply: [Error | null, unknown] | undefined) => (reply?.[1] ? Number(reply[1]) : null);

/**
 * A company's incremental run's turn and priority; starts an epoch when none is set, and moves it on when it runs out.
 * `runningStartMs` is the turn of the company's run of the job a worker holds: its take may not be recorded yet.
 */
export async function incrementalTurn(queue: Queue, connection: Redis, run: ScheduledRun, runningStartMs?: number, now = Date.now()): Promise<{ turn: Turn; priority: number }> {
  const [last, frontier, epoch] = (await connection.multi().hget(TAKEN_KEY, takenField(run.company, run.job.name)).get(FRONTIER_KEY).get(EPOCH_KEY).exec()) ?? [];
  const recordedMs = numberOr(last);
  const lastStartMs = runningStartMs === undefined ? recordedMs : Math.max(recordedMs ?? runningStartMs, runningStartMs);
  const turn = turnOf(run, lastStartMs, numberOr(frontier));
  // Past capacity the frontier falls behind the clock: the epoch follows whichever is earlier.
  const base = Math.min(now, numberOr(frontier) ?? now);
  let epochMs = numberOr(epoch);
  if (epochMs === null) {
    await connection.set(EPOCH_KEY, String(base - HEADROOM_MS), 'NX');
    epochMs = Number(await connection.get(EPOCH_KEY));
  }
  if (turnPriority(turn.endMs, epochMs) >= TURN_SPAN_S - HEADROOM_MS / 1000) epochMs = await rebase(queue, connection, epochMs, base);
  return { turn, priority: turnPriority(turn.endMs, epochMs) };
}

/** Raises the frontier to a taken turn's start; a turn behind it leaves it. */
const RAISE_FRONTIER = `local at = tonumber(redis.call('GET', KEYS[1]))
if not at or tonumber(ARGV[1]) > at then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/** A worker took a run with a turn: the company's next turn at the job follows on from it. */
export function takeTurn(tx: ReturnType<Redis['multi']>, company: string, job: string, startMs: number): void {
  tx.hset(TAKEN_KEY, takenField(company, job), String(startMs)).eval(RAISE_FRONTIER, 1, FRONTIER_KEY, String(startMs));
}

/**
 * Moves the epoch to a day before `base` and the queued incremental runs' priorities with it, so their order holds.
 * One enqueuer does it at a time; the others go on with the epoch they read until it is done.
 */
export async function rebase(queue: Queue, connection: Redis, fromMs: number, base = Date.now()): Promise<number> {
  const toMs = base - HEADROOM_MS;
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
