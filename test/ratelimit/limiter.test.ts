import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { RateLimit } from '../../src/config.ts';
import {
  createRateLimiter,
  rateLimiterMaker,
  type Lane,
  type OnStart,
  type RateLimiter,
} from '../../src/ratelimit/index.ts';
import { RedisStore } from '../../src/ratelimit/redis.ts';
import { maxInAnyPeriod } from './sandbox-worker.ts';

/**
 * One suite, both limiters. Periods are compressed (tens of starts per few hundred ms) so a test takes a second
 * or two. "Two processes" are two limiter instances: for Redis they share nothing but the Redis server, as
 * separate processes would; the in-memory limiter is one process by nature, so both are the same instance.
 */

interface Impl {
  name: string;
  pair(rateLimit: RateLimit, onStart?: OnStart): [RateLimiter, RateLimiter];
}

const makeRedisLimiter = await rateLimiterMaker(inject('redisUrl'));

const impls: Impl[] = [
  {
    name: 'memory',
    pair: (rateLimit, onStart) => {
      const one = createRateLimiter({ rateLimit, safetyMarginMs: 0, onStart });
      return [one, one];
    },
  },
  {
    name: 'redis',
    pair: (rateLimit, onStart) => [
      makeRedisLimiter({ rateLimit, safetyMarginMs: 0, onStart }),
      makeRedisLimiter({ rateLimit, safetyMarginMs: 0, onStart }),
    ],
  },
];

const open: RateLimiter[] = [];
afterEach(async () => {
  await Promise.all([...new Set(open.splice(0))].map((l) => l.close()));
});

/**
 * Two limiters of one implementation, and the start times they granted, on the limiter's own clock (Redis's, or
 * the process's). Those, not the times callers saw, are what the period bounds: a caller on a busy machine can see
 * its grant many ms late, which is what the safety margin is for.
 */
function pair(impl: Impl, rateLimit: RateLimit): { a: RateLimiter; b: RateLimiter; starts: number[] } {
  const starts: number[] = [];
  const [a, b] = impl.pair(rateLimit, (_key, _lane, atMs) => void starts.push(atMs));
  open.push(a, b);
  return { a, b, starts };
}

const freshKey = () => `test-${randomBytes(6).toString('hex')}`;
const now = () => performance.now();

/** `workers` loops that acquire until `untilMs` (performance.now), each coming back after a short "request". */
async function hammer(limiters: RateLimiter[], key: string, workers: number, untilMs: number): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async (_, i) => {
      const limiter = limiters[i % limiters.length]!;
      while (now() < untilMs) {
        await limiter.acquire(key);
        await sleep(1 + (i % 3));
      }
    }),
  );
}

describe.each(impls)('$name limiter', (impl) => {
  it('never lets more than L start in any period, and uses the whole budget while there is work', async () => {
    // Lower lanes are paced: a period long enough that a loaded machine's timer stalls stay within the pace's slack.
    const rl = { limit: 20, periodMs: 1000 };
    const { a, b, starts } = pair(impl, rl);
    const periods = 6;
    await hammer([a, b], freshKey(), 6, now() + (periods + 1) * rl.periodMs);
    starts.sort((x, y) => x - y);

    expect(maxInAnyPeriod(starts, rl.periodMs)).toBeLessThanOrEqual(rl.limit);
    const first = starts[0]!;
    const inRun = starts.filter((t) => t < first + periods * rl.periodMs).length;
    expect(inRun).toBeGreaterThanOrEqual(0.95 * periods * rl.limit);
  });

  it('serves waiting push work before incremental before backfill, across processes', async () => {
    const rl = { limit: 4, periodMs: 500 };
    const { a, b } = pair(impl, rl);
    const key = freshKey();
    for (let i = 0; i < rl.limit; i++) await a.acquire(key, 'push');

    const order: Lane[] = [];
    const enqueue = (limiter: RateLimiter, lane: Lane) =>
      Array.from({ length: rl.limit }, () => limiter.acquire(key, lane).then(() => void order.push(lane)));
    const backfill = enqueue(a, 'backfill');
    await sleep(20);
    const incremental = enqueue(b, 'incremental');
    await sleep(20);
    const push = enqueue(a, 'push');
    await Promise.all([...backfill, ...incremental, ...push]);

    const expected = (['push', 'incremental', 'backfill'] as const).flatMap((lane) => Array<Lane>(rl.limit).fill(lane));
    expect(order).toEqual(expected);
  });

  it('paces lower-lane starts across processes: the n-th comes no earlier than n × W/L after the first', async () => {
    const rl = { limit: 20, periodMs: 400 };
    const spacing = rl.periodMs / rl.limit;
    const lower: number[] = [];
    const [a, b] = impl.pair(rl, (_key, lane, atMs) => void (lane !== 'push' && lower.push(atMs)));
    open.push(a, b);
    const key = freshKey();
    const until = now() + 3 * rl.periodMs;
    const lanes: Lane[] = ['backfill', 'incremental'];
    // Four loops per lane and process: far more demand than the pace lets through.
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const limiter = i % 2 ? b : a;
        while (now() < until) await limiter.acquire(key, lanes[i % 4 < 2 ? 0 : 1]);
      }),
    );
    lower.sort((x, y) => x - y);
    // No burst, even at the start with the period empty; a start late for its paced time does not delay the schedule.
    const early = lower.map((t, n) => t - (lower[0]! + n * spacing)).filter((d) => d < -0.01);
    expect(early, 'starts before their paced time (ms)').toEqual([]);
    expect(lower.slice(0, rl.limit).at(-1)! - lower[0]!).toBeGreaterThanOrEqual((rl.limit - 1) * spacing - 0.01);
    // That the pace still spends the whole budget is the first test's claim (these are all lower-lane starts).
    expect(lower.length).toBeGreaterThan(2 * rl.limit);
  });

  it('serves a push within about one slot while lower lanes saturate the budget', async () => {
    const rl = { limit: 20, periodMs: 1000 };
    const spacing = rl.periodMs / rl.limit;
    const { a, b, starts } = pair(impl, rl);
    const key = freshKey();
    let stop = false;
    const backfill = Array.from({ length: 6 }, async () => {
      while (!stop) await a.acquire(key, 'backfill');
    });
    // One period of backfill first, so the period is full of its starts.
    await sleep(rl.periodMs + spacing);
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t0 = now();
      await b.acquire(key, 'push');
      waits.push(now() - t0);
      await sleep(spacing * 1.7);
    }
    stop = true;
    await Promise.all(backfill);
    // Without pacing the backfill's burst holds every slot for a whole period (1000 ms here), and nearly every push
    // waits for most of one. The 100 ms over one slot, and one wait let off up to half a period, are for a loaded
    // two-core machine's stalls.
    const sorted = [...waits].sort((x, y) => x - y);
    const shown = waits.map(Math.round).join(' ');
    expect(sorted.at(-2)!, shown).toBeLessThanOrEqual(spacing + 100);
    expect(sorted.at(-1)!, shown).toBeLessThan(rl.periodMs / 2);
    starts.sort((x, y) => x - y);
    expect(maxInAnyPeriod(starts, rl.periodMs)).toBeLessThanOrEqual(rl.limit);
  });

  it('pauses every process of the key after a 429 until the reset', async () => {
    const rl = { limit: 10, periodMs: 1000 };
    const { a, b } = pair(impl, rl);
    const key = freshKey();
    await a.acquire(key);
    const t0 = now();
    await a.observe(key, { limited: true, resetAtMs: Date.now() + 300 });
    await b.acquire(key);
    expect(now() - t0).toBeGreaterThanOrEqual(300 - 5);
  });

  it('pauses until the reset when the service says nothing remains', async () => {
    const rl = { limit: 10, periodMs: 1000 };
    const { a, b } = pair(impl, rl);
    const key = freshKey();
    const t0 = now();
    await a.observe(key, { remaining: 0, resetAtMs: Date.now() + 250 });
    await b.acquire(key);
    expect(now() - t0).toBeGreaterThanOrEqual(250 - 5);
  });

  it("does not pause for the period's last request when its own log already agrees", async () => {
    const rl = { limit: 3, periodMs: 300 };
    const { a, b } = pair(impl, rl);
    const key = freshKey();
    for (let i = 0; i < rl.limit; i++) await a.acquire(key);
    const t0 = now();
    // The service rounds its reset up to whole seconds: waiting for it would idle most of a period.
    await a.observe(key, { remaining: 0, resetAtMs: Date.now() + 2000 });
    await b.acquire(key);
    expect(now() - t0).toBeLessThan(1000);
  });

  it('believes the service when it counts more starts than the log does', async () => {
    const rl = { limit: 10, periodMs: 400 };
    const { a, b } = pair(impl, rl);
    const key = freshKey();
    const t0 = now();
    await a.observe(key, { remaining: 3, resetAtMs: Date.now() + 300 });
    const grants: number[] = [];
    await Promise.all(Array.from({ length: 4 }, () => b.acquire(key).then(() => void grants.push(now() - t0))));
    grants.sort((x, y) => x - y);
    expect(grants.slice(0, 3).every((t) => t < 200)).toBe(true);
    // The fourth waits for the service's reset, when the placeholders leave the log.
    expect(grants[3]).toBeGreaterThanOrEqual(300 - 5);
  });

  it('ignores a remaining count that is higher than its own', async () => {
    const rl = { limit: 3, periodMs: 300 };
    const { a } = pair(impl, rl);
    const key = freshKey();
    // The push lane, so the period fills at once (lower lanes would be paced across it).
    for (let i = 0; i < rl.limit; i++) await a.acquire(key, 'push');
    await a.observe(key, { remaining: 2, resetAtMs: Date.now() + 300 });
    const t0 = now();
    await a.acquire(key);
    expect(now() - t0).toBeGreaterThanOrEqual(rl.periodMs - 50);
  });

  it('rejects an aborted wait with an AbortError and does not spend a start on it', async () => {
    const rl = { limit: 3, periodMs: 300 };
    const { a, b, starts } = pair(impl, rl);
    const key = freshKey();
    for (let i = 0; i < rl.limit; i++) await a.acquire(key);

    const already = new AbortController();
    already.abort();
    await expect(a.acquire(key, 'push', already.signal)).rejects.toMatchObject({ name: 'AbortError' });

    const controller = new AbortController();
    const waiting = a.acquire(key, 'push', controller.signal);
    await sleep(30);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });

    // All L starts of the next period go to the others: the aborted waiter took none.
    await Promise.all(Array.from({ length: rl.limit }, () => b.acquire(key)));
    expect(starts).toHaveLength(2 * rl.limit);
    const next = starts.slice(rl.limit).sort((x, y) => x - y);
    expect(next.at(-1)! - next[0]!).toBeLessThan(rl.periodMs);
  });

  it('rejects waiters that are still waiting when it closes', async () => {
    const rl = { limit: 1, periodMs: 5000 };
    const { a } = pair(impl, rl);
    const key = freshKey();
    await a.acquire(key);
    const waiting = expect(a.acquire(key, 'backfill')).rejects.toThrow(/closed/);
    await sleep(10);
    await a.close();
    await waiting;
    await expect(a.acquire(key)).rejects.toThrow(/closed/);
  });
});

describe('redis limiter, on a Redis that takes connections and answers nothing (one shutting down)', () => {
  it("stops waiting to tell it the service's budget once the run is told to stop, and withdraws within a registration's life", async () => {
    const sockets: Socket[] = [];
    const server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const redis = new Redis((server.address() as AddressInfo).port, '127.0.0.1');
    redis.on('error', () => {});
    const store = new RedisStore(redis, true, { limit: 10, periodMs: 1000, registrationTtlMs: 300 });
    try {
      const stop = new AbortController();
      const started = Date.now();
      setTimeout(() => stop.abort(), 100);
      await store.observe('k', { limited: true, resetAtMs: Date.now() + 1000 }, stop.signal);
      // Not the 2 s a page waits for it otherwise.
      expect(Date.now() - started).toBeLessThan(1_000);
      const withdrawing = Date.now();
      await store.announce('k', [0, 0, 0]);
      expect(Date.now() - withdrawing).toBeLessThan(1_000);
    } finally {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
