import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnWfsync, waitFor } from '../support/processes.ts';

const dirs: string[] = [];
const leftRunning: number[] = [];
afterAll(() => {
  for (const pid of leftRunning) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // gone already
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the embedded Postgres', () => {
  it('left running by a wfsync killed with SIGKILL is stopped by the next one, which then starts its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfsync-orphan-'));
    dirs.push(dir);
    chmodSync(dir, 0o755);
    const env = { WFS_DATA_DIR: join(dir, '.wfsync'), WFS_HTTP_PORT: '0', LOG_LEVEL: 'info' };
    const first = spawnWfsync(['start'], env, dir);
    await waitFor(() => `the embedded Postgres: ${first.output().slice(-2000)}`, async () => first.output().includes('embedded Postgres started'), 120_000, 200);
    const pidFile = join(dir, '.wfsync', 'pg', 'postmaster.pid');
    const orphan = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    leftRunning.push(orphan);
    first.proc.kill('SIGKILL');
    await first.exited();
    expect(alive(orphan)).toBe(true);

    const second = spawnWfsync(['migrate'], env, dir);
    const { code } = await second.exited();
    expect(code, second.output()).toBe(0);
    expect(second.output()).toContain('stopping the embedded Postgres a previous wfsync left running');
    expect(alive(orphan)).toBe(false);
  }, 180_000);

  it.runIf(process.getuid?.() === 0)('as root, under a private (0700) directory, stops with one line that says what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfsync-private-'));
    dirs.push(dir);
    const migrate = spawnWfsync(['migrate'], {}, dir);
    const { code } = await migrate.exited();
    const lines = migrate.output().trim().split('\n');
    expect(code).toBe(1);
    expect(lines, migrate.output()).toHaveLength(1);
    expect(lines[0]).toContain(`that user cannot enter ${dir} (mode 0700)`);
    expect(lines[0]).toMatch(/DATABASE_URL/);
    expect(migrate.output()).not.toMatch(/spawn|at \w+ \(/);
  }, 60_000);
});
