import type { Logger } from 'pino';
import { formatRateLimit, type Config, type RateLimit } from '../config.ts';
import { createSealer, secretKeyOf } from '../warehouse/secret.ts';
import { CompanyRegistry } from '../sync/company-registry.ts';
import { mirrorEnvironmentCompanies, type NewCompany } from '../warehouse/company-records.ts';
import { rateLimiterMaker } from '../ratelimit/index.ts';
import type { RateLimiter } from '../ratelimit/types.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { openMigratedWarehouse } from '../warehouse/configured.ts';
import { personalCatalog } from '../resources/index.ts';
import { closeOwnOpenRuns, runEndsRecorded } from '../warehouse/runs.ts';
import { settlesWithin } from '../redis-health.ts';
import type { RunningSandbox } from '../sandbox/index.ts';
import type { CompanyContexts, SyncContext } from '../sync/context.ts';
import { Observers } from '../observers.ts';

/** What a process needs to run streams: the warehouse, the limiters, and a client per company of the companies table. */
export interface Environment extends CompanyContexts {
  warehouse: Warehouse;
  /** The limiter of the environment's own budget (WFS_RATE_LIMIT, or the built-in sandbox's). */
  limiter: RateLimiter;
  sandbox?: RunningSandbox;
  /** Every client, limiter wait, page and stream of this process reports here. */
  observers: Observers;
  /** The companies this process syncs, read again from the companies table while it runs. */
  companies: CompanyRegistry;
  /** The contexts of the companies not paused, as of the last refresh. */
  readonly contexts: SyncContext[];
  close(): Promise<void>;
}

/** The built-in sandbox for runs with no WFS_BASE_URL: small, quick, and said plainly. */
export const BUILT_IN_SANDBOX = { seed: 1, size: 'small', rateLimit: { limit: 100, periodMs: 1000 } } as const;

/**
 * The warehouse (migrated), one limiter per budget and a client per company of the companies table (the
 * environment's companies mirrored into it first), all reporting to `observers`. The sandbox module is loaded
 * only when there is no WFS_BASE_URL: a production process never loads it.
 */
export async function openEnvironment(config: Config, log: Logger, observers = new Observers()): Promise<Environment> {
  const sandbox = config.sandbox ? await startBuiltInSandbox(log) : undefined;
  let warehouse: Warehouse;
  try {
    warehouse = await openMigratedWarehouse(config, log, personalCatalog);
  } catch (e) {
    await sandbox?.close();
    throw e;
  }
  const rateLimit = sandbox ? BUILT_IN_SANDBOX.rateLimit : config.rateLimit;
  // One limiter per budget: the companies on the same budget share it (each key still has its own count).
  const limiters = new Map<string, RateLimiter>();
  const makeLimiter = await rateLimiterMaker(config.redisUrl);
  const limiterFor = (budget: RateLimit): RateLimiter => {
    const name = formatRateLimit(budget);
    let l = limiters.get(name);
    if (!l) {
      l = makeLimiter({ rateLimit: budget, safetyMarginMs: config.rateLimitMarginMs, logger: log });
      limiters.set(name, l);
    }
    return l;
  };
  const limiter = limiterFor(rateLimit);
  const sealer = createSealer(secretKeyOf(config));
  const mirrored = environmentCompanies(config, sandbox);
  const environmentKeys = new Map(mirrored.map((c) => [c.key, c.apiKey]));
  const companies = new CompanyRegistry({
    warehouse,
    sealer,
    observers,
    log,
    retention: config.retention,
    limiterFor,
    refreshMs: config.companiesRefreshMs,
    environmentKeys,
  });
  try {
    await mirrorEnvironmentCompanies(warehouse, sealer, mirrored);
    await companies.start();
  } catch (e) {
    await companies.close();
    await Promise.allSettled([...limiters.values()].map((l) => l.close()));
    await warehouse.close().catch(() => undefined);
    await sandbox?.close();
    throw e;
  }
  return {
    warehouse,
    limiter,
    sandbox,
    observers,
    companies,
    get contexts() {
      return companies.contexts();
    },
    resolve: (key) => companies.resolve(key),
    close: async () => {
      const step = async (name: string, fn: () => Promise<unknown>) => {
        log.debug({ step: name }, 'stopping');
        await fn();
      };
      // The runs still going end after the page in flight and record it: the clients and the warehouse stay until then.
      await step('runs recording their end', () => runEndsRecorded(warehouse));
      await step('runs left open', () => closeLeftOpen(warehouse, log));
      await step('source clients', () => companies.close());
      await step('limiter', () => Promise.all([...limiters.values()].map((l) => l.close())));
      await step('warehouse', () => warehouse.close());
      if (sandbox) await step('sandbox', () => sandbox.close());
    },
  };
}

/** How long a stop waits to close the runs it left open: a warehouse that is away leaves them to the next process. */
const LEFT_OPEN_MS = 2_000;

/** Closes the runs this process left open (closeOwnOpenRuns), unless the warehouse does not answer in time. */
async function closeLeftOpen(warehouse: Warehouse, log: Logger): Promise<void> {
  const closing = closeOwnOpenRuns(warehouse).then(
    (n) => n > 0 && log.info({ runs: n }, 'runs this process left open recorded interrupted'),
    (err: unknown) =>
      log.warn({ err }, 'could not record the runs this process left open; the next process records them interrupted'),
  );
  await settlesWithin(closing, LEFT_OPEN_MS);
}

/**
 * The companies WFS_COMPANIES (or WFS_BASE_URL and WFS_API_KEY, or the built-in sandbox) names, with what each
 * falls back on resolved: the table mirrors them as managed by the environment.
 */
export function environmentCompanies(config: Config, sandbox?: RunningSandbox): NewCompany[] {
  return config.companies.map((company) => ({
    key: company.key,
    baseUrl: sandbox?.url ?? company.baseUrl!,
    apiKey: sandbox?.apiKey ?? company.apiKey,
    formIds: company.formIds ?? (config.formIds.length ? config.formIds : (sandbox?.data.formIds() ?? [])),
    runTypeIds:
      company.runTypeIds ?? (config.runTypeIds.length ? config.runTypeIds : (sandbox?.data.runTypeIds() ?? [])),
    rateLimit: sandbox ? BUILT_IN_SANDBOX.rateLimit : config.rateLimit,
  }));
}

async function startBuiltInSandbox(log: Logger): Promise<RunningSandbox> {
  const { startSandbox } = await import('../sandbox/index.ts');
  const sandbox = await startSandbox({ port: 0, ...BUILT_IN_SANDBOX });
  log.warn(
    { url: sandbox.url, size: BUILT_IN_SANDBOX.size },
    'WFS_BASE_URL is not set: syncing from the BUILT-IN SANDBOX (simulated data), not a real service',
  );
  return sandbox;
}
