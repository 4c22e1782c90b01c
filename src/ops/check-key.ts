import type { RateLimit } from '../config.ts';
import { log as rootLog, type Logger } from '../log.ts';
import { createRateLimiter } from '../ratelimit/index.ts';
import { clockProbe } from '../resources/index.ts';
import { SourceClient } from '../source/client.ts';
import { isSourceError } from '../source/errors.ts';

/** What one request with a key said about it: accepted, or why not, in the service's words. */
export type KeyCheck = { ok: true } | { ok: false; kind: 'key_refused' | 'service_unreachable'; message: string };

/**
 * Sends one cheap authenticated request (the reference list the client reads the service's clock with) with `apiKey`, so a company is not added,
 * nor its key rotated, with a key the service refuses or an address that does not answer. A key refused only a
 * scope is a key the service knows: the sync's own runs say which scope it lacks.
 */
export async function checkApiKey(o: {
  baseUrl: string;
  apiKey: string;
  rateLimit: RateLimit;
  timeoutMs?: number;
  logger?: Logger;
}): Promise<KeyCheck> {
  const limiter = createRateLimiter({ rateLimit: o.rateLimit });
  const client = new SourceClient({
    baseUrl: o.baseUrl,
    apiKey: o.apiKey,
    limiter,
    maxRetries: 1,
    timeoutMs: o.timeoutMs ?? 15_000,
    backoff: { baseMs: 200, capMs: 1000 },
    logger: o.logger ?? rootLog,
  });
  try {
    await client.all(clockProbe, {});
    return { ok: true };
  } catch (err) {
    if (isSourceError(err, 'auth'))
      return {
        ok: false,
        kind: 'key_refused',
        message: `the service at ${o.baseUrl} refused the API key (${err.status ?? 401})`,
      };
    if (isSourceError(err, 'scope')) return { ok: true };
    if (isSourceError(err)) {
      const why =
        err.kind === 'network' || err.kind === 'timeout'
          ? `no answer (${err.code ?? err.kind})`
          : `${err.kind}: ${err.message}`;
      return {
        ok: false,
        kind: 'service_unreachable',
        message: `the service at ${o.baseUrl} could not be asked: ${why}`,
      };
    }
    throw err;
  } finally {
    await client.close().catch(() => undefined);
    await limiter.close();
  }
}
