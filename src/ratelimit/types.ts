/**
 * The request limiter: at most `limit` request starts in any span of one period (`periodMs`) per API key,
 * shared by every process that uses the same key.
 */

/**
 * Priority lanes: a waiting push request goes before incremental work, which goes before backfill. The push lane
 * takes any free slot at once; the lower two are paced, one start every W/L between them (see paceSpacingMs), so a
 * slot frees every W/L even while they saturate the budget.
 */
export type Lane = 'push' | 'incremental' | 'backfill';
export const LANES: readonly Lane[] = ['push', 'incremental', 'backfill'];

/** What the service said about the budget in a response. */
export interface ServiceFeedback {
  /** `X-RateLimit-Remaining`. */
  remaining?: number;
  /** `X-RateLimit-Reset`, as epoch milliseconds. */
  resetAtMs?: number;
  /** The response was a 429 (or 403 `rate_limit_exceeded`). */
  limited?: boolean;
}

export interface RateLimiter {
  /**
   * Waits until a request for `key` may start, and counts it as started.
   * `key` identifies the API key (a hash of it: the key itself is never stored).
   */
  acquire(key: string, lane?: Lane, signal?: AbortSignal): Promise<void>;
  /**
   * Tells every process using `key` what the service said; a 429 or a low remaining count pauses them until the
   * reset. It is advice: the caller (a run told to stop, by `signal`) does not wait for a store that does not answer.
   */
  observe(key: string, feedback: ServiceFeedback, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}
