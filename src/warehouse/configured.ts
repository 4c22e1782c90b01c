import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { openWarehouse, type Warehouse } from './connection.ts';
import type { PersonalCatalog } from './personal-data/catalog.ts';
import { isConnectionError } from './outage.ts';
import { causesOf, describeRefusal, postgresRefusalOf } from './postgres-error.ts';

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

/**
 * Why the warehouse could not be opened: no answer from its server; its login refused (or its database missing);
 * a statement of the migration refused (a privilege the role lacks); or something else failed on the way.
 */
export type WarehouseErrorKind = 'unreachable' | 'login_refused' | 'refused' | 'failed';

/** The warehouse could not be reached or migrated, in one line naming it (never its password) and the cause. */
export class WarehouseError extends Error {
  override readonly name = 'WarehouseError';
  constructor(
    readonly kind: WarehouseErrorKind,
    message: string,
    /** Postgres's SQLSTATE, or the driver's or socket's code. */
    readonly code: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** SQLSTATE classes of a login refused (28) or a database that does not exist (3D). */
const LOGIN_REFUSED = /^(28|3D)/;

/** The warehouse could not be reached or migrated: say which one, without its password, and what Postgres said. */
export function warehouseError(config: Config, e: unknown): WarehouseError {
  const where = config.databaseUrl
    ? `DATABASE_URL ${withoutPassword(config.databaseUrl)}`
    : `the embedded Postgres under ${config.dataDir}`;
  const refusal = postgresRefusalOf(e);
  const root = causesOf(e).at(-1);
  const code = refusal?.code ?? (root as { code?: unknown } | undefined)?.code;
  const codeOf = typeof code === 'string' ? code : undefined;
  if (refusal && LOGIN_REFUSED.test(refusal.code))
    return new WarehouseError('login_refused', `warehouse at ${where}: ${describeRefusal(refusal)}`, codeOf, {
      cause: e,
    });
  if (refusal)
    return new WarehouseError(
      'refused',
      `warehouse at ${where}: migration refused: ${describeRefusal(refusal)}`,
      codeOf,
      {
        cause: e,
      },
    );
  const kind = isConnectionError(root) ? 'unreachable' : 'failed';
  return new WarehouseError(kind, `warehouse at ${where}: ${root?.message ?? String(e)}`, codeOf, { cause: e });
}

export function withoutPassword(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** Where to connect with psql: the embedded warehouse in full (its password is a fixed local one), a server's without its password. */
export function shownUrl(config: Config, warehouse: Warehouse): string {
  return config.databaseUrl ? withoutPassword(warehouse.url) : warehouse.url;
}
