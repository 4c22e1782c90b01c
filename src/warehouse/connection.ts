import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Sql } from 'postgres';
import type { Logger } from '../log.ts';
import { startEmbedded } from './embedded.ts';
import { postgresAt } from './socket.ts';
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

/** Postgres identifiers we create: the schema name is spliced into SQL, so it must be plain. */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Settings of this service's own sessions, sent when each connects (the server's configuration is left alone).
 * A page's statements are short and many: JIT-compiling them, which a stock Postgres does once a plan's estimate
 * passes jit_above_cost (unnested parameter arrays are estimated high), costs a stock Postgres much of its CPU
 * per page and never pays back.
 */
export const SESSION_SETTINGS = { jit: 'off' } as const;

export function connect(url: string, max = 10, onclose?: () => void): Sql {
  const options = {
    max,
    onnotice: () => {},
    onclose,
    // Keep date-only values as written: a JS Date would move them to the process's time zone.
    types: { dateOnly: { to: 1082, from: [1082], serialize: (x: unknown) => String(x), parse: (x: string) => x } },
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
