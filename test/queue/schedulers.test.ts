import { afterAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { jobs } from '../../jobs/index.ts';
import { queuedRuns } from '../../src/queue/sync-queue.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync, waitFor, type Spawned } from '../support/processes.ts';

const REDIS_DB = 4;
const children: Spawned[] = [];
afterAll(() => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
});

describe('several schedulers', () => {
  it('two scheduler processes firing the same cron every second queue one run per company: later firings coalesce with it', async () => {
    const redisUrl = `${inject('redisUrl')}/${REDIS_DB}`;
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    await redis.flushdb();
    // time-off fires every second; every other job only on New Year's midnight.
    const crons = Object.fromEntries(
      jobs.map((j) => [
        `WFS_CRON_${j.name.toUpperCase().replace(/-/g, '_')}`,
        j.name === 'time-off' ? '* * * * * *' : '0 0 0 1 1 *',
      ]),
    );
    const env = {
      // The schedulers read the companies table: which companies to fire runs for, paused or not.
      DATABASE_URL: await freshDatabase(),
      REDIS_URL: redisUrl,
      LOG_LEVEL: 'warn',
      WFS_COMPANIES: JSON.stringify([
        { key: 'north', apiKey: 'k1', baseUrl: 'http://127.0.0.1:9' },
        { key: 'south', apiKey: 'k2', baseUrl: 'http://127.0.0.1:9' },
      ]),
      ...crons,
    };
    const schedulers = [spawnWfsync(['scheduler'], env), spawnWfsync(['scheduler'], env)];
    children.push(...schedulers);
    await waitFor(
      'both schedulers started',
      async () => schedulers.every((s) => s.output().includes('scheduled incremental syncs')),
      30_000,
    );
    await new Promise((r) => setTimeout(r, 4500));
    for (const s of schedulers) {
      s.proc.kill('SIGTERM');
      expect((await s.exited()).code, s.output()).toBe(0);
    }

    const queued = await queuedRuns(redis);
    await redis.quit();
    // No worker takes it: every firing after the first, from either scheduler, found it still queued.
    expect(queued.map((r) => r.data.company).sort()).toEqual(['north', 'south']);
    expect(queued.every((r) => r.data.job === 'time-off' && !r.jobId.includes(':'))).toBe(true);
  }, 60_000);
});
