import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { SourceClient } from '../source/client.ts';
import { createRateLimiter } from '../ratelimit/index.ts';
import type { RateLimiter } from '../ratelimit/types.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { openMigratedWarehouse } from '../warehouse/configured.ts';
import type { RunningSandbox } from '../sandbox/index.ts';
import type { SyncContext } from '../sync/context.ts';
import { Observers } from '../observers.ts';
import { clockProbe } from '../resources/index.ts';

/** What a process needs to run streams: the warehouse, one limiter, and a client per company. */
export interface Environment {
  warehouse: Warehouse;
  limiter: RateLimiter;
  sandbox?: RunningSandbox;
  /** Every client, limiter wait, page and stream of this process reports here. */
  observers: Observers;
  contexts: SyncContext[];
  close(): Promise<void>;
}

/** The built-in sandbox for runs with no WFS_BASE_URL: small, quick, and said plainly. */
export const BUILT_IN_SANDBOX = { seed: 1, size: 'small', rateLimit: { limit: 100, windowMs: 1000 } } as const;

/**
 * The warehouse (migrated), one limiter and a client per company, all reporting to `observers`. The sandbox
 * module is loaded only when there is no WFS_BASE_URL: a production process never loads it.
 */
export async function openEnvironment(config: Config, log: Logger, observers = new Observers()): Promise<Environment> {
  const sandbox = config.sandbox ? await startBuiltInSandbox(log) : undefined;
  let warehouse: Warehouse;
  try {
    warehouse = await openMigratedWarehouse(config, log);
  } catch (e) {
    await sandbox?.close();
    throw e;
  }
  const rateLimit = sandbox ? BUILT_IN_SANDBOX.rateLimit : config.rateLimit;
  const limiter = createRateLimiter({
    rateLimit,
    redis: config.redisUrl,
    safetyMarginMs: config.rateLimitMarginMs,
    logger: log,
  });
  const contexts = config.companies.map((company): SyncContext => {
    const client = new SourceClient({
      company: company.key,
      observers,
      baseUrl: sandbox?.url ?? company.baseUrl!,
      apiKey: sandbox?.apiKey ?? company.apiKey,
      limiter,
      logger: log.child({ company: company.key }),
    });
    return {
      companyKey: company.key,
      client,
      warehouse,
      observers,
      log: log.child({ company: company.key }),
      now: () => client.serviceNow(),
      refreshClock: () => client.freshServiceNow(clockProbe),
      formIds: company.formIds ?? (config.formIds.length ? config.formIds : (sandbox?.data.formIds() ?? [])),
      runTypeIds:
        company.runTypeIds ?? (config.runTypeIds.length ? config.runTypeIds : (sandbox?.data.runTypeIds() ?? [])),
      retention: config.retention,
      budget: rateLimit,
    };
  });
  return {
    warehouse,
    limiter,
    sandbox,
    observers,
    contexts,
    close: async () => {
      const step = async (name: string, fn: () => Promise<unknown>) => {
        log.debug({ step: name }, 'stopping');
        await fn();
      };
      await step('source clients', () => Promise.allSettled(contexts.map((c) => c.client.close())));
      await step('limiter', () => limiter.close());
      await step('warehouse', () => warehouse.close());
      if (sandbox) await step('sandbox', () => sandbox.close());
    },
  };
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
