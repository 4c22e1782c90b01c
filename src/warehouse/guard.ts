import type { Logger } from '../log.ts';
import { isConnectionError } from './outage.ts';

/**
 * postgres.js 3.4.x (up to 3.4.9, the newest) may write to a connection's socket after it closed, from a
 * timer: `TypeError: Cannot read properties of null (reading 'write')` at `nextWrite` (porsager/postgres#1066,
 * #1154, #1208; the fix, #1168, is not released). No caller can catch it, and by default it ends the process.
 * Our own transactions never reach it (pipeline.ts), but a library's might. This recognizes exactly that error
 * and keeps the process up: the statement it was sending fails or is sent again on a new connection, and the
 * page it belonged to is retried. Every other uncaught error still ends the process, as it would without this.
 */
export function isDriverClosedSocketWrite(err: unknown): boolean {
  if (!(err instanceof TypeError)) return false;
  if (err.message !== "Cannot read properties of null (reading 'write')") return false;
  const frames = (err.stack ?? '').split('\n').slice(1, 3).join('\n');
  return /\bnextWrite\b/.test(frames) && /[\\/]postgres[\\/](cjs[\\/])?src[\\/]connection\.js/.test(frames);
}

/**
 * postgres.js reads the server's array types on each new connection (`fetchArrayTypes`) without awaiting it:
 * when that connection fails (a Postgres restart while it was being set up), the rejection of its query is
 * unhandled, and ends the process. Nothing of ours waited for that query; the statements that did fail with
 * the same error, or go out on the next connection. Recognized by the connection error and the query it failed.
 */
export function isDriverTypesQueryFailure(err: unknown): boolean {
  if (!isConnectionError(err)) return false;
  const query = (err as { query?: unknown }).query;
  return typeof query === 'string' && /\btyparray\b/.test(query) && /pg_catalog\.pg_type\b/.test(query);
}

let installed = false;

/** Installs the guard once for this process (the CLI's processes; tests run without it). */
export function guardDriverSocketBug(log: Logger): void {
  if (installed) return;
  installed = true;
  let seen = 0;
  process.on('uncaughtException', (err, origin) => {
    if (isDriverClosedSocketWrite(err)) {
      seen++;
      log.warn(
        { occurrences: seen },
        'postgres.js wrote to a closed warehouse connection (porsager/postgres#1154); the process goes on',
      );
      return;
    }
    if (origin === 'unhandledRejection' && isDriverTypesQueryFailure(err)) {
      log.warn(
        { reason: (err as Error).message },
        'a new warehouse connection failed while postgres.js read its array types; the process goes on',
      );
      return;
    }
    // What Node does with an uncaught exception when no one listens: print it and exit.
    process.stderr.write(
      `${origin === 'unhandledRejection' ? 'Unhandled rejection' : 'Uncaught exception'}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  });
}
