import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { openWarehouse, type Warehouse } from './connection.ts';
import type { PersonalCatalog } from './personal-data/catalog.ts';

/** The configured warehouse, migrated; one line naming it when it cannot be reached or migrated. */
export async function openMigratedWarehouse(config: Config, log: Logger, catalog: PersonalCatalog): Promise<Warehouse> {
  let warehouse: Warehouse | undefined;
  try {
    warehouse = await openWarehouse({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      schema: config.dbSchema,
      logger: log,
      outageMs: config.dbOutageMs,
      personalDataKey: config.personalDataKey,
      catalog,
    });
    await warehouse.migrate();
    return warehouse;
  } catch (e) {
    await warehouse?.close().catch(() => undefined);
    throw warehouseError(config, e);
  }
}

/** The warehouse could not be reached or migrated: say which one, without its password. */
export function warehouseError(config: Config, e: unknown): Error {
  const where = config.databaseUrl
    ? `DATABASE_URL ${withoutPassword(config.databaseUrl)}`
    : `the embedded Postgres under ${config.dataDir}`;
  const err = new Error(`warehouse at ${where}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  (err as Error & { code?: unknown }).code = (e as { code?: unknown })?.code;
  return err;
}

export function withoutPassword(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** Where to connect with psql: the embedded warehouse in full (its password is a fixed local one), a server's without its password. */
export function shownUrl(config: Config, warehouse: Warehouse): string {
  return config.databaseUrl ? withoutPassword(warehouse.url) : warehouse.url;
}
