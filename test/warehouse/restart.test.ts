import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { sandboxSettings } from '../support/sandbox-settings.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { readRows } from '../support/rows.ts';
import { targets } from '../../src/resources/index.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { freshDatabase } from '../support/db.ts';
import { startPostgresCutter } from '../support/postgres-cutter.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { spawnWfsync, waitFor } from '../support/processes.ts';
import { startRestartablePostgres, type RestartablePostgres } from '../support/restartable-postgres.ts';
import { parsed } from './fixtures.ts';

/**
 * The warehouse restarts (a fast shutdown, as `pg_ctl -m fast restart`) while `sync --once` writes pages: the
 * pages in flight fail and are written again on new connections, and the run ends as if nothing happened.
 */
let sandbox: RunningSandbox;
let pg: RestartablePostgres;

beforeAll(async () => {
  [sandbox, pg] = await Promise.all([
    startSandbox({ port: 0, seed: 31, size: 'small', rateLimit: { limit: 100, periodMs: 1000 }, latencyMs: 20 }),
    startRestartablePostgres(),
  ]);
});

afterAll(async () => {
  await sandbox?.close();
  await pg?.destroy();
});

function settings(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: pg.url,
    ...sandboxSettings(sandbox),
    WFS_RATE_LIMIT: '100/1s',
    WFS_RATE_LIMIT_MARGIN_MS: '100',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Runs still going that began after `since` (a run an earlier test left unfinished does not count). */
async function runningStreams(wh: Warehouse, since = new Date(0)): Promise<number> {
  const [r] =
    await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.sync_runs where finished_at is null and started_at >= ${since}`;
  return r!.n as number;
}

describe('a Postgres restart during sync --once', () => {
  it('is ridden out: pages in flight are written again, the run succeeds, the warehouse equals the sandbox', async () => {
    const sync = spawnWfsync(['sync', '--once'], settings());
    let wh = await waitFor(
      'the warehouse migrated',
      async () => {
        const w = await openWarehouse({ databaseUrl: pg.url, max: 2 });
        try {
          await runningStreams(w);
          return w;
        } catch {
          await w.close();
          return undefined;
        }
      },
      60_000,
      300,
    );
    try {
      await waitFor(
        () => `streams running: ${sync.output().slice(-2000)}`,
        async () => (await runningStreams(wh)) >= 3,
        60_000,
        100,
      );
      await new Promise((r) => setTimeout(r, 500));
      // The test's own connections are closed across the restart: only the sync under test has to ride it out.
      await wh.close();
      await pg.stop();
      await new Promise((r) => setTimeout(r, 2000));
      await pg.start();
      const { code } = await sync.exited();
      wh = await openWarehouse({ databaseUrl: pg.url, max: 2 });
      const out = sync.output();
      expect(out).not.toMatch(/TypeError|Uncaught|Unhandled/);
      expect(code, out.slice(-3000)).toBe(0);
      expect(out).toContain('warehouse unavailable');
      expect(summarizeDivergence(await divergence(wh, sandbox.data, 'default'))).toEqual({});
      const [open] =
        await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.sync_runs where outcome is distinct from 'ok'`;
      expect(open!.n).toBe(0);
    } finally {
      if (sync.proc.exitCode === null) sync.proc.kill('SIGKILL');
      await wh.close();
    }
  }, 180_000);

  it('ends with one clear line when the warehouse stays away', async () => {
    const since = new Date();
    const sync = spawnWfsync(['sync', '--once', '--full-refresh'], settings({ WFS_DB_OUTAGE_MS: '3000' }));
    const wh = await openWarehouse({ databaseUrl: pg.url, max: 2 });
    try {
      await waitFor(
        () => `streams running: ${sync.output().slice(-2000)}`,
        async () => (await runningStreams(wh, since)) >= 2,
        60_000,
        100,
      );
    } finally {
      await wh.close();
    }
    await pg.stop();
    try {
      const started = Date.now();
      const { code } = await sync.exited();
      const out = sync.output();
      expect(code, out.slice(-3000)).toBe(1);
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(out).not.toMatch(/TypeError|Uncaught|Unhandled/);
      expect(out).toMatch(/the warehouse did not come back within 3 s/);
    } finally {
      if (sync.proc.exitCode === null) sync.proc.kill('SIGKILL');
      await pg.start();
    }
  }, 120_000);
});

describe('a page whose connection closes before its statements are answered', () => {
  it('fails as a lost connection and is written again, instead of waiting for an answer that never comes', async () => {
    const direct = await freshDatabase({ migrated: true });
    const setup = await openWarehouse({ databaseUrl: direct, max: 1 });
    await setup.migrate();
    await setup.close();
    const cutter = await startPostgresCutter(direct);
    const wh = await openWarehouse({ databaseUrl: cutter.url, max: 2, outageMs: 20_000 });
    try {
      const items = Array.from({ length: 200 }, (_, i) => parsed('shiftAssignments', { ShiftAssignmentId: i + 1 }));
      // The page's BEGIN went out before; its rows' INSERT never reaches the server, and nothing answers it.
      cutter.cutAt(`insert into "${wh.schema}"."shift_assignments"`);
      const written = writePage(wh, {
        target: targets['shift-assignments'],
        companyKey: 'cut',
        items,
        syncedAt: new Date(),
        stream: 'shift-assignments',
      });
      const result = await Promise.race([written, sleep(15_000).then(() => 'still waiting after 15 s')]);
      expect(cutter.cuts()).toBe(1);
      expect(result).toMatchObject({ inserted: items.length });
      expect(await readRows(wh, targets['shift-assignments'], 'cut')).toHaveLength(items.length);
    } finally {
      await wh.close();
      await cutter.close();
    }
  }, 60_000);
});
