import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The warehouse going away for a while (a Postgres restart, a failover, a network blip) is weather, not a bug:
 * the statement in flight fails, the connection is made again, the work is retried. These tell such failures
 * from the ones retrying cannot fix.
 */

/** A transaction's session ended under it: Postgres rolled it back, and it is safe to run again. */
export class ConnectionLostError extends Error {
  override readonly name = 'ConnectionLostError';
  readonly code = 'CONNECTION_LOST';
}

/** The warehouse stayed away longer than the work waits for it. */
export class WarehouseUnavailableError extends Error {
  override readonly name = 'WarehouseUnavailableError';
  readonly code = 'EWAREHOUSE';
}

/** postgres.js's own codes for a connection that closed or could not be made. */
const DRIVER_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'CONNECTION_LOST']);
/** Node's socket errors. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);
/**
 * Postgres's: 08 connection exceptions; 57P01-57P03 shutdown and start-up (admin_shutdown, crash_shutdown,
 * cannot_connect_now); 53300 too_many_connections while the old connections of a restart are cleaned up.
 */
const SERVER_CODES = /^(08...|57P0[123]|53300)$/;

export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return DRIVER_CODES.has(code) || SOCKET_CODES.has(code) || SERVER_CODES.test(code);
}

export interface OutageOptions {
  /** How long the warehouse may stay away before the work gives up. */
  maxWaitMs: number;
  /** Told once when an outage starts (with the error), once when it ends. */
  onOutage?: (e: unknown) => void;
  onRecovered?: (downMs: number) => void;
  signal?: AbortSignal;
}

/**
 * Runs `fn`, and runs it again while it fails for want of the warehouse, for up to `maxWaitMs` from the first
 * failure, backing off from 200 ms to 2 s. `fn` must be safe to run twice (a page write is: it is one
 * transaction, and writing a page again changes nothing).
 */
export async function retryThroughOutage<T>(fn: () => Promise<T>, opts: OutageOptions): Promise<T> {
  let since: number | undefined;
  let delay = 200;
  for (;;) {
    try {
      const result = await fn();
      if (since !== undefined) opts.onRecovered?.(Date.now() - since);
      return result;
    } catch (e) {
      if (!isConnectionError(e) || opts.signal?.aborted) throw e;
      if (since === undefined) {
        since = Date.now();
        opts.onOutage?.(e);
      }
      const waited = Date.now() - since;
      if (waited >= opts.maxWaitMs) {
        throw new WarehouseUnavailableError(
          `the warehouse did not come back within ${Math.round(opts.maxWaitMs / 1000)} s: ${e instanceof Error ? e.message : String(e)}`,
          { cause: e },
        );
      }
      await sleep(Math.min(delay, opts.maxWaitMs - waited));
      delay = Math.min(delay * 2, 2000);
    }
  }
}
