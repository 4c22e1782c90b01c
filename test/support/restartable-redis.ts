import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/warehouse/ports.ts';
import { spawnRedisServer } from './services.ts';

export interface RestartableRedis {
  url: string;
  /** SIGKILL: no goodbye to its clients, as a crash or a lost machine. */
  kill(): Promise<void>;
  /** SIGTERM: it closes its clients' connections and exits, as a host shutting down stops it. */
  shutDown(): Promise<void>;
  /** Starts it again on the same port, with what it had written to its append-only file. */
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

/**
 * A redis-server of a test's own, on a fixed port, configured as production's (append-only file synced at every
 * write, noeviction), so it can be killed under running processes and come back with the queue it held.
 */
export async function startRestartableRedis(): Promise<RestartableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-redis-'));
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = await spawnRedisServer([
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
    ]);
  };
  const stop = async (signal: NodeJS.Signals) => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    kill: () => stop('SIGKILL'),
    shutDown: () => stop('SIGTERM'),
    start,
    destroy: async () => {
      await stop('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
