import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { z } from 'zod';
import { log as rootLog, type Logger } from '../log.ts';
import type { Lane, RateLimiter, ServiceFeedback } from '../ratelimit/types.ts';
import { outcomeOf, streamRun, type Observers, type RequestEvent } from '../observers.ts';
import { endpoints, PAGE_LIMIT_MAX, resendOf, type Endpoint, type ItemOf, type QueryOf } from './endpoints.ts';
import { describeHtmlPage, errorFromResponse, htmlPageTitle, isSourceError, SourceError } from './errors.ts';
import { Http, type HttpResponse, type OpenResponse } from './http.ts';
import { IncompleteJson, JsonArraySplitter } from './json-array.ts';
import { declaredCount, formatIssues, parseItems, readContainer, readEnvelope, type Container, type Reject } from './paging.ts';
import { buildQuery } from './query.ts';
import { backoffMs, DEFAULT_BACKOFF, sleep, untilReset, type BackoffOptions } from './retry.ts';

export type { Reject } from './paging.ts';

export interface SourceClientOptions {
  baseUrl: string;
  apiKey: string;
  limiter: RateLimiter;
  /** Per request, from sending to the last byte of the body. Default 30 000. */
  timeoutMs?: number;
  /** For 5xx, resets, truncated bodies, timeouts and rate-limit refusals. Default 5. */
  maxRetries?: number;
  /** Size of the keep-alive connection pool. Default 8. */
  connections?: number;
  /** A pino child carrying company etc. */
  logger?: Logger;
  /** Backoff between retries (exponential, full jitter). Default 250 ms base, 15 s cap. */
  backoff?: BackoffOptions;
  /** Told of every attempt, limiter wait and budget the service reports. */
  observers?: Observers;
  /** The company this client serves, named in what it reports. */
  company?: string;
}

export interface PageResult<T> {
  items: T[];
  rejects: Reject[];
  /** Offset of the page's first record. */
  offset: number;
  hasMore: boolean;
  /** Envelope fields besides the paging ones (FormId, FormTitle, RunLogTypeId, ...). */
  extras: Record<string, unknown>;
}

export interface CallOptions {
  /** Limiter lane; default the endpoint's own, else 'incremental'. */
  lane?: Lane;
  signal?: AbortSignal;
  /** Envelope page size, 1..200; default 200. */
  pageSize?: number;
  /** Envelope offset to start at; default 0. */
  startOffset?: number;
  /**
   * Envelope pages asked for at once, at most (default 1). The page after one that says `HasMoreResults` is
   * always asked for before that page is handed out; further pages are asked for ahead only as a list proves
   * long (see `pagesAhead`), and those still waiting for the limiter when the list ends are never sent.
   */
  readAhead?: number;
}

export type Lookup<T> = { found: true; item: T } | { found: false };

export interface SourceStats {
  /** HTTP requests sent, retries included. */
  requests: number;
  retries: number;
  /** Responses that were 429 or 403 `rate_limit_exceeded`. */
  rateLimited: number;
  /** Response body bytes received. */
  bytes: number;
}

interface OutgoingCall {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

/** The hash that stands for an API key wherever a key must be named (the limiter, logs): never the key itself. */
export function keyHash(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 24);
}

/**
 * Records per page of a plain-array list read as it arrives: the engine writes each page before the next is
 * parsed, so a list of any length holds at most this many records (and their rows) at once.
 */
export const STREAMED_PAGE_ITEMS = 1000;

/** One request's options inside the client: `waitSignal` gives up its wait for the limiter, never a request sent. */
interface AttemptOptions extends CallOptions {
  waitSignal?: AbortSignal;
}

/** A page asked for: its offset, its body to come, and how to take the request back while it waits for the limiter. */
interface Asked {
  offset: number;
  body: Promise<unknown>;
  cancel: AbortController;
}

/**
 * How many pages of a list to have asked for once `full` pages came back full with more to come: the next one,
 * and one more for every 64 full pages seen. A list of up to 64 pages (every window of a backfill at `medium`)
 * never asks for a page past its end; a longer one (a whole list read at once) reads several pages at once and
 * asks for at most a few pages past its end, a small share of its own, of which those still waiting for the
 * limiter are never sent.
 */
export function pagesAhead(full: number): number {
  return 1 + Math.floor(full / 64);
}

/** A body that ended or broke before it was complete JSON: worth another try. */
function truncated(endpoint: string, status: number, detail: string): SourceError {
  return new SourceError('network', `${endpoint}: response body is not complete JSON (${detail}; truncated?)`, {
    endpoint,
    status,
    code: 'TRUNCATED_BODY',
  });
}

/** Epoch ms of `X-RateLimit-Reset`. The spec says unix seconds (possibly fractional); a small value is read as seconds from now. */
function resetAt(value: number, now: number): number {
  return value < 1e9 ? now + value * 1000 : value * 1000;
}

function headerNumber(headers: IncomingHttpHeaders, name: string): number | undefined {
  const raw = headers[name];
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** What a response's rate-limit headers say; `limited` is set by the caller once it knows the status meant it. */
function feedbackOf(res: { headers: IncomingHttpHeaders }): ServiceFeedback {
  const remaining = headerNumber(res.headers, 'x-ratelimit-remaining');
  const reset = headerNumber(res.headers, 'x-ratelimit-reset');
  const fb: ServiceFeedback = {};
  if (remaining !== undefined) fb.remaining = remaining;
  if (reset !== undefined) fb.resetAtMs = resetAt(reset, Date.now());
  return fb;
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * A 2xx body that is not JSON was cut short on the way: the request is worth another try. An HTML page is no
 * cut body but something other than the service answering.
 */
function parseJson(endpoint: string, res: HttpResponse): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    const title = htmlPageTitle(res.text);
    if (title !== undefined) {
      throw new SourceError('schema', `${endpoint}: HTTP ${res.status} with ${describeHtmlPage(title)}`, {
        endpoint,
        status: res.status,
        code: 'html_page',
      });
    }
    throw new SourceError('network', `${endpoint}: response body is not complete JSON (${res.bytes} bytes; truncated?)`, {
      endpoint,
      status: res.status,
      code: 'TRUNCATED_BODY',
    });
  }
}

/** Requests the catalog says may be sent again blindly; the others are checked by the push worker first. */
const isRepeatable = (e: Endpoint) => resendOf(e) === 'blind';

/** Errors after which the service surely did not act on the request. */
const notActedOn = (err: SourceError) => err.kind === 'rate_limit' || err.code === 'ECONNREFUSED';

/** Field → messages of a body that failed its schema. */
function fieldsOf(error: z.ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
    fields[key] = fields[key] ? `${fields[key]}; ${issue.message}` : issue.message;
  }
  return fields;
}

/**
 * The client of the workforce service: one per API key. Every request waits for the shared limiter,
 * tells it what the service said about the budget, and is retried when retrying is safe.
 */
export class SourceClient {
  readonly limiterKey: string;
  readonly #http: Http;
  readonly #limiter: RateLimiter;
  readonly #maxRetries: number;
  readonly #backoff: BackoffOptions;
  readonly #log: Logger;
  readonly #observers?: Observers;
  readonly #company?: string;
  readonly #stats: SourceStats = { requests: 0, retries: 0, rateLimited: 0, bytes: 0 };
  /** Endpoints already warned of for answering in another shape than documented. */
  readonly #shapesWarned = new Set<string>();
  /** The service's clock minus ours, from the last response's `Date` header. */
  #skewMs = 0;
  /** When (our clock) the service last told us its time. */
  #skewSeenAt = 0;

  constructor(opts: SourceClientOptions) {
    this.limiterKey = keyHash(opts.apiKey);
    this.#http = new Http({
      baseUrl: opts.baseUrl,
      apiKey: opts.apiKey,
      connections: opts.connections ?? 8,
      timeoutMs: opts.timeoutMs ?? 30_000,
    });
    this.#limiter = opts.limiter;
    this.#maxRetries = opts.maxRetries ?? 5;
    this.#backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.#observers = opts.observers;
    this.#company = opts.company;
    this.#log = (opts.logger ?? rootLog).child({ component: 'source', key: this.limiterKey });
  }

  /**
   * Reads a list endpoint page by page: envelopes one request per page, stopping when the service says
   * `HasMoreResults: false`; plain arrays and reference lists as one page holding everything.
   */
  async *pages<E extends Endpoint>(e: E, query: QueryOf<E>, opts: CallOptions = {}): AsyncIterable<PageResult<ItemOf<E>>> {
    if (e.response.kind === 'envelope') {
      yield* this.#envelopePages(e, query, opts);
      return;
    }
    const path = this.#listPath(e, query);
    if (e.response.kind === 'array') {
      yield* this.#streamedPages(e, path, opts);
      return;
    }
    const body = await this.#call(e, { method: 'GET', path }, opts, (res) => parseJson(e.name, res));
    const container = readContainer(e, body);
    this.#noteShape(e, container);
    yield this.#page(e, container.raw, 0, false, container.extras);
  }

  /**
   * A plain-array list read as its bytes arrive, in pages of STREAMED_PAGE_ITEMS records; `hasMore` is false on
   * the last page only. When the body breaks after pages were handed out, the whole list is read again from its
   * start: its pages come again (the writes are idempotent upserts), and no record can be skipped, as resuming
   * at a count could if the list changed between the two reads.
   */
  async *#streamedPages<E extends Endpoint>(e: E, path: string, opts: CallOptions): AsyncIterable<PageResult<ItemOf<E>>> {
    for (let attempt = 0; ; attempt++) {
      const open = await this.#attempts(e, { method: 'GET', path }, opts, async (o) => o);
      let handedOut = 0;
      try {
        for await (const page of this.#arrayPages(e, open)) {
          handedOut += page.items.length + page.rejects.length;
          yield page;
        }
        return;
      } catch (err) {
        if (!(err instanceof SourceError) || !err.retryable || attempt >= this.#maxRetries) throw err;
        const delay = backoffMs(attempt, this.#backoff);
        this.#stats.retries++;
        // The same line as any retry; `handedOut` says how many records will come again.
        this.#log.debug(
          { endpoint: e.name, kind: err.kind, status: err.status, attempt, delayMs: delay, err: err.message, fromStart: true, handedOut },
          'retrying request',
        );
        await sleep(delay, opts.signal);
      } finally {
        open.discard();
      }
    }
  }

  async *#arrayPages<E extends Endpoint>(e: E, open: OpenResponse): AsyncIterable<PageResult<ItemOf<E>>> {
    const splitter = new JsonArraySplitter();
    let pending: unknown[] = [];
    let offset = 0;
    try {
      for await (const chunk of open.body()) {
        this.#stats.bytes += chunk.length;
        for (const element of splitter.push(chunk)) {
          // A full page goes out once another record follows it, so that hasMore is true only when there is more.
          if (pending.length >= STREAMED_PAGE_ITEMS) {
            const at = offset;
            offset += pending.length;
            // Taken out of `pending` first: the raw records are not kept while the page is written.
            yield this.#page(e, pending.splice(0), at, true, {});
          }
          pending.push(element);
        }
      }
      splitter.end();
      if (!splitter.isArray) {
        // Not an array: an envelope, a single object or an HTML page, read whole by the tolerant readers.
        const text = splitter.wholeText();
        const body = parseJson(e.name, { status: open.status, headers: open.headers, text, bytes: Buffer.byteLength(text) });
        const container = readContainer(e, body);
        this.#noteShape(e, container);
        yield this.#page(e, container.raw, 0, false, container.extras);
        return;
      }
    } catch (err) {
      if (err instanceof IncompleteJson) throw truncated(e.name, open.status, err.message);
      throw err;
    }
    yield this.#page(e, pending, offset, false, {});
  }

  async *#envelopePages<E extends Endpoint>(e: E, query: QueryOf<E>, opts: CallOptions): AsyncIterable<PageResult<ItemOf<E>>> {
    const limit = opts.pageSize ?? PAGE_LIMIT_MAX;
    const first = opts.startOffset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) {
      throw new SourceError('bad_request', `${e.name}: pageSize must be an integer from 1 to ${PAGE_LIMIT_MAX}`, { endpoint: e.name });
    }
    if (!Number.isInteger(first) || first < 0) {
      throw new SourceError('bad_request', `${e.name}: startOffset must be a non-negative integer`, { endpoint: e.name });
    }
    const maxAhead = Math.max(1, Math.floor(opts.readAhead ?? 1));
    const ask = (offset: number): Asked => {
      const cancel = new AbortController();
      const path = `${e.path}?${buildQuery(e, query as Record<string, unknown>, { offset, limit })}`;
      const body = this.#call(e, { method: 'GET', path }, { ...opts, waitSignal: cancel.signal }, (res) => parseJson(e.name, res));
      // A page asked for ahead may never be awaited (the list ended first): its failure is nobody's.
      body.catch(() => undefined);
      return { offset, body, cancel };
    };
    const asked: Asked[] = [ask(first)];
    let full = 0;
    try {
      for (;;) {
        const { offset } = asked[0]!;
        // Read into a page here, so the raw body is not kept while the page is written.
        const read = this.#envelopePage(e, offset, await asked.shift()!.body);
        if (read.page.hasMore) {
          // Paging on would ask for the same offset forever.
          if (read.received === 0) {
            throw new SourceError('schema', `${e.name}: HasMoreResults is true on an empty page at offset ${offset}`, { endpoint: e.name });
          }
          const next = offset + read.received;
          // Pages asked for ahead assumed full pages; a short one moves every offset after it.
          if (asked.length > 0 && asked[0]!.offset !== next) for (const a of asked.splice(0)) a.cancel.abort();
          if (read.received === limit) full++;
          const depth = Math.min(maxAhead, pagesAhead(full));
          for (let o = asked.length ? asked[asked.length - 1]!.offset + limit : next; asked.length < depth; o += limit) asked.push(ask(o));
        }
        yield read.page;
        if (!read.page.hasMore) return;
      }
    } finally {
      for (const a of asked) a.cancel.abort();
    }
  }

  /** One envelope read into a page, and how many records it held. */
  #envelopePage<E extends Endpoint>(e: E, offset: number, body: unknown): { page: PageResult<ItemOf<E>>; received: number } {
    const envelope = readEnvelope(e, body);
    this.#noteShape(e, envelope);
    const count = declaredCount(e, body);
    if (count !== undefined && count !== envelope.raw.length) {
      this.#log.warn({ endpoint: e.name, offset, count, received: envelope.raw.length }, 'page count differs from its Data');
    }
    return { page: this.#page(e, envelope.raw, offset, envelope.hasMore, envelope.extras), received: envelope.raw.length };
  }

  /** A list read in another shape than its endpoint's is warned of once per endpoint, and synced all the same. */
  #noteShape(e: Endpoint, c: Container): void {
    if (!c.shape || this.#shapesWarned.has(e.name)) return;
    this.#shapesWarned.add(e.name);
    this.#log.warn({ endpoint: e.name, shape: c.shape }, 'list answered in another shape than documented; read as the resource');
  }

  #page<E extends Endpoint>(e: E, raw: unknown[], offset: number, hasMore: boolean, extras: Record<string, unknown>): PageResult<ItemOf<E>> {
    const { items, rejects } = parseItems(e.item as z.ZodType<ItemOf<E>>, raw);
    if (rejects.length > 0) {
      this.#log.warn({ endpoint: e.name, offset, rejects: rejects.length, first: rejects[0]!.reason }, 'records failed their schema');
    }
    return { items, rejects, offset, hasMore, extras };
  }

  /** Every page of a list, concatenated. */
  async all<E extends Endpoint>(e: E, query: QueryOf<E>, opts: CallOptions = {}): Promise<PageResult<ItemOf<E>>> {
    const out: PageResult<ItemOf<E>> = { items: [], rejects: [], offset: opts.startOffset ?? 0, hasMore: false, extras: {} };
    for await (const page of this.pages(e, query, opts)) {
      out.items.push(...page.items);
      out.rejects.push(...page.rejects);
      out.extras = { ...page.extras, ...out.extras };
    }
    return out;
  }

  /** A by-key read (`one`) or an existence check (`boolean`); a 404 is `{ found: false }`. */
  async lookup<E extends Endpoint>(e: E, query: QueryOf<E>, opts: CallOptions = {}): Promise<Lookup<ItemOf<E>>> {
    const kind = e.response.kind;
    if (kind !== 'one' && kind !== 'boolean') {
      throw new SourceError('bad_request', `${e.name} answers with ${kind}: use pages or all`, { endpoint: e.name });
    }
    const path = `${e.path}?${buildQuery(e, query as Record<string, unknown>)}`;
    let body: unknown;
    try {
      body = await this.#call(e, { method: 'GET', path }, opts, (res) => parseJson(e.name, res));
    } catch (err) {
      if (isSourceError(err, 'not_found')) return { found: false };
      throw err;
    }
    if (body === null) return { found: false };
    if (kind === 'boolean' && typeof body !== 'boolean') {
      throw new SourceError('schema', `${e.name}: expected a JSON boolean`, { endpoint: e.name });
    }
    return { found: true, item: this.#one(e, body) };
  }

  /**
   * A write. The body is checked against the endpoint's body schema first: an invalid body is a
   * 'bad_request' with field messages and no request. Returns the service's record, or null for `empty`.
   */
  async send<E extends Endpoint>(e: E, body: unknown, opts: CallOptions = {}): Promise<ItemOf<E> | null> {
    if (e.method !== 'POST' || !e.body) {
      throw new SourceError('bad_request', `${e.name} is not a write`, { endpoint: e.name });
    }
    const checked = e.body.safeParse(body);
    if (!checked.success) {
      throw new SourceError('bad_request', `${e.name}: body is invalid: ${formatIssues(checked.error)}`, {
        endpoint: e.name,
        code: 'invalid_body',
        fields: fieldsOf(checked.error),
      });
    }
    const req: OutgoingCall = { method: 'POST', path: `${e.path}?${buildQuery(e, {})}`, body: JSON.stringify(checked.data) };
    if (e.response.kind === 'empty') {
      await this.#call(e, req, opts, () => null);
      return null;
    }
    const answer = await this.#call(e, req, opts, (res) => parseJson(e.name, res));
    try {
      return this.#one(e, answer);
    } catch (err) {
      // The service acted on the write; only its answer is unreadable. Say so, so nobody sends it again blindly.
      const reason = err instanceof Error ? err.message : String(err);
      throw new SourceError('schema', `${e.name}: the service accepted the write, but its answer is unreadable: ${reason}`, {
        endpoint: e.name,
        code: 'accepted_unreadable',
      });
    }
  }

  #one<E extends Endpoint>(e: E, body: unknown): ItemOf<E> {
    const parsed = e.item.safeParse(body);
    if (!parsed.success) {
      throw new SourceError('schema', `${e.name}: ${formatIssues(parsed.error)}`, { endpoint: e.name });
    }
    return parsed.data as ItemOf<E>;
  }

  #listPath(e: Endpoint, query: unknown): string {
    const kind = e.response.kind;
    if (kind !== 'array' && kind !== 'array-or-object') {
      throw new SourceError('bad_request', `${e.name} answers with ${kind}, not a list: use lookup or send`, { endpoint: e.name });
    }
    return `${e.path}?${buildQuery(e, query as Record<string, unknown>)}`;
  }

  /**
   * One request with its retries. Each attempt waits for the limiter first and reports the service's
   * rate-limit headers after. `read` turns a 2xx response into the result, and may throw a retryable error.
   */
  async #call<T>(e: Endpoint, req: OutgoingCall, opts: AttemptOptions, read: (res: HttpResponse) => T): Promise<T> {
    return this.#attempts(e, req, opts, async (open) => read(await this.#whole(open)));
  }

  /**
   * The attempts of one request: `take` gets each 2xx response with its headers in and its body unread, and
   * its result is the call's; a retryable error it throws (a body cut short) is another attempt.
   */
  async #attempts<T>(e: Endpoint, req: OutgoingCall, opts: AttemptOptions, take: (res: OpenResponse) => Promise<T>): Promise<T> {
    const lane = opts.lane ?? e.lane ?? 'incremental';
    const mayRetry = (err: SourceError) => err.retryable && (isRepeatable(e) || notActedOn(err));
    for (let attempt = 0; ; attempt++) {
      let error: SourceError;
      let resetAtMs: number | undefined;
      let sentAt: number | undefined;
      let status: number | undefined;
      try {
        const waitFrom = Date.now();
        await this.#limiter.acquire(this.limiterKey, lane, opts.waitSignal ? AbortSignal.any([opts.waitSignal, ...(opts.signal ? [opts.signal] : [])]) : opts.signal);
        sentAt = Date.now();
        this.#observers?.emit('limiterWait', { company: this.#company, key: this.limiterKey, lane, waitMs: sentAt - waitFrom });
        const res = await this.#send(e, req, opts.signal);
        status = res.status;
        const feedback = feedbackOf(res);
        resetAtMs = feedback.resetAtMs;
        const refusal = isSuccess(res.status) ? undefined : this.#errorOf(e, await this.#whole(res), resetAtMs);
        await this.#afterResponse(res, feedback, refusal?.kind === 'rate_limit', !refusal);
        this.#log.debug({ endpoint: e.name, status: res.status, ms: Date.now() - sentAt, attempt }, 'response');
        if (refusal) throw refusal;
        const result = await take(res);
        this.#reported(e, req, lane, attempt, sentAt, status);
        return result;
      } catch (err) {
        if (sentAt !== undefined) this.#reported(e, req, lane, attempt, sentAt, status, err);
        if (!(err instanceof SourceError)) throw err;
        error = err;
      }
      if (!mayRetry(error) || attempt >= this.#maxRetries) throw error;
      // A rate limit waits for the reset; the backoff is a floor for when the reset is unknown, or already past by our clock.
      const backoff = backoffMs(attempt, this.#backoff);
      const delay = error.kind === 'rate_limit' ? Math.max(untilReset(resetAtMs), backoff) : backoff;
      this.#stats.retries++;
      // Retries are routine (metrics count them); the error that outlasts them is the one line worth reading.
      this.#log.debug({ endpoint: e.name, kind: error.kind, status: error.status, attempt, delayMs: delay, err: error.message }, 'retrying request');
      await sleep(delay, opts.signal);
    }
  }

  /** Tells the observers how one attempt ended. */
  #reported(e: Endpoint, req: OutgoingCall, lane: Lane, attempt: number, sentAt: number, status?: number, err?: unknown): void {
    const run = streamRun.getStore();
    if (!this.#observers && !run?.onRequest) return;
    const kind = err instanceof SourceError ? err.kind : err instanceof Error && err.name === 'AbortError' ? 'aborted' : err ? 'network' : undefined;
    const event: RequestEvent = {
      company: this.#company,
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
    this.#observers?.emit('request', event);
  }

  async #send(e: Endpoint, req: OutgoingCall, signal: AbortSignal | undefined): Promise<OpenResponse> {
    this.#stats.requests++;
    return this.#http.open({ endpoint: e.name, method: req.method, path: req.path, body: req.body, signal });
  }

  async #whole(open: OpenResponse): Promise<HttpResponse> {
    const res = await open.text();
    this.#stats.bytes += res.bytes;
    return res;
  }

  #errorOf(e: Endpoint, res: HttpResponse, resetAtMs: number | undefined): SourceError {
    const waitS = resetAtMs === undefined ? undefined : untilReset(resetAtMs) / 1000;
    return errorFromResponse(e.name, res.status, this.#http.scrub(res.text), waitS);
  }

  /** Tells the limiter what the response said about the budget, and keeps the service's clock. */
  async #afterResponse(res: { headers: IncomingHttpHeaders }, feedback: ServiceFeedback, limited: boolean, answered: boolean): Promise<void> {
    // The clock is the service's only where the service answered: a refusal may come from a proxy or gateway in
    // front of it, with a clock of its own, and a signpost set by that clock would skip or stretch a backfill.
    const serviceDate = answered ? Date.parse(String(res.headers.date ?? '')) : NaN;
    if (Number.isFinite(serviceDate)) {
      this.#skewSeenAt = Date.now();
      this.#skewMs = serviceDate - this.#skewSeenAt;
    }
    if (limited) {
      feedback.limited = true;
      this.#stats.rateLimited++;
    }
    if (Object.keys(feedback).length === 0) return;
    this.#observers?.emit('budget', {
      company: this.#company,
      key: this.limiterKey,
      limit: headerNumber(res.headers, 'x-ratelimit-limit'),
      remaining: feedback.remaining,
      resetAtMs: feedback.resetAtMs,
    });
    try {
      await this.#limiter.observe(this.limiterKey, feedback);
    } catch (err) {
      // The response is good whatever the limiter's store did; dropping it would cost another request.
      this.#log.warn({ err: err instanceof Error ? this.#http.scrub(err.message) : String(err) }, 'limiter observe failed');
    }
  }

  /**
   * The service's clock as of the last response (its `Date` header, one-second resolution); the local clock
   * before any response. Checkpoints are set by the clock that stamps the data, not by ours.
   */
  serviceNow(): Date {
    return new Date(Date.now() + this.#skewMs);
  }

  /**
   * The service's clock, asked for again (one small request) when the last answer is older than `maxAgeMs`:
   * a stream sets its signpost by it, and a clock learned before a pause may have moved since.
   */
  async freshServiceNow(maxAgeMs = 60_000, opts: CallOptions = {}): Promise<Date> {
    if (Date.now() - this.#skewSeenAt > maxAgeMs) await this.all(endpoints.locales, {}, opts);
    return this.serviceNow();
  }

  stats(): SourceStats {
    return { ...this.#stats };
  }

  close(): Promise<void> {
    return this.#http.close();
  }
}
