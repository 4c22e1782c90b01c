/**
 * Backoff for retried requests: exponential with full jitter, so workers that failed together
 * do not come back together (the delay is uniform in [0, min(cap, base * 2^attempt))).
 */
export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  /** Injectable for tests; defaults to Math.random. */
  random?: () => number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 250, capMs: 15_000 };

/** Delay before retry number `attempt` (0 for the first retry). */
export function backoffMs(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF): number {
  const ceiling = Math.min(opts.capMs, opts.baseMs * 2 ** attempt);
  return Math.floor((opts.random ?? Math.random)() * ceiling);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Milliseconds until an `X-RateLimit-Reset` instant (epoch ms), never negative. */
export function untilReset(resetAtMs: number | undefined, now = Date.now()): number {
  return resetAtMs === undefined ? 0 : Math.max(0, resetAtMs - now);
}
