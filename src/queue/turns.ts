import type { Redis } from 'ioredis';
import type { ScheduledRun } from './scheduler.ts';
import { shareOf } from './spread.ts';
import { memberOf, runScript } from './scripts.ts';

/**
 * Whose turn it is on a saturated box: fair queueing over every company's jobs. A company's job takes turns one of
 * the job's intervals long, and the queue takes the earliest-ending turn first. Past capacity every job of every
 * company is stretched by about the same factor, whether its interval is a minute or an hour, rather than every late
 * run being late by the same seconds.
 * A company's turns at a job fall on its own grid: one interval apart, offset by the company's share of the interval
 * (the share that spreads its runs, spread.ts). A turn is the grid's point an interval after the last one; a company
 * behind (paused, new, or with nothing queued when its turn came) takes the first point of its grid no more than an
 * interval before the frontier (the latest turn a worker took), so time away earns at most one turn. The grid keeps a
 * job's companies spread over its interval: without it every company joining at the frontier would share one
 * instant, and a job's whole fleet would be taken in a block while the shorter jobs' turns waited behind it.
 * Queued runs wait in the queue's own sorted set (scripts.ts), scored by their turn's end in milliseconds.
 */

/** Where each company's turn at a job last started (the run a worker last took), epoch ms, by `company.job`. */
export const TAKEN_KEY = 'wfsync:sync:taken';
/** The latest turn's start a worker took, epoch ms: where a company without a turn to follow on from starts. */
export const FRONTIER_KEY = 'wfsync:sync:frontier';

/** A run's turn at its company's job: the queue takes the earliest `endMs` first. */
export interface Turn {
  startMs: number;
  endMs: number;
}

type TurnRun = { company: string; job: { name: string } } & Pick<
  ScheduledRun,
  'firedAt' | 'startAfterMs' | 'intervalMs' | 'share'
>;

/** The run's turn: its grid's point an interval after the last one's start, or its grid's first point an interval before the frontier. */
export function turnOf(run: TurnRun, lastStartMs: number | null, frontierMs: number | null): Turn {
  const intervalMs = run.intervalMs ?? 0;
  // Half an interval on from the last start lands on the grid's next point even when the grid moved a little.
  const after = [
    lastStartMs === null ? null : lastStartMs + intervalMs / 2,
    frontierMs === null ? null : frontierMs - intervalMs,
  ].filter((ms) => ms !== null);
  const startMs =
    after.length > 0
      ? onGrid(Math.max(...after), intervalMs, run.share ?? shareOf(run.company, run.job.name))
      : run.firedAt.getTime() + (run.startAfterMs ?? 0);
  return { startMs, endMs: startMs + intervalMs };
}

/** The first instant from `atLeastMs` on that is `share` of an interval past a whole number of intervals. */
function onGrid(atLeastMs: number, intervalMs: number, share: number): number {
  if (!(intervalMs > 0)) return atLeastMs;
  const offsetMs = Math.floor(share * intervalMs);
  return offsetMs + Math.ceil((atLeastMs - offsetMs) / intervalMs) * intervalMs;
}

/**
 * Past capacity, the frontier trails the clock by more than a firing's spread (at most half an interval): holding a
 * run back for its share of the spread only makes it miss its turn, since the queue is long anyway.
 */
export function isBehind(frontierMs: number | null, intervalMs: number | undefined, now: number): boolean {
  return frontierMs !== null && intervalMs !== undefined && frontierMs < now - intervalMs / 2;
}

const numberOr = (reply: [Error | null, unknown] | undefined) => (reply?.[1] ? Number(reply[1]) : null);

/**
 * A firing's companies in the order their turns at the job end, earliest first. On a box behind its schedule a run is
 * taken as soon as it is queued: one queued before a run with an earlier turn is taken before it. The turns of a
 * firing's companies need not fall in one interval of the grid: a company taken since the last firing has its turn an
 * interval after one whose run was still queued, and was given its next one only now.
 */
export async function turnOrder(
  connection: Redis,
  job: string,
  intervalMs: number,
  shares: ReadonlyMap<string, number>,
  firedAt: Date,
): Promise<string[]> {
  const companies = [...shares.keys()];
  if (companies.length === 0) return companies;
  const [lasts, frontierReply] =
    (await connection
      .multi()
      .hmget(TAKEN_KEY, ...companies.map((c) => memberOf(c, job)))
      .get(FRONTIER_KEY)
      .exec()) ?? [];
  const lastMs = (lasts?.[1] as (string | null)[] | undefined) ?? [];
  const frontierMs = numberOr(frontierReply);
  const endOf = new Map(
    companies.map((company, i) => {
      const last = lastMs[i];
      return [
        company,
        turnOf(
          { company, job: { name: job }, firedAt, intervalMs, share: shares.get(company) },
          last ? Number(last) : null,
          frontierMs,
        ).endMs,
      ];
    }),
  );
  return companies.sort((a, b) => endOf.get(a)! - endOf.get(b)! || shares.get(a)! - shares.get(b)!);
}

/** A worker took a run with a turn: the company's next turn at the job follows on from it (take-turn.lua). */
export async function takeTurn(connection: Redis, company: string, job: string, startMs: number): Promise<void> {
  await runScript(connection, 'takeTurn', [TAKEN_KEY, FRONTIER_KEY], [memberOf(company, job), String(startMs)]);
}
