import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { embeddedCluster, FAST_FLAGS } from './services.ts';
import { freePort } from '../../src/warehouse/ports.ts';

export interface RestartablePostgres {
  /** The `wfsync` database on it. */
  url: string;
  /** A fast shutdown (SIGINT, as `pg_ctl -m fast`): sessions are ended and in-flight transactions rolled back. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>;
}

/** A Postgres of a test's own, on a fixed port, that can be stopped and started again under running processes. */
export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-restart-'));
  chmodSync(dir, 0o755);
  const pg = await embeddedCluster(join(dir, 'data'), port, FAST_FLAGS);
  await pg.start();
  const admin = postgres(`postgres://wfsync:wfsync@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
  await admin.unsafe('create database wfsync');
  await admin.end();
  return {
    url: `postgres://wfsync:wfsync@127.0.0.1:${port}/wfsync`,
    stop: () => pg.stop(),
    start: () => pg.start(),
    destroy: async () => {
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
