import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { ScheduledRun } from './scheduler.ts';
import { FRONTIER_KEY, isBehind, TAKEN_KEY, takeTurn, turnOf } from './turns.ts';
import { DUE_KEY, FED_KEY, LATER_KEY, memberOf, QUEUED_KEY, RUNS_KEY, runScript } from './scripts.ts';
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
  /** Where it ends: the queue gives out the earliest end first. */
  turnEndMs?: number;
  /** Where it sorts among the queued runs (`QueuedRun.order`), kept for a run put back on the queue (stalled.ts). */
  order?: number;
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
 * produces the same id and the queue keeps one. BullMQ ids must not contain `:`.
 */
export function syncJobId(run: Pick<ScheduledRun, 'company' | 'firedAt'> & { job: { name: string } }): string {
  return `${memberOf(run.company, run.job.name)}.${run.firedAt.getTime()}`;
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

/** A run on the queue: its BullMQ job id once given out, where it sorts, and the job's data. */
export interface QueuedRun {
  jobId: string;
  /** Lower is given out first: an incremental run's turn end in ms (`turnOrderOf`), a backfill after every turn (`backfillOrder`). */
  order: number;
  data: SyncJobData;
}

/**
 * How a saturated box shares itself. The queue gives out the lowest order first. An incremental run's order is the
 * end of its turn (turns.ts): the company's turns at a job come one interval apart. A backfill (a company's first
 * sync, a full re-read) comes after every incremental run, in the jobs' order, so a first sync reads a dependency
 * before the jobs that read it.
 */
export interface Fairness {
  /** The company has streams never synced yet: its runs are its backfill. */
  backfilling(company: string): boolean;
  /** The job's place among the jobs (0 first). */
  slotOf(job: string): number;
}

/** Jobs have places 0 to this less one (`Fairness.slotOf`). */
export const JOB_SLOTS = 1000;
/**
 * Backfills sort after every turn's end (those before the year 2248): each job's place is this many milliseconds wide
 * (past the year 2100), within it by when the run was queued. Every order stays below 2^53, exact in a sorted set.
 */
const BACKFILL_PLACE_MS = 2 ** 42;
/** Turns ending at one instant go in the jobs' order: the place in 1024ths of a millisecond, exact in a double. */
const PLACES_PER_MS = 1024;

const slotOf = (run: ScheduledRun, fairness: Fairness) =>
  Math.min(JOB_SLOTS - 1, Math.max(0, fairness.slotOf(run.job.name)));

export function isBackfill(run: ScheduledRun, fairness: Fairness): boolean {
  return Boolean(run.job.fullRefresh) || fairness.backfilling(run.company);
}

export function backfillOrder(run: ScheduledRun, fairness: Fairness, queuedAtMs: number): number {
  return (slotOf(run, fairness) + 2) * BACKFILL_PLACE_MS + queuedAtMs;
}

/** An incremental run's order: its turn's end. */
export function turnOrderOf(run: ScheduledRun, fairness: Fairness, turnEndMs: number): number {
  return turnEndMs + slotOf(run, fairness) / PLACES_PER_MS;
}

/** What a firing finds of its company's job: the run queued, the run given out, the last turn taken and the frontier. */
interface Found {
  queued?: QueuedRun;
  fed?: QueuedRun;
  lastStartMs: number | null;
  frontierMs: number | null;
}

async function find(connection: Redis, run: Pick<ScheduledRun, 'company'> & { job: { name: string } }): Promise<Found> {
  const member = memberOf(run.company, run.job.name);
  const replies =
    (await connection
      .multi()
      .hget(RUNS_KEY, member)
      .hget(FED_KEY, member)
      .hget(TAKEN_KEY, memberOf(run.company, run.job.name))
      .get(FRONTIER_KEY)
      .exec()) ?? [];
  const [queued, fed, last, frontier] = replies.map(([err, value]) => {
    if (err) throw err;
    return value as string | null;
  });
  return {
    queued: queued ? (JSON.parse(queued) as QueuedRun) : undefined,
    fed: fed ? (JSON.parse(fed) as QueuedRun) : undefined,
    lastStartMs: last ? Number(last) : null,
    frontierMs: frontier ? Number(frontier) : null,
  };
}

/** What queue-run.lua is asked to do; `found` is the state it was planned from (none: it holds whatever is found). */
interface Plan {
  entry: QueuedRun;
  heldUntilMs?: number;
  /** The run found queued, with this run's earlier turn. */
  earlier?: QueuedRun;
  found?: Found;
  /** A run found given out: 'behind' queues this one to follow it, 'drop' leaves it to stand for this one. */
  whenFed: 'behind' | 'drop';
}

function dataOf(run: ScheduledRun): SyncJobData {
  return {
    company: run.company,
    job: run.job.name,
    streams: [...run.job.streams],
    fullRefresh: run.job.fullRefresh,
    firedAt: run.firedAt.toISOString(),
    ...(run.dependencyBoundsMs ? { dependencyBoundsMs: { ...run.dependencyBoundsMs } } : {}),
  };
}

function entryOf(run: ScheduledRun, data: SyncJobData, order: number): QueuedRun {
  return { jobId: syncJobId(run), order, data: { ...data, order } };
}

/** The run found queued, with the turn of a run that coalesces with it when that sorts earlier; else nothing. */
function earlierTurn(
  found: QueuedRun | undefined,
  order: number,
  turn: Pick<SyncJobData, 'turnStartMs' | 'turnEndMs'>,
): QueuedRun | undefined {
  if (found?.data.turnStartMs === undefined || turn.turnStartMs === undefined || !(order < found.order))
    return undefined;
  return { ...found, order, data: { ...found.data, turnStartMs: turn.turnStartMs, turnEndMs: turn.turnEndMs, order } };
}

/**
 * An incremental run's turn follows on from its company's last one taken, or from the run a worker holds (its take
 * may not be recorded yet). A run found queued takes this turn when it is earlier (the job's cron was made more
 * frequent). A run kept behind a running one is queued when that one ends, by which time its spread share is long
 * past; on a box behind its schedule, the share would only make it miss its turn.
 */
function planTurn(run: ScheduledRun, fairness: Fairness, found: Found, now: number): Plan {
  const fedStartMs = found.fed?.data.turnStartMs;
  const lastStartMs =
    fedStartMs === undefined ? found.lastStartMs : Math.max(found.lastStartMs ?? fedStartMs, fedStartMs);
  const turn = turnOf(run, lastStartMs, found.frontierMs);
  const data = { ...dataOf(run), turnStartMs: turn.startMs, turnEndMs: turn.endMs };
  const hold = run.startAfterMs && !found.fed && !isBehind(found.frontierMs, run.intervalMs, now);
  const order = turnOrderOf(run, fairness, turn.endMs);
  return {
    entry: entryOf(run, data, order),
    heldUntilMs: hold ? now + run.startAfterMs! : undefined,
    earlier: earlierTurn(found.queued, order, data),
    found,
    whenFed: 'behind',
  };
}

/** A run with no turn: a backfill after every turn, or, off a fleet, by when it is due. */
function planPlain(run: ScheduledRun, fairness: Fairness | undefined, now: number): Plan {
  const heldUntilMs = run.startAfterMs ? now + run.startAfterMs : undefined;
  const order = fairness ? backfillOrder(run, fairness, now) : (heldUntilMs ?? now);
  return { entry: entryOf(run, dataOf(run), order), heldUntilMs, whenFed: 'behind' };
}

/** What queue-run.lua did. */
export type QueueOutcome = 'queued' | 'behind' | 'coalesced' | 'changed';
const OUTCOMES: Record<string, QueueOutcome> = { '1': 'queued', '2': 'behind', '0': 'coalesced', '-1': 'changed' };

/** Queues a planned run, or coalesces it, in one step (queue-run.lua). */
async function queueRun(connection: Redis, plan: Plan, now: number): Promise<QueueOutcome> {
  const member = memberOf(plan.entry.data.company, plan.entry.data.job);
  const seen = plan.found ? [plan.found.queued?.jobId ?? '', plan.found.fed?.jobId ?? ''] : ['*', '*'];
  const reply = await runScript(
    connection,
    'queueRun',
    [DUE_KEY, RUNS_KEY, LATER_KEY, FED_KEY, QUEUED_KEY],
    [
      member,
      ...seen,
      plan.whenFed,
      JSON.stringify(plan.entry),
      plan.entry.jobId,
      plan.entry.order,
      plan.heldUntilMs ?? '',
      now,
      plan.earlier ? JSON.stringify(plan.earlier) : '',
    ],
  );
  return OUTCOMES[String(reply)]!;
}

/** How often a firing plans again when a worker took its company's run between its read and its queueing. */
const PLANS = 10;

/** The connection a queue was made on (createSyncQueue): the queue's own keys live beside BullMQ's. */
function connectionOf(queue: Queue<SyncJobData>): Redis {
  const { connection } = queue.opts;
  if (connection instanceof Redis) return connection;
  throw new TypeError('the sync queue needs an ioredis connection');
}

/**
 * Queues a run. A firing that finds the same job of the same company still queued coalesces with it, and gives it its
 * own turn when that is earlier (the job's cron was made more frequent), and its own hold when that is shorter (a
 * shorter interval's spread, or none once the box is behind its schedule); one that finds it running is queued once the
 * running one ends, with the turn after it: the queue never holds more than companies × jobs, and a long run does not
 * cost its company the next turn. One or two round trips to Redis.
 */
export async function enqueueRun(
  queue: Queue<SyncJobData>,
  run: ScheduledRun,
  fleet?: { fairness: Fairness; connection: Redis },
): Promise<void> {
  const connection = fleet?.connection ?? connectionOf(queue);
  for (let plans = 1; ; plans++) {
    const now = Date.now();
    const plan =
      fleet && !isBackfill(run, fleet.fairness)
        ? planTurn(run, fleet.fairness, await find(connection, run), now)
        : planPlain(run, fleet?.fairness, now);
    const outcome = await queueRun(connection, plan, now);
    if (outcome !== 'changed' || plans >= PLANS) return;
  }
}

/**
 * Queues a run taken before again, as `jobId` (a stalled run's retry: stalled.ts), as a firing queues one: in the
 * order it had (its turn, or its backfill's place), held `delayMs`, so that a firing meanwhile coalesces with it.
 * The run given out is done with first. A run of the job given out since stands for it: answers false.
 */
export async function requeueRun(
  connection: Redis,
  run: Job<SyncJobData>,
  o: { jobId: string; delayMs: number },
): Promise<boolean> {
  const member = memberOf(run.data.company, run.data.job);
  await finishRun(connection, member, String(run.id));
  for (let plans = 1; ; plans++) {
    const now = Date.now();
    const found = await find(connection, { company: run.data.company, job: { name: run.data.job } });
    const order = run.data.order ?? now;
    const entry: QueuedRun = { jobId: o.jobId, order, data: { ...run.data, order } };
    const earlier = earlierTurn(found.queued, order, run.data);
    const plan: Plan = { entry, heldUntilMs: now + o.delayMs, earlier, found, whenFed: 'drop' };
    const outcome = await queueRun(connection, plan, now);
    if (outcome !== 'changed' || plans >= PLANS) return outcome === 'queued';
  }
}

/**
 * BullMQ is done with a run given out (completed, or failed with no attempt left): its company's job may be given out
 * again, and the run queued behind it is due from now (finish.lua). A member given out since as another run is left.
 */
export async function finishRun(connection: Redis, member: string, jobId: string, now = Date.now()): Promise<boolean> {
  const reply = await runScript(connection, 'finish', [DUE_KEY, RUNS_KEY, FED_KEY, QUEUED_KEY], [member, jobId, now]);
  return reply === 1;
}

/**
 * A worker took the job: its company's next turn at the job follows on from this one. A run without a turn (a
 * backfill, one run by hand) leaves the turns as they were.
 */
export async function taken(
  connection: Redis,
  run: Pick<SyncJobData, 'company' | 'job' | 'turnStartMs'>,
): Promise<void> {
  if (run.turnStartMs !== undefined) await takeTurn(connection, run.company, run.job, run.turnStartMs);
}

/**
 * How long the oldest run due and not yet given to a worker has waited, in seconds; null when none waits. A run held
 * for its share of the spread waits from when the share is up.
 */
export async function scheduleDelaySeconds(client: Redis, now = Date.now()): Promise<number | null> {
  const [member, score] = await client.zrange(QUEUED_KEY, 0, 0, 'WITHSCORES');
  if (member === undefined) return null;
  return Math.max(0, (now - Number(score)) / 1000);
}

/** The sync queue's counts by state: BullMQ's (the runs given to workers), and `queued`, the runs not yet given out. */
export async function syncJobCounts(queue: Queue<SyncJobData>, client: Redis): Promise<Record<string, number>> {
  const [counts, queuedRuns] = await Promise.all([queue.getJobCounts(), client.hlen(RUNS_KEY)]);
  return { ...counts, queued: queuedRuns };
}

/** Every run queued and not yet given out, in no particular order. */
export async function queuedRuns(client: Redis): Promise<QueuedRun[]> {
  return Object.values(await client.hgetall(RUNS_KEY)).map((entry) => JSON.parse(entry) as QueuedRun);
}
