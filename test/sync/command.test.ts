import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync, type Ran } from '../support/processes.ts';

/** `wfsync sync --once` as a user runs it: a child process against a sandbox, into a real Postgres. */

let sandbox: RunningSandbox;
let databaseUrl: string;
let env: Record<string, string>;
/** No `.env` and no `.wfsync/` of anyone else's: the settings are exactly the ones given. */
let cwd: string;
const opened: Warehouse[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 8, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  databaseUrl = await freshDatabase();
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-cli-'));
  env = {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    DATABASE_URL: databaseUrl,
    WFS_RATE_LIMIT: '100/1s',
    LOG_LEVEL: 'warn',
  };
});

afterAll(async () => {
  for (const wh of opened) await wh.close();
  await sandbox?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function wfsync(args: string[], overrides: Record<string, string> = {}): Promise<Ran> {
  return runWfsync(args, { ...env, ...overrides }, cwd);
}

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const STACK_FRAME = /^\s+at /m;

describe('wfsync sync --once', () => {
  it('syncs the named streams, prints the summary on stderr and JSON on stdout, and exits 0', async () => {
    const ran = await wfsync(['sync', '--once', '--streams', 'individuals,departments', '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).not.toMatch(STACK_FRAME);

    const summary = JSON.parse(ran.stdout) as {
      companyKey: string;
      failed: number;
      requests: number;
      rows: number;
      rejects: number;
      streams: { stream: string; outcome: string; requests: number; rows: number; rejects: number }[];
    };
    const individuals = sandbox.data.truth('individuals').length;
    const departments = sandbox.data.truth('departments').length;
    expect(summary.failed).toBe(0);
    expect(
      summary.streams.map((s) => ({ stream: s.stream, outcome: s.outcome, rows: s.rows, rejects: s.rejects })),
    ).toEqual([
      { stream: 'departments', outcome: 'ok', rows: departments, rejects: 0 },
      { stream: 'individuals', outcome: 'ok', rows: individuals, rejects: 0 },
    ]);
    // Each is one unpaged list.
    for (const s of summary.streams) expect(s.requests, s.stream).toBe(1);
    expect(summary.rows).toBe(individuals + departments);

    // The summary table for a person, on stderr.
    const table = lines(ran.stderr);
    expect(table).toContainEqual(
      expect.stringMatching(new RegExp(`^company ${summary.companyKey}: ${summary.rows} rows, 2 requests, 0 rejects`)),
    );
    expect(table).toContainEqual(expect.stringMatching(/^\s+stream\s+rows\s+requests\s+rejects\s+deleted\s+outcome$/));
    expect(table).toContainEqual(
      expect.stringMatching(new RegExp(`^\\s+individuals\\s+${individuals}\\s+1\\s+0\\s+0\\s+ok$`)),
    );
    expect(table).toContainEqual(
      expect.stringMatching(new RegExp(`^\\s+departments\\s+${departments}\\s+1\\s+0\\s+0\\s+ok$`)),
    );

    const wh = await openWarehouse({ databaseUrl });
    opened.push(wh);
    const count = async (table: string) =>
      (
        await wh.sql.unsafe(
          `select count(*)::int as n from "${wh.schema}"."${table}" where company_key = $1 and _deleted_at is null`,
          [summary.companyKey],
        )
      )[0]!.n;
    expect(await count('individuals')).toBe(individuals);
    expect(await count('departments')).toBe(departments);
    const runs = await wh.sql`select stream, outcome, rows from ${wh.sql(wh.schema)}.sync_runs order by stream`;
    expect(runs.map((r) => [r.stream, r.outcome, r.rows])).toEqual([
      ['departments', 'ok', departments],
      ['individuals', 'ok', individuals],
    ]);
  });

  it('an unknown stream: one line naming it, no stack, a non-zero exit, nothing synced', async () => {
    const ran = await wfsync(['sync', '--once', '--streams', 'individuals,timesheets', '--json']);
    expect(ran.code).not.toBe(0);
    expect(ran.code).not.toBeNull();
    expect(ran.stdout).toBe('');
    expect(lines(ran.stderr)).toHaveLength(1);
    expect(ran.stderr).toMatch(/unknown stream "timesheets"/);
    expect(ran.stderr).not.toMatch(STACK_FRAME);
  });

  it('a bad setting: one line naming the setting, no stack, exit 1', async () => {
    const ran = await wfsync(['sync', '--once', '--streams', 'departments'], { WFS_RATE_LIMIT: 'fast' });
    expect(ran.code).toBe(1);
    expect(lines(ran.stderr)).toHaveLength(1);
    expect(ran.stderr).toMatch(/WFS_RATE_LIMIT/);
    expect(ran.stderr).toMatch(/"fast"/);
    expect(ran.stderr).not.toMatch(STACK_FRAME);
  });

  it('without --once: the usage, and exit 2', async () => {
    const ran = await wfsync(['sync', '--streams', 'departments']);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toMatch(/--once is required/);
    expect(ran.stderr).toMatch(/^usage: wfsync sync --once/m);
    expect(ran.stderr).not.toMatch(STACK_FRAME);
  });

  it('a malformed command line (an option without its value, an unknown option): one line, no stack, non-zero exit', async () => {
    for (const args of [
      ['sync', '--once', '--streams'],
      ['sync', '--once', '--stream', 'departments'],
    ]) {
      const ran = await wfsync(args);
      expect(ran.code, args.join(' ')).not.toBe(0);
      expect(ran.code).not.toBeNull();
      expect(lines(ran.stderr), args.join(' ')).toHaveLength(1);
      expect(ran.stderr).toMatch(/--stream/);
      expect(ran.stderr).not.toMatch(STACK_FRAME);
    }
  });
});
