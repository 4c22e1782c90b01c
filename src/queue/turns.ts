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
 * (the share that spreads its runs, spread.ts). A turn is the grid's point an interval after the last one; a company
 * behind (paused, new, or with nothing queued when its turn came) takes the first point of its grid no more than an
 * interval before the frontier (the latest turn a worker took), so time away earns at most one turn. The grid keeps a
 * job's companies spread over its interval: without it every company joining at the frontier would share one
 * instant, and a job's whole fleet would be taken in a block while the shorter jobs' turns waited behind it.
 * BullMQ orders by an integer priority and takes equal priorities in the order they were queued, which changes from
 * one firing to the next: two companies whose turns share a priority would swap places from turn to turn. So a turn's
 * end is counted in milliseconds from an epoch kept in Redis, fine enough that no two companies' turns at a job
 * share one, and the epoch is moved on, with every queued run's priority, before the count runs out.
 */

/** Where each company's turn at a job last started (the run a worker last took), epoch ms, by `company.job`. */
export const TAKEN_KEY = 'wfsync:sync:taken';
/** The latest turn's start a worker took, epoch ms: where a company without a turn to follow on from starts. */
export const FRONTIER_KEY = 'wfsync:sync:frontier';
/** The instant incremental runs' priorities count milliseconds from. */
export const EPOCH_KEY = 'wfsync:sync:epoch';
const REBASE_LOCK_KEY = 'wfsync:sync:epoch-lock';

/** Backfills take the priorities after every turn's, one a job (sync-queue.ts). */
export const BACKFILL_SLOTS = 1000;
/** Incremental runs take priorities 1 to this (about 35 minutes of milliseconds), within BullMQ's 2^21 − 1. */
export const TURN_SPAN = 2 ** 21 - 1 - BACKFILL_SLOTS;
/**
 * The epoch sits this far before the frontier (or the clock, when that is earlier): a queued turn ends no earlier
 * than the frontier it was given under, and one that falls this far behind it since still counts from the epoch.
 */
const EPOCH_LEAD_MS = 10 * 60_000;
/**
 * Once the frontier is this far past the epoch, the epoch moves on. Turns ending more than the rest of the span
 * ahead (long jobs' turns) all take the last priority until a move brings them within it, long before they are due.
 */
const REBASE_AFTER_MS = 20 * 60_000;

export function takenField(company: string, job: string): string {
  return `${company}.${job}`;
}

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

/** A turn's end as a priority: milliseconds from the epoch, within 1 and TURN_SPAN. */
export function turnPriority(endMs: number, epochMs: number): number {
  return Math.min(TURN_SPAN, Math.max(1, 1 + Math.floor(endMs - epochMs)));
}

/**
 * Past capacity, the frontier trails the clock by more than a firing's spread (at most half an interval): holding a
 * run back for its share of the window only makes it miss its turn, since the queue is long anyway.
 */
export function isBehind(frontierMs: number | null, intervalMs: number | undefined, now: number): boolean {
  return frontierMs !== null && intervalMs !== undefined && frontierMs < now - intervalMs / 2;
}

const numberOr = (reply: [Error | null, unknown] | undefined) => (reply?.[1] ? Number(reply[1]) : null);

export interface IncrementalTurn {
  turn: Turn;
  priority: number;
  /** The epoch the priority counts from: a run queued as it moved is given its priority again (`reprioritize`). */
  epochMs: number;
  /** The box is behind its schedule (`isBehind`). */
  behind: boolean;
}

/**
 * A company's incremental run's turn and priority; starts an epoch when none is set, and moves it on when it is old.
 * `runningStartMs` is the turn of the company's run of the job a worker holds: its take may not be recorded yet.
 */
export async function incrementalTurn(
  queue: Queue,
  connection: Redis,
  run: ScheduledRun,
  runningStartMs?: number,
  now = Date.now(),
): Promise<IncrementalTurn> {
  const [last, frontierReply, epoch] =
    (await connection
      .multi()
      .hget(TAKEN_KEY, takenField(run.company, run.job.name))
      .get(FRONTIER_KEY)
      .get(EPOCH_KEY)
      .exec()) ?? [];
  const recordedMs = numberOr(last);
  const frontierMs = numberOr(frontierReply);
  const lastStartMs =
    runningStartMs === undefined ? recordedMs : Math.max(recordedMs ?? runningStartMs, runningStartMs);
  const turn = turnOf(run, lastStartMs, frontierMs);
  // Past capacity the frontier falls behind the clock: the epoch follows whichever is earlier.
  const base = Math.min(now, frontierMs ?? now);
  let epochMs = numberOr(epoch);
  if (epochMs === null) {
    await connection.set(EPOCH_KEY, String(base - EPOCH_LEAD_MS), 'NX');
    epochMs = Number(await connection.get(EPOCH_KEY));
  }
  if (base - epochMs > REBASE_AFTER_MS) epochMs = await rebase(queue, connection, epochMs, base);
  return {
    turn,
    priority: turnPriority(turn.endMs, epochMs),
    epochMs,
    behind: isBehind(frontierMs, run.intervalMs, now),
  };
}

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
      .hmget(TAKEN_KEY, ...companies.map((c) => takenField(c, job)))
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

/** Raises the frontier to a taken turn's start; a turn behind it leaves it. */
const RAISE_FRONTIER = `local at = tonumber(redis.call('GET', KEYS[1]))
if not at or tonumber(ARGV[1]) > at then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/** A worker took a run with a turn: the company's next turn at the job follows on from it. */
export function takeTurn(tx: ReturnType<Redis['multi']>, company: string, job: string, startMs: number): void {
  tx.hset(TAKEN_KEY, takenField(company, job), String(startMs)).eval(RAISE_FRONTIER, 1, FRONTIER_KEY, String(startMs));
}

/**
 * Gives runs with a turn the priority of their turn's end (`turnEndMs` in their data) from the epoch, in one step, so
 * no worker takes a run between two priorities counted from different epochs. ARGV[3], when set, is the new epoch.
 * With ARGV[4] (a deduplication id) and job ids after it, only those runs; without, every run queued, delayed, or held
 * behind a running one (BullMQ's stored next job, `dn:`). BullMQ scores a prioritized job by priority · 2^32 plus a
 * counter, and promotes a delayed one, or creates a held one, with the priority in its hash or options.
 * KEYS: the epoch, BullMQ's prioritized, delayed and active keys.
 * ARGV: BullMQ's key prefix, the span, the new epoch or '', and the ids.
 */
const REPRIORITIZE = `
local prefix, span = ARGV[1], tonumber(ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[1], ARGV[3]) end
local epoch = tonumber(redis.call('GET', KEYS[1]))
local function priorityOf(json)
  if not json then return nil end
  local ok, data = pcall(cjson.decode, json)
  if not ok or type(data) ~= 'table' or type(data['turnEndMs']) ~= 'number' then return nil end
  local p = 1 + math.floor(data['turnEndMs'] - epoch)
  if p < 1 then return 1 elseif p > span then return span end
  return p
end
local function queued(id, score)
  local old = math.floor(score / 4294967296)
  if old < 1 or old > span then return end
  local p = priorityOf(redis.call('HGET', prefix .. id, 'data'))
  if p and p ~= old then
    redis.call('ZADD', KEYS[2], p * 4294967296 + math.fmod(score, 4294967296), id)
    redis.call('HSET', prefix .. id, 'priority', p)
  end
end
local function delayed(id)
  local old = tonumber(redis.call('HGET', prefix .. id, 'priority'))
  if not old or old < 1 or old > span then return end
  local p = priorityOf(redis.call('HGET', prefix .. id, 'data'))
  if p and p ~= old then redis.call('HSET', prefix .. id, 'priority', p) end
end
local function held(deid)
  local key = prefix .. 'dn:' .. deid
  local fields = redis.call('HMGET', key, 'data', 'opts')
  if not fields[2] then return end
  local opts = cjson.decode(fields[2])
  local old = tonumber(opts['priority'])
  if not old or old < 1 or old > span then return end
  local p = priorityOf(fields[1])
  if p and p ~= old then
    opts['priority'] = p
    redis.call('HSET', key, 'opts', cjson.encode(opts))
  end
end
if ARGV[4] then
  held(ARGV[4])
  for i = 5, #ARGV do
    local score = redis.call('ZSCORE', KEYS[2], ARGV[i])
    if score then queued(ARGV[i], tonumber(score)) elseif redis.call('ZSCORE', KEYS[3], ARGV[i]) then delayed(ARGV[i]) end
  end
  return epoch
end
local all = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #all, 2 do queued(all[i], tonumber(all[i + 1])) end
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do delayed(id) end
for _, id in ipairs(redis.call('LRANGE', KEYS[4], 0, -1)) do
  local deid = redis.call('HGET', prefix .. id, 'deid')
  if deid then held(deid) end
end
return epoch`;

function reprioritizing(
  queue: Queue,
  connection: Redis,
  toEpochMs: number | null,
  only?: { dedupId: string; jobIds: string[] },
): Promise<unknown> {
  const { prioritized, delayed, active } = queue.keys;
  const ids = only ? [only.dedupId, ...only.jobIds] : [];
  return connection.eval(
    REPRIORITIZE,
    4,
    EPOCH_KEY,
    prioritized!,
    delayed!,
    active!,
    queue.toKey(''),
    String(TURN_SPAN),
    toEpochMs === null ? '' : String(toEpochMs),
    ...ids,
  );
}

/**
 * Gives a company's run of a job, queued or held behind its running run, the priority of its turn from the epoch as
 * it is now: for a run queued with a priority counted from an epoch that moved meanwhile.
 */
export async function reprioritize(queue: Queue, connection: Redis, dedupId: string, jobIds: string[]): Promise<void> {
  await reprioritizing(queue, connection, null, { dedupId, jobIds });
}

/**
 * Moves the epoch to EPOCH_LEAD_MS before `base` and every queued incremental run's priority with it, in one step, so
 * their order holds. One enqueuer does it at a time; the others go on with the epoch they read until it is done.
 */
export async function rebase(queue: Queue, connection: Redis, fromMs: number, base = Date.now()): Promise<number> {
  if ((await connection.set(REBASE_LOCK_KEY, '1', 'PX', 60_000, 'NX')) !== 'OK') return fromMs;
  try {
    return Number(await reprioritizing(queue, connection, base - EPOCH_LEAD_MS));
  } finally {
    await connection.del(REBASE_LOCK_KEY);
  }
}
