import type { z } from 'zod';
import { log as rootLog, type Logger } from '../log.ts';
import type { Observers } from '../observers.ts';
import type { RateLimiter } from '../ratelimit/types.ts';
import type { Endpoint, ItemOf, QueryOf } from './endpoints.ts';
import { isSourceError, SourceError } from './errors.ts';
import { Http } from './http.ts';
import { streamedPages } from './json-array.ts';
import { envelopePages, type PagingOptions } from './envelope-paging.ts';
import { formatIssues, PageReader, type PageResult } from './paging.ts';
import { buildQuery } from './query.ts';
import { DEFAULT_BACKOFF, type BackoffOptions } from './retry.ts';
import { ServiceClock } from './service-clock.ts';
import { keyHash, Transport, type OutgoingCall, type RequestOptions, type SourceStats } from './transport.ts';

/**
 * The client of the workforce service, one per API key: what its callers ask for (pages, lookups, writes, the
 * service's clock), composed of the transport (limiter, retries), the page readers and the service clock.
 */

export interface SourceClientOptions {
  baseUrl: string;
  /** The key, or how to read it for each request (a company whose key an operator may rotate). */
  apiKey: string | (() => string);
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

export type Lookup<T> = { found: true; item: T } | { found: false };

/** Field → messages of a body that failed its schema. */
function fieldsOf(error: z.ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
    fields[key] = fields[key] ? `${fields[key]}; ${issue.message}` : issue.message;
  }
  return fields;
}

/** A path with its query, for the kinds of response `use` names; anything else is a caller's mistake. */
function pathFor(e: Endpoint, query: unknown, kinds: readonly string[], use: string): string {
  const kind = e.response.kind;
  if (!kinds.includes(kind))
    throw new SourceError('bad_request', `${e.name} answers with ${kind}${use}`, { endpoint: e.name });
  return `${e.path}?${buildQuery(e, query as Record<string, unknown>)}`;
}

/** The hash of the key `current` reads, computed again only when the key changed. */
function hashOfCurrent(current: () => string): () => string {
  let key: string | undefined;
  let hash = '';
  return () => {
    const now = current();
    if (now !== key) {
      key = now;
      hash = keyHash(now);
    }
    return hash;
  };
}

export class SourceClient {
  readonly #transport: Transport;
  readonly #keyHash: () => string;
  readonly #reader: PageReader;
  readonly #clock = new ServiceClock();

  constructor(opts: SourceClientOptions) {
    const { baseUrl, apiKey } = opts;
    this.#keyHash = hashOfCurrent(typeof apiKey === 'string' ? () => apiKey : apiKey);
    const http = new Http({ baseUrl, apiKey, connections: opts.connections ?? 8, timeoutMs: opts.timeoutMs ?? 30_000 });
    const log = (opts.logger ?? rootLog).child({ component: 'source', key: this.limiterKey });
    this.#transport = new Transport({
      http,
      limiter: opts.limiter,
      limiterKey: this.#keyHash,
      maxRetries: opts.maxRetries ?? 5,
      backoff: opts.backoff ?? DEFAULT_BACKOFF,
      clock: this.#clock,
      log,
      observers: opts.observers,
      company: opts.company,
    });
    this.#reader = new PageReader(log);
  }

  /** The hash of the key in use, which the limiter counts by: a rotated key has its own budget. */
  get limiterKey(): string {
    return this.#keyHash();
  }

  /**
   * Reads a list endpoint page by page: envelopes one request per page, stopping when the service says
   * `HasMoreResults: false`; plain arrays as they arrive; reference lists as one page holding everything.
   */
  async *pages<E extends Endpoint>(
    e: E,
    query: QueryOf<E>,
    opts: PagingOptions = {},
  ): AsyncIterable<PageResult<ItemOf<E>>> {
    if (e.response.kind === 'envelope') {
      yield* envelopePages(this.#transport, this.#reader, e, query, opts);
      return;
    }
    const path = pathFor(e, query, ['array', 'array-or-object'], ', not a list: use lookup or send');
    if (e.response.kind === 'array') {
      yield* streamedPages(this.#transport, this.#reader, e, path, opts);
      return;
    }
    yield this.#reader.whole(e, await this.#transport.json(e, { method: 'GET', path }, opts));
  }

  /** Every page of a list, concatenated. */
  async all<E extends Endpoint>(e: E, query: QueryOf<E>, opts: PagingOptions = {}): Promise<PageResult<ItemOf<E>>> {
    const out: PageResult<ItemOf<E>> = {
      items: [],
      rejects: [],
      offset: opts.startOffset ?? 0,
      hasMore: false,
      extras: {},
    };
    for await (const page of this.pages(e, query, opts)) {
      out.items.push(...page.items);
      out.rejects.push(...page.rejects);
      out.extras = { ...page.extras, ...out.extras };
    }
    return out;
  }

  /** A by-key read (`one`) or an existence check (`boolean`); a 404 is `{ found: false }`. */
  async lookup<E extends Endpoint>(e: E, query: QueryOf<E>, opts: RequestOptions = {}): Promise<Lookup<ItemOf<E>>> {
    const path = pathFor(e, query, ['one', 'boolean'], ': use pages or all');
    let body: unknown;
    try {
      body = await this.#transport.json(e, { method: 'GET', path }, opts);
    } catch (err) {
      if (isSourceError(err, 'not_found')) return { found: false };
      throw err;
    }
    if (body === null) return { found: false };
    if (e.response.kind === 'boolean' && typeof body !== 'boolean') {
      throw new SourceError('schema', `${e.name}: expected a JSON boolean`, { endpoint: e.name });
    }
    return { found: true, item: this.#one(e, body) };
  }

  /**
   * A write. The body is checked against the endpoint's body schema first: an invalid body is a
   * 'bad_request' with field messages and no request. Returns the service's record, or null for `empty`.
   */
  async send<E extends Endpoint>(e: E, body: unknown, opts: RequestOptions = {}): Promise<ItemOf<E> | null> {
    const req = this.#write(e, body);
    if (e.response.kind === 'empty') {
      await this.#transport.call(e, req, opts, () => null);
      return null;
    }
    const answer = await this.#transport.json(e, req, opts);
    try {
      return this.#one(e, answer);
    } catch (err) {
      // The service acted on the write; only its answer is unreadable. Say so, so nobody sends it again blindly.
      const reason = err instanceof Error ? err.message : String(err);
      throw new SourceError(
        'schema',
        `${e.name}: the service accepted the write, but its answer is unreadable: ${reason}`,
        {
          endpoint: e.name,
          code: 'accepted_unreadable',
        },
      );
    }
  }

  /** The request of a write, its body checked first. */
  #write(e: Endpoint, body: unknown): OutgoingCall {
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
    return { method: 'POST', path: `${e.path}?${buildQuery(e, {})}`, body: JSON.stringify(checked.data) };
  }

  #one<E extends Endpoint>(e: E, body: unknown): ItemOf<E> {
    const parsed = e.item.safeParse(body);
    if (!parsed.success) {
      throw new SourceError('schema', `${e.name}: ${formatIssues(parsed.error)}`, { endpoint: e.name });
    }
    return parsed.data as ItemOf<E>;
  }

  /**
   * The service's clock as of the last response (its `Date` header, one-second resolution); the local clock
   * before any response. Checkpoints are set by the clock that stamps the data, not by ours.
   */
  serviceNow(): Date {
    return this.#clock.now();
  }

  /**
   * The service's clock, asked for again (one small request to `probe`) when the last answer is older than
   * `maxAgeMs`: a stream sets its signpost by it, and a clock learned before a pause may have moved since.
   */
  async freshServiceNow(probe: Endpoint, maxAgeMs = 60_000, opts: PagingOptions = {}): Promise<Date> {
    if (this.#clock.ageMs() > maxAgeMs) await this.all(probe, {}, opts);
    return this.#clock.now();
  }

  stats(): SourceStats {
    return this.#transport.stats();
  }

  close(): Promise<void> {
    return this.#transport.close();
  }
}
