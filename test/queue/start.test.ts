import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { waitFor } from '../support/processes.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
let dir: string | undefined;
afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

describe('npm start on a fresh clone', () => {
  it('with no settings: embedded Postgres, the built-in sandbox said plainly, a first full sync, then schedules', async () => {
    dir = mkdtempSync(join(tmpdir(), 'wfsync-clone-'));
    // Postgres runs as another user when started as root; it must reach the data directory.
    chmodSync(dir, 0o755);
    const clone = join(dir, 'workforce-sync');
    execFileSync('git', ['clone', '--quiet', REPO, clone]);
    symlinkSync(join(REPO, 'node_modules'), join(clone, 'node_modules'));

    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', WFS_HTTP_PORT: '0' };
    const proc = spawn('npm', ['start'], { cwd: clone, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    let url: string | undefined;
    try {
      await waitFor(
        () => `the first sync to finish; output so far:\n${out.slice(-3000)}`,
        async () => out.includes('scheduled incremental syncs'),
        240_000,
        500,
      );
      expect(out.slice(0, out.indexOf('first sync'))).toMatch(/BUILT-IN SANDBOX/);
      url = /psql '([^']+)'/.exec(out)?.[1];
      expect(url, out).toBeTruthy();
      const sql = postgres(url!, { max: 1, onnotice: () => {} });
      const [counts] = await sql`
        select (select count(*) from workforce.individuals)::int as individuals,
               (select count(*) from workforce.shift_assignments)::int as shifts,
               (select count(*) from workforce.individual_certifications)::int as credentials`;
      // Every run that ended, ended ok. A run still open is a schedule's that fired once the first sync was done
      // (a cron at the minute the test runs in).
      const notOk =
        await sql`select stream, outcome from workforce.sync_runs where finished_at is not null and outcome is distinct from 'ok'`;
      const [first] = await sql`select count(*)::int as streams from workforce.sync_runs where finished_at is not null`;
      await sql.end();
      expect(counts!.individuals).toBeGreaterThan(100);
      expect(counts!.shifts).toBeGreaterThan(1000);
      expect(counts!.credentials).toBeGreaterThan(100);
      expect([...notOk]).toEqual([]);
      expect(first!.streams).toBeGreaterThanOrEqual(20);
    } finally {
      // Ctrl-C: the terminal signals the whole foreground process group (npm itself then exits by the signal).
      process.kill(-proc.pid!, 'SIGINT');
    }
    await waitFor(
      () => `a clean stop; output:\n${out.slice(-2000)}`,
      async () => out.includes('"msg":"stopped"'),
      20_000,
    );
    expect(out).not.toMatch(/TypeError|Unhandled|ERR_/);
    // The embedded Postgres went down with it.
    const after = postgres(url!, { max: 1, connect_timeout: 2, onnotice: () => {} });
    await expect(after`select 1`).rejects.toThrow();
    await after.end();
  }, 300_000);
});
