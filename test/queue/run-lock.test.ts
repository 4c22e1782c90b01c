import { afterAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { acquireRunLock, tryRunLock } from '../../src/queue/run-lock.ts';

const redis = new Redis(`${inject('redisUrl')}/5`, { maxRetriesPerRequest: null });
afterAll(() => redis.quit());

describe('run lock: a job never overlaps itself', () => {
  it('refuses a second run of the same job for the same company while the first holds it, and says which', async () => {
    const first = await tryRunLock(redis, 'north', 'time-off', 'job-1', 5000);
    expect('lock' in first).toBe(true);
    expect(await tryRunLock(redis, 'north', 'time-off', 'job-2', 5000)).toEqual({ heldBy: 'job-1' });
    // Other companies and other jobs are not held up.
    expect('lock' in (await tryRunLock(redis, 'south', 'time-off', 'job-3', 5000))).toBe(true);
    expect('lock' in (await tryRunLock(redis, 'north', 'courses', 'job-4', 5000))).toBe(true);
    if ('lock' in first) await first.lock.release();
    expect('lock' in (await tryRunLock(redis, 'north', 'time-off', 'job-2', 5000))).toBe(true);
  });

  it('keeps a lock alive while its run goes on, and lets it expire when its worker died', async () => {
    const held = await tryRunLock(redis, 'east', 'forms', 'job-5', 600);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await tryRunLock(redis, 'east', 'forms', 'job-6', 600)).toEqual({ heldBy: 'job-5' });
    if ('lock' in held) await held.lock.release();

    // A crashed worker never renews: simulate its lock with a bare key of the same form.
    await redis.set('wfsync:run:west:forms', 'job-7|dead', 'PX', 600);
    const started = Date.now();
    const retry = await acquireRunLock(redis, 'west', 'forms', 'job-7', 600);
    expect('lock' in retry).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    if ('lock' in retry) await retry.lock.release();
  });

  it('does not wait for another run: a different job id is refused at once', async () => {
    await redis.set('wfsync:run:west:courses', 'job-8|alive', 'PX', 5000);
    const started = Date.now();
    expect(await acquireRunLock(redis, 'west', 'courses', 'job-9', 5000)).toEqual({ heldBy: 'job-8' });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
