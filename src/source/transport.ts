import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../log.ts';
import { outcomeOf, streamRun, type Observers, type RequestEvent } from '../observers.ts';
import type { Lane, RateLimiter, ServiceFeedback } from '../ratelimit/types.ts';
import { resendOf, type Endpoint } from './endpoints.ts';
import { errorFromResponse, SourceError } from './errors.ts';
import type { Http, HttpResponse, OpenResponse } from './http.ts';
import { parseJson } from './json-body.ts';
import { feedbackOf, headerNumber } from './rate-headers.ts';
import { backoffMs, sleep, untilReset, type BackoffOptions } from './retry.ts';
import type { ServiceClock } from './service-clock.ts';

/**
 * The requests of one API key: each waits for the shared limiter, tells it what the service said about the
 * budget, and is retried when retrying is safe. What the answers mean (pages, records) is for its callers.
 */

export interface TransportOptions {
  http: Http;
  limiter: RateLimiter;
  /** The hash of the key in use (a getter: a rotated key has its own budget from its first request). */
  limiterKey: string | (() => string);
  maxRetries: number;
  backoff: BackoffOptions;
  clock: ServiceClock;
  log: Logger;
  observers?: Observers;
  /** The company this key serves, named in what it reports. */
  company?: string;
}

export interface RequestOptions {
  /** Limiter lane; default the endpoint's own, else 'incremental'. */
  lane?: Lane;
  signal?: AbortSignal;
  /** Gives up the wait for the limiter, never a request sent (a page asked for ahead that is no longer wanted). */
  waitSignal?: AbortSignal;
}

export interface OutgoingCall {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface SourceStats {
  /** HTTP requests sent, retries included. */
  requests: number;
  retries: number;
  /** Responses that were 429 or 403 `rate_limit_exceeded`. */
  rateLimited: number;
  /** Response body bytes received. */
  bytes: number;
}

/** The hash that stands for an API key wherever a key must be named (the limiter, logs): never the key itself. */
export function keyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 24);
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/** Requests the catalog says may be sent again blindly; the others are checked by the push worker first. */
const isRepeatable = (e: Endpoint) => resendOf(e) === 'blind';

/** Errors after which the service surely did not act on the request. */
const notActedOn = (err: SourceError) => err.kind === 'rate_limit' || err.code === 'ECONNREFUSED';

/** How one attempt ended: its result, or the error with the reset instant a rate limit named. */
type Attempt<T> = { ok: true; result: T } | { ok: false; error: SourceError; resetAtMs?: number };

/** One attempt at a request: its endpoint and call, the limiter lane it waits in, and its number (0 the first). */
interface RequestTry {
  e: Endpoint;
  req: OutgoingCall;
  lane: Lane;
  attempt: number;
}

export class Transport {
  readonly maxRetries: number;
  readonly #o: TransportOptions;
  readonly #limiterKey: () => string;
  readonly #stats: SourceStats = { requests: 0, retries: 0, rateLimited: 0, bytes: 0 };

  constructor(opts: TransportOptions) {
    this.#o = opts;
    const key = opts.limiterKey;
    this.#limiterKey = typeof key === 'string' ? () => key : key;
    this.maxRetries = opts.maxRetries;
  }

  get limiterKey(): string {
    return this.#limiterKey();
  }

  /** One request with its retries, its 2xx body read whole as JSON (a body that is not is another attempt). */
  json(e: Endpoint, req: OutgoingCall, opts: RequestOptions): Promise<unknown> {
    return this.call(e, req, opts, (res) => parseJson(e.name, res));
  }

  /** One request with its retries; `read` turns a 2xx response into the result, and may throw a retryable error. */
  call<T>(e: Endpoint, req: OutgoingCall, opts: RequestOptions, read: (res: HttpResponse) => T): Promise<T> {
    return this.attempts(e, req, opts, async (open) => read(await this.whole(open)));
  }

  /**
   * The attempts of one request: `take` gets each 2xx response with its headers in and its body unread, and
   * its result is the call's; a retryable error it throws (a body cut short) is another attempt.
   */
  async attempts<T>(
    e: Endpoint,
    req: OutgoingCall,
    callerOpts: RequestOptions,
    take: (res: OpenResponse) => Promise<T>,
  ): Promise<T> {
    const opts = ownSignal(callerOpts);
    const lane = opts.lane ?? e.lane ?? 'incremental';
    const mayRetry = (err: SourceError) => err.retryable && (isRepeatable(e) || notActedOn(err));
    for (let attempt = 0; ; attempt++) {
      const done = await this.#attempt({ e, req, lane, attempt }, opts, take);
      if (done.ok) return done.result;
      if (!mayRetry(done.error) || attempt >= this.maxRetries) throw done.error;
      await this.pause(e, done.error, attempt, { signal: opts.signal, resetAtMs: done.resetAtMs });
    }
  }

  /**
   * Waits before another try after `error`. A rate limit waits for the reset; the backoff is a floor for when
   * the reset is unknown, or already past by our clock. `note` adds fields to the retry's log line.
   */
  async pause(
    e: Endpoint,
    error: SourceError,
    attempt: number,
    at: { signal?: AbortSignal; resetAtMs?: number; note?: object },
  ): Promise<void> {
    const { signal, resetAtMs, note } = at;
    const backoff = backoffMs(attempt, this.#o.backoff);
    const delay = error.kind === 'rate_limit' ? Math.max(untilReset(resetAtMs), backoff) : backoff;
    this.#stats.retries++;
    // Retries are routine (metrics count them); the error that outlasts them is the one line worth reading.
    this.#o.log.debug(
      {
        endpoint: e.name,
        kind: error.kind,
        status: error.status,
        attempt,
        delayMs: delay,
        err: error.message,
        ...note,
      },
      'retrying request',
    );
    await sleep(delay, signal);
  }

  async #attempt<T>(t: RequestTry, opts: RequestOptions, take: (res: OpenResponse) => Promise<T>): Promise<Attempt<T>> {
    const { e, req, lane, attempt } = t;
    let resetAtMs: number | undefined;
    let sentAt: number | undefined;
    let status: number | undefined;
    try {
      sentAt = await this.#waitForBudget(lane, opts);
      const res = await this.#send(e, req, opts.signal);
      status = res.status;
      const feedback = feedbackOf(res);
      resetAtMs = feedback.resetAtMs;
      const refusal = isSuccess(res.status) ? undefined : this.#errorOf(e, await this.whole(res), resetAtMs);
      this.#o.clock.observe(res.headers, !refusal);
      await this.#tellLimiter(res.headers, feedback, refusal?.kind === 'rate_limit', opts.signal);
      this.#o.log.debug({ endpoint: e.name, status: res.status, ms: Date.now() - sentAt, attempt }, 'response');
      if (refusal) throw refusal;
      const result = await take(res);
      this.#report(t, sentAt, status);
      return { ok: true, result };
    } catch (err) {
      if (sentAt !== undefined) this.#report(t, sentAt, status, err);
      if (!(err instanceof SourceError)) throw err;
      return { ok: false, error: err, resetAtMs };
    }
  }

  /** Waits for the limiter; returns when the request may be sent (our clock). */
  async #waitForBudget(lane: Lane, opts: RequestOptions): Promise<number> {
    const waitFrom = Date.now();
    const { waitSignal, signal } = opts;
    const either = waitSignal ? AbortSignal.any([waitSignal, ...(signal ? [signal] : [])]) : signal;
    await this.#o.limiter.acquire(this.limiterKey, lane, either);
    const sentAt = Date.now();
    this.#o.observers?.emit('limiterWait', {
      company: this.#o.company,
      key: this.limiterKey,
      lane,
      waitMs: sentAt - waitFrom,
    });
    return sentAt;
  }

  /** Tells the observers how one attempt ended. */
  #report({ e, req, lane, attempt }: RequestTry, sentAt: number, status?: number, err?: unknown): void {
    const run = streamRun.getStore();
    if (!this.#o.observers && !run?.onRequest) return;
    const kind =
      err instanceof SourceError
        ? err.kind
        : err instanceof Error && err.name === 'AbortError'
          ? 'aborted'
          : err
            ? 'network'
            : undefined;
    const event: RequestEvent = {
      company: this.#o.company,
      key: this.limiterKey,
      endpoint: e.name,
      method: req.method,
      lane,
      status,
      outcome: outcomeOf(status, kind),
      durationMs: Date.now() - sentAt,
      attempt,
      stream: run?.stream,
    };
    run?.onRequest?.(event);
    this.#o.observers?.emit('request', event);
  }

  async #send(e: Endpoint, req: OutgoingCall, signal: AbortSignal | undefined): Promise<OpenResponse> {
    this.#stats.requests++;
    return this.#o.http.open({ endpoint: e.name, method: req.method, path: req.path, body: req.body, signal });
  }

  /** A response's whole body, counted. */
  async whole(open: OpenResponse): Promise<HttpResponse> {
    const res = await open.text();
    this.#stats.bytes += res.body.length;
    return res;
  }

  /** Counts body bytes read as they arrive (a streamed list). */
  received(bytes: number): void {
    this.#stats.bytes += bytes;
  }

  #errorOf(e: Endpoint, res: HttpResponse, resetAtMs: number | undefined): SourceError {
    const waitS = resetAtMs === undefined ? undefined : untilReset(resetAtMs) / 1000;
    return errorFromResponse(e.name, res.status, this.#o.http.scrub(res.text), waitS);
  }

  /** Tells the limiter (and the observers) what the response said about the budget; a run told to stop does not wait for it. */
  async #tellLimiter(
    headers: IncomingHttpHeaders,
    feedback: ServiceFeedback,
    limited: boolean,
    signal?: AbortSignal,
  ): Promise<void> {
    if (limited) {
      feedback.limited = true;
      this.#stats.rateLimited++;
    }
    if (Object.keys(feedback).length === 0) return;
    const { company } = this.#o;
    const limit = headerNumber(headers, 'x-ratelimit-limit');
    this.#o.observers?.emit('budget', {
      company,
      key: this.limiterKey,
      limit,
      remaining: feedback.remaining,
      resetAtMs: feedback.resetAtMs,
    });
    try {
      await this.#o.limiter.observe(this.limiterKey, feedback, signal);
    } catch (err) {
      // The response is good whatever the limiter's store did; dropping it would cost another request.
      const message = err instanceof Error ? this.#o.http.scrub(err.message) : String(err);
      this.#o.log.warn({ err: message }, 'limiter observe failed');
    }
  }

  stats(): SourceStats {
    return { ...this.#stats };
  }

  close(): Promise<void> {
    return this.#o.http.close();
  }
}

/**
 * The options with a signal of the call's own, joined to the caller's. The caller's signal is shared by every page
 * in flight of a stream's reads (sixteen and more at once): a call's request and its waits (for the limiter, before
 * a retry) listen on its own signal, as a listener each on the shared one would pass Node's bound of ten and print
 * a warning of a leak that is not one.
 */
function ownSignal(opts: RequestOptions): RequestOptions {
  return opts.signal ? { ...opts, signal: AbortSignal.any([opts.signal]) } : opts;
}
