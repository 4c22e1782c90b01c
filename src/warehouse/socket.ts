import { connect as netConnect, type Socket } from 'node:net';
import postgres, { type Options, type PostgresType, type Sql } from 'postgres';

/**
 * postgres.js leaves Nagle's algorithm on for its sockets. A message that ends with a small write (a COPY's
 * last data and CopyDone, the statements of a pipelined transaction) then waits for the server's delayed ACK,
 * about 40 ms on Linux, which held COPY inside a transaction to a few thousand rows a second. libpq turns
 * Nagle off; so do we, by handing postgres.js sockets we connect ourselves with TCP_NODELAY set.
 *
 * With a `socket` function postgres.js skips its own connect and starts talking at once: the startup message,
 * or the SSL request and then TLS over our socket (TLS keeps the no-delay of the TCP socket beneath it); what it
 * writes before the socket is connected waits in the socket's buffer.
 */

/** The parsed options postgres.js passes to its `socket` function (the parts we read). */
export interface SocketTarget {
  host: readonly string[];
  port: readonly number[];
  /** A Unix socket instead of TCP. */
  path?: string | false;
}

export type SocketFactory = (target: SocketTarget) => Promise<Socket>;

/**
 * postgres.js's `socket` option: each call starts connecting a new socket with no-delay set. Several hosts are
 * tried one after another, one per call, as postgres.js does for the sockets it connects.
 *
 * The socket is handed over while it still connects, as postgres.js's own are: a connection that fails then
 * fails with the socket's 'error' and 'close', which postgres.js handles by failing the query and connecting
 * again later. A factory that rejected instead would leave that postgres.js connection in its "connecting"
 * state for good, and the queries queued for it would wait forever (what a warehouse restart looked like).
 * postgres.js's connect_timeout covers the wait: its timer starts as soon as it has the socket.
 */
export function noDelaySockets(): SocketFactory {
  let next = 0;
  return async (target) => {
    if (target.path) return connecting({ path: target.path });
    const i = next++ % target.host.length;
    const host = target.host[i]!;
    const port = target.port[i] ?? target.port[0]!;
    // postgres.js names the TLS server by `socket.host` (SNI, verify-full) and reports errors by host and port.
    return Object.assign(connecting({ host, port }), { host, port });
  };
}

function connecting(where: { host: string; port: number } | { path: string }): Socket {
  const socket = netConnect(where);
  // Applied once connected; a Unix socket has no Nagle to turn off.
  if ('host' in where) socket.setNoDelay(true);
  return socket;
}

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
