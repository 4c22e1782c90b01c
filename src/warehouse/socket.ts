import postgres, { type Options, type PostgresType, type Sql } from 'postgres';

/**
 * A URL whose query names a directory as its host, as libpq reads it (`postgres://u:p@localhost/db?host=/run/postgresql`),
 * means Postgres's Unix socket in that directory, on the URL's port. postgres.js takes the host from the URL's
 * authority only and would send the parameter to the server as a setting, so it moves to postgres.js's `path`.
 */
export function unixSocketOf(url: string): { url: string; path?: string } {
  const parsed = new URL(url);
  const dir = parsed.searchParams.get('host');
  if (!dir?.startsWith('/')) return { url };
  parsed.searchParams.delete('host');
  return { url: parsed.toString(), path: `${dir}/.s.PGSQL.${parsed.port || 5432}` };
}

/**
 * Seconds a client waits before connecting again after a connection failed, by how many have failed since one
 * last succeeded. postgres.js's own wait grows to 20 s after seven failures, and a query queued meanwhile waits
 * for that attempt: an outage of a few seconds then held pages, the outage's bound and the shutdown for up to
 * 20 s more. The callers pace their own retries (outage.ts: 200 ms doubling to 2 s), so this one stays short.
 */
function reconnectBackoff(failures: number): number {
  return Math.min(0.05 * 2 ** failures, 0.5);
}

/** A postgres.js client of the server `url` names, through its Unix socket when it names one (unixSocketOf). */
export function postgresAt<T extends Record<string, PostgresType>>(url: string, options: Options<T>): Sql {
  const server = unixSocketOf(url);
  const withBackoff = { backoff: reconnectBackoff, ...options };
  return postgres(server.url, server.path ? { ...withBackoff, path: server.path } : withBackoff) as unknown as Sql;
}
