import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/**
 * At most one run of a job per company at a time, across every worker process.
 * The lock names the BullMQ job holding it and expires unless renewed, so a crashed worker's lock goes away.
 */
export interface RunLock {
  /** Aborted when a renewal finds the lock gone or taken (it expired while Redis was out of reach). */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

export type LockOutcome = { lock: RunLock } | { heldBy: string };

/** How long a release waits for Redis to answer before the run goes on (the lock then expires by itself). */
const RELEASE_WAIT_MS = 3_000;

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

function lockKey(company: string, job: string): string {
  return `wfsync:run:${company}:${job}`;
}

export async function tryRunLock(
  redis: Redis,
  company: string,
  job: string,
  owner: string,
  ttlMs: number,
): Promise<LockOutcome> {
  return tryLock(redis, lockKey(company, job), owner, ttlMs);
}

/**
 * Takes `key` for `owner` unless someone holds it; kept alive while held, and gone `ttlMs` after its holder died.
 * Once `signal` is aborted (the run holding it is told to stop), its release is sent and not waited for.
 */
export async function tryLock(
  redis: Redis,
  key: string,
  owner: string,
  ttlMs: number,
  signal?: AbortSignal,
): Promise<LockOutcome> {
  const value = `${owner}|${randomUUID()}`;
  const ok = await redis.set(key, value, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') return { heldBy: ((await redis.get(key)) ?? '').split('|')[0]! };
  const lost = new AbortController();
  const renew = setInterval(
    () => {
      redis
        .eval(RENEW, 1, key, value, String(ttlMs))
        .then((renewed) => {
          if (renewed === 0 && !lost.signal.aborted) {
            clearInterval(renew);
            lost.abort(new Error('the lock expired while Redis was out of reach'));
          }
        })
        .catch(() => undefined);
    },
    Math.max(100, Math.floor(ttlMs / 3)),
  );
  // A lock does not keep the process alive: one a run could not release (Redis gone) expires by itself.
  renew.unref();
  return {
    lock: {
      lost: lost.signal,
      release: async () => {
        clearInterval(renew);
        // The lock expires by itself: a Redis that is gone (whose commands wait for it forever) or slow to
        // answer does not hold the run that releases it, nor, once it is told to stop, a Redis shutting down.
        const released = redis.eval(RELEASE, 1, key, value).catch(() => undefined);
        const given = sleep(RELEASE_WAIT_MS, undefined, { ref: false, signal }).catch(() => undefined);
        if (redis.status === 'ready' && !signal?.aborted) await Promise.race([released, given]);
      },
    },
  };
}

/**
 * Takes the lock for `owner`. When an earlier attempt of the same job holds it (its worker died), waits for that
 * lock to expire; when another run holds it, gives up and says who.
 */
export async function acquireRunLock(
  redis: Redis,
  company: string,
  job: string,
  owner: string,
  ttlMs: number,
): Promise<LockOutcome> {
  const deadline = Date.now() + 3 * ttlMs;
  for (;;) {
    const outcome = await tryRunLock(redis, company, job, owner, ttlMs);
    if ('lock' in outcome || outcome.heldBy !== owner || Date.now() > deadline) return outcome;
    await sleep(Math.max(100, Math.floor(ttlMs / 4)));
  }
}
