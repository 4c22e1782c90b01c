import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { SyncJobData } from './sync-queue.ts';

/**
 * Past capacity, incremental runs share the box in proportion to what each job asks for (stride scheduling): when
 * the box does half of what the crons ask, every company's every job runs every second interval of its own, the
 * ten-minute job every twenty minutes and the hourly one every two hours, and no company is passed over.
 *
 * Each company's job has a pass on a virtual clock. A run is queued at its job's last pass plus its interval, and
 * never behind the clock (a job idle for a while banks no turns); workers take the lowest pass first, and the
 * clock is the highest pass taken. The clock moves as fast as runs are done: slower than real time when the box
 * is behind, the same for every job.
 *
 * BullMQ's priorities stop at 2,097,151, so a pass becomes a priority counted in seconds from a base. The base moves
 * up to the clock once it is half a span behind, at a moment no run waits (only runs held for their spread offset
 * are renumbered). A box behind for longer than that without a moment's rest queues the rest at the last
 * priority: oldest first.
 */

/** Each company's job's last pass (`company.job`), in seconds of the clock. */
export const PASSES_KEY = 'wfsync:sync:passes';
/** The clock (`at`: the highest pass taken) and the base priorities count from (`base`). */
export const CLOCK_KEY = 'wfsync:sync:clock';

/** Incremental runs' priorities are 1 to PASS_SPAN; backfills come after them. */
export const PASS_SPAN = 1_000_000;

export interface Turn {
  /** Where the run stands on the clock. */
  pass: number;
  /** Its BullMQ priority: 1 to PASS_SPAN. */
  priority: number;
}

const member = (company: string, job: string) => `${company}.${job}`;

/** Where the base stands, and who moves it. */
const REBASING_KEY = 'wfsync:sync:rebasing';

/**
 * The turn of a company's job run: its last pass plus its interval, or the clock's reading for a run asked by hand
 * (no interval: it goes first).
 */
export async function nextTurn(connection: Redis, queue: Queue<SyncJobData>, company: string, job: string, intervalMs: number | undefined): Promise<Turn> {
  const replies = (await connection.multi().zscore(PASSES_KEY, member(company, job)).zmscore(CLOCK_KEY, 'at', 'base').exec())!;
  const last = replies[0]![1] as string | null;
  const [at, storedBase] = replies[1]![1] as (string | null)[];
  const clock = Number(at ?? 0);
  const interval = intervalMs !== undefined && Number.isFinite(intervalMs) && intervalMs > 0 ? intervalMs / 1000 : undefined;
  const pass = last !== null && interval !== undefined ? Math.max(clock, Number(last) + interval) : clock;
  let base = Number(storedBase ?? 0);
  if (pass - base >= PASS_SPAN / 2) base = (await rebase(connection, queue, clock)) ?? base;
  return { pass, priority: priorityOf(pass, base) };
}

function priorityOf(pass: number, base: number): number {
  return 1 + Math.min(PASS_SPAN - 1, Math.max(0, Math.floor(pass - base)));
}

/**
 * Moves the base up to the clock if no run waits, and renumbers the runs held for their spread offset; answers the
 * new base, or undefined when runs wait or another process is at it.
 */
async function rebase(connection: Redis, queue: Queue<SyncJobData>, clock: number): Promise<number | undefined> {
  const waiting = await queue.getJobCounts('prioritized', 'wait');
  if ((waiting.prioritized ?? 0) + (waiting.wait ?? 0) > 0) return undefined;
  if ((await connection.set(REBASING_KEY, '1', 'PX', 60_000, 'NX')) !== 'OK') return undefined;
  try {
    await connection.zadd(CLOCK_KEY, clock, 'base');
    for (let start = 0; ; start += 1000) {
      const held = await queue.getDelayed(start, start + 999);
      for (const job of held) {
        if (job.data.pass !== undefined && job.priority > 0 && job.priority <= PASS_SPAN) await job.changePriority({ priority: priorityOf(job.data.pass, clock) });
      }
      if (held.length < 1000) return clock;
    }
  } finally {
    await connection.del(REBASING_KEY);
  }
}
/** The run was queued at its turn: the job's next one counts from it. */
export async function queuedAt(connection: Redis, company: string, job: string, pass: number): Promise<void> {
  await connection.zadd(PASSES_KEY, pass, member(company, job));
}

/** A worker took a run at `pass`: the clock reads at least that. */
export async function clockPassed(connection: Redis, pass: number): Promise<void> {
  await connection.zadd(CLOCK_KEY, 'GT', pass, 'at');
}
