import type { Redis } from 'ioredis';
import type { RateLimit } from '../config.ts';
import type { Logger } from '../log.ts';
import { createMemoryRateLimiter } from './memory.ts';
import type { RateLimiter } from './types.ts';
import type { OnStart } from './waiting.ts';

export type { Lane, RateLimiter, ServiceFeedback } from './types.ts';
export { LANES } from './types.ts';
export type { OnStart } from './waiting.ts';

export interface CreateRateLimiterOptions {
  rateLimit: RateLimit;
  /**
   * Added to the period: a start leaves the log W + margin after it was granted, which absorbs the jitter
   * between granting a start and the service counting it (process scheduling, the network, the service's own
   * queue). Default: 2% of the period, at most 250 ms: enough for a compressed budget on a loaded machine to see
   * no 429s, and a small share of a minute's budget.
   */
  safetyMarginMs?: number;
  logger?: Logger;
  /** Called for every start handed to a caller, with the limiter's clock (Redis's, or this process's), epoch ms. */
  onStart?: OnStart;
}

/** Makes limiters that keep their logs in one place. */
export type RateLimiterMaker = (o: CreateRateLimiterOptions) => RateLimiter;

export function defaultSafetyMarginMs(rateLimit: RateLimit): number {
  return Math.min(250, Math.ceil(rateLimit.periodMs / 50));
}

function safetyMarginOf(o: CreateRateLimiterOptions): number {
  const safetyMarginMs = o.safetyMarginMs ?? defaultSafetyMarginMs(o.rateLimit);
  if (!(safetyMarginMs >= 0)) throw new Error(`safetyMarginMs must be 0 or more, got ${safetyMarginMs}`);
  return safetyMarginMs;
}

/** This process's limiter: its budget is shared by nothing outside the process. */
export function createRateLimiter(o: CreateRateLimiterOptions): RateLimiter {
  return createMemoryRateLimiter(o.rateLimit, safetyMarginOf(o), o.logger, o.onStart);
}

/**
 * The limiters of a process: through Redis when given it (a connection, left open on close, or a URL), so that
 * every process of a key shares one budget; in memory without it. The Redis limiter's module, and ioredis with
 * it, is loaded here and only when asked for: a process without Redis does not carry them.
 */
export async function rateLimiterMaker(redis?: Redis | string): Promise<RateLimiterMaker> {
  if (!redis) return createRateLimiter;
  const { createRedisRateLimiter } = await import('./redis.ts');
  return (o) =>
    createRedisRateLimiter({
      rateLimit: o.rateLimit,
      redis,
      safetyMarginMs: safetyMarginOf(o),
      logger: o.logger,
      onStart: o.onStart,
    });
}
