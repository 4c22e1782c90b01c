import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { tryLock, type LockOutcome, type RunLock } from './run-lock.ts';

/**
 * At most one run of a stream per company at a time, whichever job asks (the credentials job reads `individuals`
 * before its own stream, at the same minutes as the individuals job). `take` waits for the run holding the stream.
 * A run takes a stream only when it starts reading it and holds no other while it waits, so two jobs never wait
 * for each other.
 */
export interface StreamLocks {
  /** Resolves once this run holds the stream; rejects when `signal` is aborted first (shutdown). */
  take(company: string, stream: string, o?: TakeOptions): Promise<RunLock>;
}

export interface TakeOptions {
  signal?: AbortSignal;
  /** Told once, when another run holds the stream and this one waits for it (`heldBy` names it, when known). */
  onWait?: (heldBy?: string) => void;
}

/** Across every process on one Redis: the lock expires `ttlMs` after its holder died, and is renewed while it lives. */
export function redisStreamLocks(redis: Redis, o: { holder: string; ttlMs: number }): StreamLocks {
  const pollMs = Math.min(1000, Math.max(100, Math.floor(o.ttlMs / 10)));
  return {
    take: async (company, stream, { signal, onWait } = {}) => {
      const key = `wfsync:stream:${company}:${stream}`;
      for (let waited = false; ; waited = true) {
        signal?.throwIfAborted();
        const outcome = await abortable(tryLock(redis, key, o.holder, o.ttlMs, signal), signal);
        if ('lock' in outcome) return outcome.lock;
        if (!waited) onWait?.(outcome.heldBy);
        // Rejects with the signal's reason, as the local locks do.
        await sleep(pollMs, undefined, { signal }).catch(() => signal?.throwIfAborted());
      }
    },
  };
}

/**
 * The attempt, or the signal's reason once it is aborted: a Redis that is gone never answers, and a shutdown does
 * not wait for it. A lock the attempt takes after all is released at once.
 */
async function abortable(attempt: Promise<LockOutcome>, signal?: AbortSignal): Promise<LockOutcome> {
  if (!signal) return attempt;
  try {
    return await untilSettledOrAborted(attempt, signal);
  } catch (e) {
    void attempt.then((late) => ('lock' in late ? late.lock.release() : undefined)).catch(() => undefined);
    throw e;
  }
}

const never = new AbortController().signal;

/** Within this process (no Redis): runs of a stream queue behind one another. */
export function localStreamLocks(): StreamLocks {
  const held = new Map<string, Promise<void>>();
  return {
    take: async (company, stream, { signal, onWait } = {}) => {
      const key = `${company}\u0000${stream}`;
      for (let current = held.get(key), waited = false; current; current = held.get(key), waited = true) {
        if (!waited) onWait?.();
        await untilSettledOrAborted(current, signal);
      }
      signal?.throwIfAborted();
      let release!: () => void;
      const done = new Promise<void>((resolve) => (release = resolve));
      held.set(key, done);
      return {
        lost: never,
        release: async () => {
          if (held.get(key) === done) held.delete(key);
          release();
        },
      };
    },
  };
}

async function untilSettledOrAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => (onAbort = () => reject(signal.reason)));
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
