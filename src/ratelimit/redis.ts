import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Redis, type Result, type ClientContext } from 'ioredis';
import type { RateLimit } from '../config.ts';
import type { Logger } from '../log.ts';
import { closeRedis, redisHealth, settlesWithin } from '../redis-health.ts';
import { LANES, type Lane, type RateLimiter, type ServiceFeedback } from './types.ts';
import {
  paceSlackMs,
  paceSpacingMs,
  planFeedback,
  reconcileGraceMs,
  shortKey,
  WaitingRoom,
  type Decision,
  type LaneCounts,
  type OnStart,
  type Store,
} from './waiting.ts';

/**
 * The shared limiter: one sliding-window log per key in Redis, with lower lanes paced across processes (a ZSET of start times), changed only by Lua scripts
 * that read Redis's own clock, so processes on machines with different clocks agree.
 *
 * Keys (the braces keep one key's entries in one cluster slot):
 *   wfsync:rl:{<key>}            ZSET  start id → start time (ms); starts and key expire after the period + grace
 *   wfsync:rl:{<key>}:pause      STRING set with PX while the service said stop
 *   wfsync:rl:{<key>}:w:<lane>   ZSET  process id → registration expiry (ms): who waits in which lane
 *   wfsync:rl:{<key>}:pace       HASH   t: when the next lower-lane start is paced to come (ms); w: the paced start
 *                                       a waiter was refused before (see paceSpacingMs and nextPacedAtMs)
 */

/** Shared Lua: register(...) records which lanes this process waits in (KEYS[3..5]: the lane sets); clock() is Redis's time in ms. */
const REGISTER = `
local function register(now, member, ttl, counts)
  for i = 1, 3 do
    local k = KEYS[i + 2]
    if tonumber(counts[i]) > 0 then
      redis.call('ZADD', k, now + ttl, member)
      redis.call('PEXPIRE', k, math.ceil(ttl * 2))
    else
      redis.call('ZREM', k, member)
    end
  end
end
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
`;

/**
 * KEYS: log, pause, waiters push/incremental/backfill, pace.
 * ARGV: limit, period (ms, with margin), lane (1..3), member, ttl, count push/incremental/backfill, yield (ms),
 * start id, grace (ms: how long starts stay in the log after the period, for reconciliation only), spacing (ms:
 * the lower lanes' pace), slack (ms: lateness that is not idle time; see nextPacedAtMs).
 * Returns {granted 0/1, wait ms, reason, start time (ms, as text: a Lua number reply would be truncated)}.
 */
const ACQUIRE = `${REGISTER}
local limit, period, lane = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local member, ttl, grace = ARGV[4], tonumber(ARGV[5]), tonumber(ARGV[11])
local spacing, slack = tonumber(ARGV[12]), tonumber(ARGV[13])
local counts = { ARGV[6], ARGV[7], ARGV[8] }
local now = clock()
register(now, member, ttl, counts)
local pause = redis.call('PTTL', KEYS[2])
if pause > 0 then return { 0, pause, 'paused' } end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.3f', now - period - grace))
local horizon = string.format('(%.3f', now - period)
local used = redis.call('ZCOUNT', KEYS[1], horizon, '+inf')
local fullMs, pacedMs = 0, 0
if used >= limit then
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], horizon, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  fullMs = tonumber(oldest[2]) + period - now
end
-- Lower lanes wait for their paced start as well; both waits are answered at once, so one timer covers them.
local pacedAtText, awaited = nil, nil
if lane > 1 then
  local pace = redis.call('HMGET', KEYS[6], 't', 'w')
  pacedAtText, awaited = pace[1], pace[2]
end
local pacedAt = pacedAtText and tonumber(pacedAtText) or nil
if pacedAt and now < pacedAt then pacedMs = pacedAt - now end
if fullMs > 0 or pacedMs > 0 then
  if pacedMs > 0 then redis.call('HSET', KEYS[6], 'w', pacedAtText) end
  return { 0, math.max(1, math.ceil(math.max(fullMs, pacedMs))), fullMs >= pacedMs and 'full' or 'paced' }
end
-- A slot is free, but a live waiter of a higher lane in any process takes it first.
for i = 1, lane - 1 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i + 2], '-inf', now)
  if redis.call('ZCARD', KEYS[i + 2]) > 0 then return { 0, tonumber(ARGV[9]), 'yield' } end
end
redis.call('ZADD', KEYS[1], now, ARGV[10])
redis.call('PEXPIRE', KEYS[1], math.ceil(period + grace) + 1000)
if lane > 1 then
  -- As nextPacedAtMs in waiting.ts: the phase is kept when less than the slack late, or (at most a quarter period
  -- behind) when a waiter was waiting for the paced start; after idle time the schedule restarts from now.
  local nextPacedAt = now + spacing
  if pacedAt and now - pacedAt < slack then
    nextPacedAt = pacedAt + spacing
  elseif pacedAt and awaited == pacedAtText then
    nextPacedAt = math.max(pacedAt, now - period / 4) + spacing
  end
  redis.call('HSET', KEYS[6], 't', string.format('%.3f', nextPacedAt), 'w', '')
  redis.call('PEXPIRE', KEYS[6], math.ceil(period + grace) + 1000)
end
if tonumber(counts[lane]) <= 1 then redis.call('ZREM', KEYS[lane + 2], member) end
return { 1, 0, 'ok', string.format('%.3f', now) }
`;

/** KEYS: log. ARGV: start id, period + grace (ms). Moves a granted start to now, when it is handed over. */
const HANDED_OVER = `
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], 'GT', tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000, ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2])) + 1000)
return 1
`;

/** KEYS: (unused, unused), waiters push/incremental/backfill, (unused). ARGV: member, ttl, counts. Refreshes registrations. */
const ANNOUNCE = `${REGISTER}
register(clock(), ARGV[1], tonumber(ARGV[2]), { ARGV[3], ARGV[4], ARGV[5] })
return 1
`;

/**
 * KEYS: log, pause. ARGV: limit, period, pause ms, pause-if-behind ms, remaining (-1: none), placeholder lifetime
 * ms, id prefix, grace ms. Adds placeholder starts when the service counts more than the log (period and grace)
 * does, and pauses the key (never shortening a longer pause). Returns {placeholders added, pause ms set}.
 */
const OBSERVE = `
local limit, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local pause, pauseIfBehind = tonumber(ARGV[3]), tonumber(ARGV[4])
local remaining, life, grace = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[8])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local missing = 0
if remaining >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.3f', now - period - grace))
  missing = limit - redis.call('ZCARD', KEYS[1]) - remaining
end
if missing > 0 then
  for i = 1, missing do redis.call('ZADD', KEYS[1], now + life - period, ARGV[7] .. i) end
  redis.call('PEXPIRE', KEYS[1], math.ceil(period + grace) + 1000)
  pause = math.max(pause, pauseIfBehind)
else
  missing = 0
end
if pause > 0 and pause > redis.call('PTTL', KEYS[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', pause)
  return { missing, pause }
end
return { missing, 0 }
`;

type Args = (string | number)[];
declare module 'ioredis' {
  interface RedisCommander<Context extends ClientContext> {
    wfsyncRlAcquire(...args: Args): Result<[number, number, string, string?], Context>;
    wfsyncRlAnnounce(...args: Args): Result<number, Context>;
    wfsyncRlHandedOver(...args: Args): Result<number, Context>;
    wfsyncRlObserve(...args: Args): Result<[number, number], Context>;
  }
}

export interface RedisStoreOptions {
  limit: number;
  /** The effective period: the service's plus the safety margin. */
  periodMs: number;
  /** A waiter registration lives this long without a heartbeat (a crashed process stops blocking lower lanes). */
  registrationTtlMs?: number;
  logger?: Logger;
}

/** How long a response waits for Redis to take what it said about the budget before the read goes on. */
const OBSERVE_WAIT_MS = 2_000;

export class RedisStore implements Store {
  readonly heartbeatMs: number;
  private readonly ttlMs: number;
  /** A lower lane refused in favour of a higher one asks again after this long. */
  private readonly yieldMs: number;
  private readonly graceMs: number;
  private readonly spacingMs: number;
  /** This process (one limiter instance) in waiter registrations and start ids. */
  private readonly member = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private seq = 0;

  constructor(
    private readonly redis: Redis,
    private readonly ownsConnection: boolean,
    private readonly opts: RedisStoreOptions,
  ) {
    this.ttlMs = opts.registrationTtlMs ?? 3000;
    this.heartbeatMs = Math.floor(this.ttlMs / 3);
    this.yieldMs = Math.min(250, Math.max(5, Math.round(opts.periodMs / opts.limit)));
    this.graceMs = reconcileGraceMs(opts.periodMs);
    this.spacingMs = paceSpacingMs(opts.limit, opts.periodMs);
    redis.defineCommand('wfsyncRlAcquire', { numberOfKeys: 6, lua: ACQUIRE });
    redis.defineCommand('wfsyncRlAnnounce', { numberOfKeys: 6, lua: ANNOUNCE });
    redis.defineCommand('wfsyncRlObserve', { numberOfKeys: 2, lua: OBSERVE });
    redis.defineCommand('wfsyncRlHandedOver', { numberOfKeys: 1, lua: HANDED_OVER });
  }

  async tryStart(key: string, lane: Lane, waiting: LaneCounts): Promise<Decision> {
    const id = `${this.member}:${++this.seq}`;
    const [granted, waitMs, reason, at] = await this.redis.wfsyncRlAcquire(
      ...keys(key),
      this.opts.limit,
      this.opts.periodMs,
      LANES.indexOf(lane) + 1,
      this.member,
      this.ttlMs,
      ...waiting,
      this.yieldMs,
      id,
      this.graceMs,
      this.spacingMs,
      paceSlackMs(this.spacingMs),
    );
    return granted === 1 ? { granted: true, id, atMs: Number(at) } : { granted: false, waitMs, reason };
  }

  /** Not awaited: it only ever moves a start later, and the next command on the connection runs after it. */
  handedOver(key: string, id: string): void {
    this.redis.wfsyncRlHandedOver(keys(key)[0], id, this.opts.periodMs + this.graceMs).catch((err: unknown) => {
      this.opts.logger?.warn({ err, key: shortKey(key) }, 'rate limiter could not move a start to its hand-over');
    });
  }

  /**
   * A registration lives `ttlMs` without a heartbeat, so it is dropped rather than queued for a reconnection, and
   * waited for no longer than it lives: a stopping limiter withdraws its registrations, and a Redis that is
   * shutting down (connected, answering nothing) would otherwise hold the stop until the connection's retries
   * ran out, past the process's shutdown bound.
   */
  async announce(key: string, waiting: LaneCounts): Promise<void> {
    if (outOfReach(this.redis)) return;
    const told = this.redis.wfsyncRlAnnounce(...keys(key), this.member, this.ttlMs, ...waiting);
    told.catch(() => undefined);
    if (await settlesWithin(told, this.ttlMs)) await told;
  }

  async observe(key: string, feedback: ServiceFeedback, signal?: AbortSignal): Promise<void> {
    const plan = planFeedback(feedback, this.opts.limit, this.opts.periodMs);
    if (plan.pauseMs === 0 && plan.remaining < 0) return;
    // What the service said is advice: with Redis out of reach it is dropped, not queued for the reconnection (the
    // page it came with would wait for it, and a shutdown with the page).
    if (outOfReach(this.redis)) return;
    const [log, pause] = keys(key);
    const told = this.redis.wfsyncRlObserve(
      log,
      pause,
      this.opts.limit,
      this.opts.periodMs,
      plan.pauseMs,
      plan.pauseIfBehindMs,
      plan.remaining,
      plan.placeholderMs,
      `${this.member}:p${++this.seq}:`,
      this.graceMs,
    );
    told.catch(() => undefined);
    // Redis that went away after the check holds the command until it is back, or its retries run out: the page
    // waits for it a little, and not at all once its run is told to stop (its run then records its end at once).
    if (!(await settlesWithin(told, OBSERVE_WAIT_MS, signal))) return;
    const [added, pausedMs] = await told;
    if (pausedMs > 0) {
      this.opts.logger?.info({ key: shortKey(key), pauseMs: pausedMs, ...feedback }, 'rate limit: pausing key');
    }
    if (added > 0) this.opts.logger?.debug({ key: shortKey(key), added }, 'rate limit: reconciled with the service');
  }

  async close(): Promise<void> {
    if (this.ownsConnection) await closeRedis(this.redis);
  }
}

/**
 * Redis is out of reach: the connection lost it and is trying again, or was closed. A new connection still being
 * made is not (its first commands wait for it, as they should).
 */
function outOfReach(redis: Redis): boolean {
  return redis.status === 'reconnecting' || redis.status === 'end';
}

function keys(key: string): [string, string, string, string, string, string] {
  const base = `wfsync:rl:{${key}}`;
  return [
    base,
    `${base}:pause`,
    ...(LANES.map((lane) => `${base}:w:${lane}`) as [string, string, string]),
    `${base}:pace`,
  ];
}

export interface RedisRateLimiterOptions {
  rateLimit: RateLimit;
  /** A connection to share (left open on close) or a URL (connected here, closed on close). */
  redis: Redis | string;
  safetyMarginMs: number;
  registrationTtlMs?: number;
  logger?: Logger;
  onStart?: OnStart;
}

export function createRedisRateLimiter(o: RedisRateLimiterOptions): RateLimiter {
  const owns = typeof o.redis === 'string';
  const redis = typeof o.redis === 'string' ? new Redis(o.redis) : o.redis;
  // A connection of its own logs an outage once, not at every reconnection attempt.
  if (owns && o.logger) redisHealth(o.logger).watch(redis);
  else if (owns) redis.on('error', () => {});
  const store = new RedisStore(redis, owns, {
    limit: o.rateLimit.limit,
    periodMs: o.rateLimit.periodMs + o.safetyMarginMs,
    registrationTtlMs: o.registrationTtlMs,
    logger: o.logger,
  });
  return new WaitingRoom(store, o.logger, o.onStart);
}
