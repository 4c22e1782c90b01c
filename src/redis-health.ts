import type { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Redis going away shows up as an 'error' event on every connection (ours, BullMQ's duplicates) at every
 * reconnection attempt: hundreds of lines a minute, each the same. This keeps one state per process and logs
 * its changes only: one line when Redis becomes unreachable, one when it is back.
 */
export interface RedisHealth {
  /** Listens to a connection's (or a BullMQ queue's or worker's) errors and readiness. */
  watch(source: EventEmitter): void;
  readonly down: boolean;
}

/** One per process: its connections (queue, workers, limiter) share one Redis, so they share its outages. */
let shared: RedisHealth | undefined;

export function redisHealth(log: Logger): RedisHealth {
  shared ??= makeHealth(log);
  return shared;
}

/** Socket codes and ioredis's words for a connection that is gone; anything else is an error of a command. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
]);
const CONNECTION_WORDS = /connection is closed|connect ETIMEDOUT|Stream isn't writeable|reached the max retries/i;

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return CONNECTION_WORDS.test(err instanceof Error ? err.message : String(err));
}

function makeHealth(log: Logger): RedisHealth {
  let since: number | undefined;
  const onError = (err: unknown) => {
    // A lock BullMQ could not renew or found missing is a job's trouble (its run stops on its own), not an outage.
    if (!isConnectionError(err)) {
      log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'queue error');
      return;
    }
    if (since !== undefined) return;
    since = Date.now();
    log.warn(
      { reason: err instanceof Error ? err.message : String(err) },
      'Redis unreachable; jobs wait for it, and running jobs go on',
    );
  };
  const onReady = () => {
    if (since === undefined) return;
    log.info({ downMs: Date.now() - since }, 'Redis is back');
    since = undefined;
  };
  return {
    watch: (source) => {
      source.on('error', onError);
      source.on('ready', onReady);
      // BullMQ's workers and queues say 'ready' only once; their connections say it after every reconnection.
      source.on('resumed', onReady);
    },
    get down() {
      return since !== undefined;
    },
  };
}

/** How long a process waits for Redis at start-up before it stops. */
export const REDIS_STARTUP_MS = 15_000;

/** The error a command stops with when Redis is not there at start-up; one line, naming the setting. */
export class RedisUnreachableError extends Error {
  override readonly name = 'RedisUnreachableError';
  readonly code = 'EREDIS';
}

/** Waits up to `timeoutMs` for the connection to answer a PING; one that does not says why, as its last error did. */
export async function waitForRedis(connection: Redis, url: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let last: string | undefined;
  const noted = (err: Error) => {
    last = err.message;
  };
  connection.on('error', noted);
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const why = last ? ` (${last})` : '';
      const within = `within ${Math.round(timeoutMs / 1000)} s`;
      reject(
        new RedisUnreachableError(`setting REDIS_URL: Redis at ${withoutPassword(url)} did not answer ${within}${why}`),
      );
    }, timeoutMs);
  });
  try {
    await Promise.race([connection.ping(), deadline]);
  } finally {
    clearTimeout(timer);
    connection.off('error', noted);
  }
}

function withoutPassword(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
}

/**
 * How long a stopping process waits for Redis to answer what it still has to say (a job put back on the queue, a
 * lock released, QUIT). A Redis that is gone never answers: its commands wait in the connection's queue forever.
 */
export const REDIS_GOODBYE_MS = 3_000;

/**
 * Whether `done` settles within `ms`, and before `signal` aborts: a run told to stop does not wait for a command
 * that Redis, going away, may never answer.
 */
export async function settlesWithin(done: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    onAbort = () => resolve(false);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([
      done.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Ends a connection: QUIT, so the replies in flight arrive, when Redis answers within REDIS_GOODBYE_MS; else at
 * once, which also stops its reconnection attempts (they would keep the process alive).
 */
export async function closeRedis(connection: Redis, waitMs = REDIS_GOODBYE_MS): Promise<void> {
  if (connection.status === 'ready') await settlesWithin(connection.quit(), waitMs);
  connection.disconnect();
}
