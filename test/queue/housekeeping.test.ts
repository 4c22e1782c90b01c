import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { sandboxSettings } from '../support/sandbox-settings.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync, waitFor, type Spawned } from '../support/processes.ts';
import { cronSetting } from '../support/schedule.ts';

/**
 * The housekeeping job runs on its cron like every job: in `start` without Redis, and through BullMQ from the
 * scheduler to a worker. Its cron fires every few seconds; every other job's cron is out of the way.
 */

const REDIS_DB = 5;
let sandbox: RunningSandbox;
const children: Spawned[] = [];
const opened: Warehouse[] = [];

/** Every few seconds (croner takes seconds as the first field): the first firing after the process is up counts. */
const EVERY_FEW_SECONDS = '*/5 * * * * *';

/** A warehouse holding one run of `individuals` finished 40 days ago and a later one. */
async function warehouseWithOldRuns(): Promise<{ wh: Warehouse; databaseUrl: string; oldId: number }> {
  const databaseUrl = await freshDatabase({ migrated: true });
  const wh = await openWarehouse({ databaseUrl });
  opened.push(wh);
  await wh.migrate();
  const at = (d: number) => new Date(Date.now() - d * 86_400_000);
  const [old] = await wh.sql<{ id: number }[]>`
    insert into ${wh.sql(wh.schema)}.sync_runs (company_key, stream, started_at, finished_at, outcome)
    values ('default', 'supervisors', ${at(40)}, ${at(40)}, 'ok'), ('default', 'supervisors', ${at(1)}, ${at(1)}, 'ok')
    returning id::int as id`;
  return { wh, databaseUrl, oldId: old!.id };
}

function settings(databaseUrl: string): Record<string, string> {
  const crons = Object.fromEntries(
    jobs.map((j) => [cronSetting(j.name), j.name === 'housekeeping' ? EVERY_FEW_SECONDS : '0 0 1 1 *']),
  );
  return {
    ...crons,
    DATABASE_URL: databaseUrl,
    ...sandboxSettings(sandbox),
    WFS_HTTP_PORT: '0',
    WFS_RATE_LIMIT: '100000/1s',
    WFS_KEEP_RUNS_DAYS: '10',
    LOG_LEVEL: 'warn',
  };
}

async function housekept(wh: Warehouse, what: () => string): Promise<{ pruned: Record<string, number> }> {
  return waitFor(
    what,
    async () => {
      const [run] = await wh.sql<{ details: { pruned: Record<string, number> } }[]>`
        select details from ${wh.sql(wh.schema)}.sync_runs where stream = 'housekeeping' and outcome = 'ok' order by id limit 1`;
      return run?.details;
    },
    150_000,
  );
}

const runIds = async (wh: Warehouse) =>
  (
    await wh.sql<
      { id: number }[]
    >`select id::int as id from ${wh.sql(wh.schema)}.sync_runs where stream = 'supervisors'`
  ).map((r) => r.id);

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 9, size: 'tiny', rateLimit: null });
});

afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited()));
  for (const wh of opened) await wh.close();
  await sandbox?.close();
});

describe('the housekeeping job on its cron', () => {
  it('runs in `start` without Redis, after the first sync', { timeout: 240_000 }, async () => {
    const { wh, databaseUrl, oldId } = await warehouseWithOldRuns();
    const start = spawnWfsync(['start'], settings(databaseUrl));
    children.push(start);
    const details = await housekept(wh, () => `a housekeeping run; start said: ${start.output().slice(-1000)}`);
    expect(details.pruned.runs).toBeGreaterThanOrEqual(1);
    expect(await runIds(wh)).not.toContain(oldId);
    start.proc.kill('SIGTERM');
    await start.exited();
  });

  it('runs on a worker when the scheduler puts it on the queue', { timeout: 240_000 }, async () => {
    const { wh, databaseUrl, oldId } = await warehouseWithOldRuns();
    const env = { ...settings(databaseUrl), REDIS_URL: `${inject('redisUrl')}/${REDIS_DB}` };
    const worker = spawnWfsync(['worker'], env);
    const scheduler = spawnWfsync(['scheduler'], env);
    children.push(worker, scheduler);
    const details = await housekept(wh, () => `a housekeeping run; worker said: ${worker.output().slice(-1000)}`);
    expect(details.pruned.runs).toBe(1);
    expect(await runIds(wh)).not.toContain(oldId);
    expect(await runIds(wh)).toHaveLength(1);
  });
});
