import { pino, type Logger } from 'pino';
import type { RunningSandbox } from '../../src/sandbox/index.ts';
import { SourceClient, type SourceClientOptions } from '../../src/source/client.ts';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import type { RateLimiter } from '../../src/ratelimit/types.ts';
import type { RateLimit } from '../../src/config.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import type { SyncContext } from '../../src/sync/context.ts';
import { freshDatabase } from './db.ts';
import { clockProbe, personalCatalog } from '../../src/resources/index.ts';

export interface TestSync {
  ctx: SyncContext;
  client: SourceClient;
  warehouse: Warehouse;
  limiter: RateLimiter;
  close(): Promise<void>;
}

export interface TestSyncOptions {
  /** Where the client sends its requests (a proxy in front of the sandbox); default the sandbox. */
  baseUrl?: string;
  client?: Partial<Omit<SourceClientOptions, 'baseUrl' | 'apiKey' | 'limiter'>>;
  log?: Logger;
  companyKey?: string;
  /** The client's limit; default 100 a second (the compressed limit of the tests). */
  rateLimit?: RateLimit;
  /** A warehouse already filled (migrated on opening); default a fresh database. */
  databaseUrl?: string;
  /** The warehouse's key for hashed personal fields (WFS_PERSONAL_DATA_KEY). */
  personalDataKey?: string;
}

/** A fresh warehouse database and a client of the sandbox (or of a proxy in front of it), ready for runStreams. */
export async function openTestSync(sandbox: RunningSandbox, opts: TestSyncOptions = {}): Promise<TestSync> {
  const warehouse = await openWarehouse({
    databaseUrl: opts.databaseUrl ?? (await freshDatabase({ migrated: true })),
    personalDataKey: opts.personalDataKey,
    catalog: personalCatalog,
  });
  await warehouse.migrate();
  const limiter = createRateLimiter({ rateLimit: opts.rateLimit ?? { limit: 100, periodMs: 1000 } });
  const log = opts.log ?? pino({ level: 'silent' });
  const client = new SourceClient({
    baseUrl: opts.baseUrl ?? sandbox.url,
    apiKey: sandbox.apiKey,
    limiter,
    logger: log,
    ...opts.client,
  });
  const ctx: SyncContext = {
    companyKey: opts.companyKey ?? 'acme',
    client,
    warehouse,
    log,
    now: () => client.serviceNow(),
    refreshClock: () => client.freshServiceNow(clockProbe, 0),
    formIds: sandbox.data.formIds(),
    runTypeIds: sandbox.data.runTypeIds(),
  };
  return {
    ctx,
    client,
    warehouse,
    limiter,
    close: async () => {
      await client.close();
      await limiter.close();
      await warehouse.close();
    },
  };
}
