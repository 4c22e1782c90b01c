import type { IncomingHttpHeaders } from 'node:http';
import { Pool } from 'undici';
import { AUTH_HEADER } from './endpoints.ts';
import { errorFromTransport, SourceError } from './errors.ts';

/**
 * One keep-alive connection pool to the service. It knows the key and puts it on every request,
 * and nothing else in the client does: every text that leaves here is scrubbed of it.
 */

export interface HttpOptions {
  baseUrl: string;
  apiKey: string;
  connections: number;
  timeoutMs: number;
}

export interface HttpRequest {
  /** The catalog name, for messages. */
  endpoint: string;
  method: 'GET' | 'POST';
  /** Path relative to the base URL, with the query string. */
  path: string;
  body?: string;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  bytes: number;
}

const REDACTED = '[redacted]';

export class Http {
  readonly #pool: Pool;
  readonly #apiKey: string;
  readonly #prefix: string;
  readonly #timeoutMs: number;

  constructor(opts: HttpOptions) {
    const url = new URL(opts.baseUrl);
    this.#apiKey = opts.apiKey;
    this.#prefix = url.pathname.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs;
    this.#pool = new Pool(url.origin, {
      connections: opts.connections,
      keepAliveTimeout: 30_000,
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
  }

  /** Replaces the API key wherever it occurs in a text (a service may echo a header back in an error). */
  scrub = (text: string): string => (this.#apiKey ? text.split(this.#apiKey).join(REDACTED) : text);

  /**
   * Sends one request and reads its whole body within the timeout.
   * Throws a 'timeout' or 'network' SourceError, or the caller's abort reason when its signal aborted.
   */
  async request(req: HttpRequest): Promise<HttpResponse> {
    // One controller for both the deadline and the caller's signal. Not AbortSignal.any: combined with a
    // long-lived caller signal (a whole sync run's) it retains every request's signal (nodejs/node#55351).
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.#timeoutMs);
    const onCallerAbort = () => abort.abort();
    req.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (req.signal?.aborted) abort.abort();
    const signal = abort.signal;
    try {
      const res = await this.#pool.request({
        method: req.method,
        path: this.#prefix + req.path,
        headers: this.#headers(req.body !== undefined),
        body: req.body,
        signal,
      });
      const buf = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: res.headers, text: buf.toString('utf8'), bytes: buf.length };
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (abort.signal.aborted) {
        throw new SourceError('timeout', `${req.endpoint}: no complete response within ${this.#timeoutMs} ms`, {
          endpoint: req.endpoint,
          code: 'TIMEOUT',
        });
      }
      throw errorFromTransport(req.endpoint, e, this.scrub);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    }
  }

  #headers(hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', [AUTH_HEADER]: this.#apiKey };
    if (hasBody) headers['content-type'] = 'application/json';
    return headers;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
