import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';
import { freePort, startRedis } from '../support/services.ts';

describe('a worker and Redis', () => {
  it('without a reachable Redis at start-up, the worker stops after a bounded wait with one line', async () => {
    const port = await freePort();
    const started = Date.now();
    const worker = spawnWfsync(['worker'], {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      DATABASE_URL: await freshDatabase(),
      WFS_BASE_URL: 'http://127.0.0.1:9',
      WFS_API_KEY: 'k',
    });
    const { code } = await worker.exited();
    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
    const lines = worker.output().trim().split('\n');
    expect(lines, worker.output()).toHaveLength(1);
    expect(lines[0]).toMatch(/REDIS_URL: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer within 15 s/);
  }, 60_000);

  it('logs one line when Redis goes away and one when it is back, and stays up', async () => {
    const redis = await startRedis();
    const worker = spawnWfsync(['worker'], {
      REDIS_URL: redis.url,
      DATABASE_URL: await freshDatabase(),
      WFS_BASE_URL: 'http://127.0.0.1:9',
      WFS_API_KEY: 'k',
      LOG_LEVEL: 'info',
    });
    try {
      const until = async (what: RegExp) => {
        const deadline = Date.now() + 30_000;
        while (!what.test(worker.output())) {
          if (Date.now() > deadline) throw new Error(`no ${what} in: ${worker.output().slice(-2000)}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await until(/worker started/);
      await redis.stop();
      await new Promise((r) => setTimeout(r, 5000));
      expect(worker.proc.exitCode).toBeNull();
      const port = Number(new URL(redis.url).port);
      const again = await startRedis(port);
      try {
        await until(/Redis is back/);
        const out = worker.output();
        expect(out.match(/Redis unreachable/g), out).toHaveLength(1);
        expect(out).not.toMatch(/Unhandled error event|ECONNREFUSED.*\n.*ECONNREFUSED/);
      } finally {
        await again.stop();
      }
    } finally {
      worker.proc.kill('SIGKILL');
    }
  }, 90_000);
});
