import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * At most one run of a job per company at a time, across every worker process.
 * The lock lives as long as BullMQ's job lock, so after a crash the stalled job's retry can take it again.
 */
export interface RunLock {
  release(): Promise<void>;
}

const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

export async function acquireRunLock(redis: Redis, company: string, job: string, ttlMs: number): Promise<RunLock | null> {
  const key = `wfsync:run:${company}:${job}`;
  const token = randomUUID();
  const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') return null;
  const renew = setInterval(() => {
    redis.eval(RENEW, 1, key, token, String(ttlMs)).catch(() => undefined);
  }, Math.max(100, Math.floor(ttlMs / 3)));
  return {
    release: async () => {
      clearInterval(renew);
      await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
    },
  };
}
