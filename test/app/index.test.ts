import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { App } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { syncJobCounts } from '../../src/queue/sync-queue.ts';
import { freshDatabase } from '../support/db.ts';

/** A long-running process with Redis: what its re-syncs and "run now"s leave running behind them. */

const REDIS_DB = 14;
let redisUrl: string;
let databaseUrl: string;

beforeAll(async () => {
  redisUrl = `${inject('redisUrl')}/${REDIS_DB}`;
  const redis = new Redis(redisUrl);
  await redis.flushdb();
  redis.disconnect();
  databaseUrl = await freshDatabase();
});

/** The steps of the app that read which companies backfill (one timer and one query over all companies each). */
const fairnessSteps = (app: App) => app.stillRunning().filter((step) => step === 'fairness');

describe('the queue of a process that serves re-syncs', () => {
  let app: App;
  afterAll(async () => {
    await app?.stop();
  });

  it('keeps one reader of which companies backfill however many re-syncs it queues, and stops it once', async () => {
    app = new App(loadConfig({ DATABASE_URL: databaseUrl, REDIS_URL: redisUrl }), pino({ level: 'silent' }));
    for (const stream of ['departments', 'individuals', 'departments'] as const) {
      expect(await app.resync('default', stream, 'dashboard', 'system')).toMatch(/is queued$/);
    }
    const dispatch = await app.dispatch();
    await dispatch({
      company: 'default',
      job: { name: 'ad-hoc', cron: '', streams: ['departments'], description: 'by hand' },
      firedAt: new Date(),
    });
    await app.dispatch();
    expect(fairnessSteps(app)).toEqual(['fairness']);
    // Queued in the queue's own keys (no worker here to give them to): the second departments re-sync coalesced.
    expect((await syncJobCounts(await app.syncQueue(), await app.redis())).queued).toBe(3);
    await app.stop();
    expect(app.stillRunning()).toEqual([]);
  });
});
