import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { rootClusterDir } from '../../src/warehouse/embedded-root.ts';
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
    await waitFor(
      () => `the embedded Postgres: ${first.output().slice(-2000)}`,
      async () => first.output().includes('embedded Postgres started'),
      120_000,
      200,
    );
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

  it.runIf(process.getuid?.() === 0)(
    'as root, under a private (0700) directory, runs its cluster where the postgres user can reach it, and finds it again',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'wfsync-private-'));
      dirs.push(dir);
      const dataDir = join(dir, '.wfsync');
      dirs.push(dirname(rootClusterDir(dataDir)));
      const first = spawnWfsync(['sync', '--once', '--streams', 'departments', '--json'], { LOG_LEVEL: 'error' }, dir);
      const { code } = await first.exited();
      expect(code, first.output()).toBe(0);
      expect(readFileSync(join(dataDir, 'pg-location'), 'utf8')).toContain(rootClusterDir(dataDir));
      expect(existsSync(join(rootClusterDir(dataDir), 'PG_VERSION'))).toBe(true);
      // The same cluster serves the next run: the departments synced before are there.
      const status = spawnWfsync(['status', '--json'], { LOG_LEVEL: 'error' }, dir);
      expect((await status.exited()).code, status.output()).toBe(0);
      expect(status.output()).toMatch(/"stream": ?"departments"/);
    },
    240_000,
  );
});
