import { afterAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { acquireRunLock, tryRunLock } from '../../src/locks/run-lock.ts';
import { localStreamLocks, redisStreamLocks, type StreamLocks } from '../../src/locks/stream-lock.ts';

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

/** Takes the stream for a run that holds it `holdMs`; resolves with when it held it. */
async function hold(locks: StreamLocks, company: string, stream: string, holdMs: number, waited: string[] = []) {
  const lock = await locks.take(company, stream, { onWait: (by) => waited.push(by ?? 'another run') });
  const from = Date.now();
  await new Promise((r) => setTimeout(r, holdMs));
  const to = Date.now();
  await lock.release();
  return { from, to };
}

describe('stream lock: one run of a stream per company, whichever job asks', () => {
  it('across processes (Redis): the second run waits for the first, then reads; other companies do not wait', async () => {
    const credentials = redisStreamLocks(redis, { holder: 'north.credentials.1', ttlMs: 3000 });
    const individuals = redisStreamLocks(redis.duplicate(), { holder: 'north.individuals.1', ttlMs: 3000 });
    const waited: string[] = [];
    const first = hold(credentials, 'north', 'individuals', 600);
    await new Promise((r) => setTimeout(r, 50));
    const [a, b, other] = await Promise.all([
      first,
      hold(individuals, 'north', 'individuals', 100, waited),
      hold(individuals, 'south', 'individuals', 100),
    ]);
    expect(b.from).toBeGreaterThanOrEqual(a.to);
    expect(waited).toEqual(['north.credentials.1']);
    expect(other.from).toBeLessThan(a.to);
  });

  it('a run whose worker died holds its stream only until the lock expires', async () => {
    await redis.set('wfsync:stream:east:individuals', 'east.credentials.9|dead', 'PX', 800);
    const started = Date.now();
    const lock = await redisStreamLocks(redis, { holder: 'east.individuals.2', ttlMs: 800 }).take(
      'east',
      'individuals',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    await lock.release();
  });

  it('a run shutting down stops waiting', async () => {
    const locks = redisStreamLocks(redis, { holder: 'west.individuals.3', ttlMs: 5000 });
    const held = await locks.take('west', 'individuals');
    const shutdown = new AbortController();
    const waiting = locks.take('west', 'individuals', { signal: shutdown.signal });
    setTimeout(() => shutdown.abort(new Error('shutdown')), 200);
    await expect(waiting).rejects.toThrow('shutdown');
    await held.release();
  });

  it('in one process (no Redis): runs of a stream queue behind one another', async () => {
    const locks = localStreamLocks();
    const waited: string[] = [];
    const runs = await Promise.all([0, 1, 2].map(() => hold(locks, 'north', 'individuals', 100, waited)));
    const ordered = runs.sort((x, y) => x.from - y.from);
    for (let i = 1; i < ordered.length; i++) expect(ordered[i]!.from).toBeGreaterThanOrEqual(ordered[i - 1]!.to);
    expect(waited).toHaveLength(2);
    const shutdown = new AbortController();
    const held = await locks.take('north', 'individuals');
    const waiting = locks.take('north', 'individuals', { signal: shutdown.signal });
    shutdown.abort(new Error('shutdown'));
    await expect(waiting).rejects.toThrow('shutdown');
    await held.release();
  });
});
