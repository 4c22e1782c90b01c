import type { RateLimit } from '../config.ts';

/**
 * The service's own request limit, per API key (service-spec.md, "Limits": 100 requests per 1-minute interval,
 * 429 beyond, "resets after 1 minute").
 *
 * A period is fixed (a fixed-window counter): it starts with the first request after the previous period ended and
 * lasts exactly `periodMs`. A refused request (429) does not count against the budget, so a client that waits for
 * the reset is never punished for having been refused. Any client that never starts more than `limit` requests in
 * any span of `periodMs` is always admitted, because each fixed period is exactly that long.
 */

export interface BudgetVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch milliseconds when the current period ends. */
  resetAtMs: number;
}

interface Period {
  endsAtMs: number;
  used: number;
}

export class FixedWindowLimiter {
  readonly #rate: RateLimit;
  readonly #now: () => number;
  readonly #periods = new Map<string, Period>();

  constructor(rate: RateLimit, now: () => number = Date.now) {
    this.#rate = rate;
    this.#now = now;
  }

  get rate(): RateLimit {
    return this.#rate;
  }

  /** Counts one request of `key` if the budget allows it. */
  take(key: string): BudgetVerdict {
    const now = this.#now();
    let period = this.#periods.get(key);
    if (!period || now >= period.endsAtMs) {
      period = { endsAtMs: now + this.#rate.periodMs, used: 0 };
      this.#periods.set(key, period);
    }
    const allowed = period.used < this.#rate.limit;
    if (allowed) period.used += 1;
    return { allowed, limit: this.#rate.limit, remaining: this.#rate.limit - period.used, resetAtMs: period.endsAtMs };
  }

  /** The budget of `key` without counting anything (for responses that refuse before counting). */
  peek(key: string): BudgetVerdict {
    const now = this.#now();
    const period = this.#periods.get(key);
    if (!period || now >= period.endsAtMs) {
      return {
        allowed: true,
        limit: this.#rate.limit,
        remaining: this.#rate.limit,
        resetAtMs: now + this.#rate.periodMs,
      };
    }
    return {
      allowed: period.used < this.#rate.limit,
      limit: this.#rate.limit,
      remaining: this.#rate.limit - period.used,
      resetAtMs: period.endsAtMs,
    };
  }
}

/**
 * `X-RateLimit-Reset` is a unix timestamp in seconds. With whole-second periods it is rounded up, so a client
 * that waits for it never arrives early; with compressed periods (`100/250ms`) rounding would be off by whole
 * periods, so it carries fractional seconds.
 */
export function resetHeader(resetAtMs: number, periodMs: number): string {
  if (periodMs % 1000 === 0) return String(Math.ceil(resetAtMs / 1000));
  return (resetAtMs / 1000).toFixed(3).replace(/\.?0+$/, '');
}
