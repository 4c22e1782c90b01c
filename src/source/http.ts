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
  /** The key, or how to read it for each request: a key rotated meanwhile is sent from the next request on. */
  apiKey: string | (() => string);
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
  body: Buffer;
  /** The body as UTF-8 text, decoded when first read: a JSON page is parsed from its bytes (jsonText). */
  readonly text: string;
}

export function httpResponse(status: number, headers: IncomingHttpHeaders, body: Buffer): HttpResponse {
  let text: string | undefined;
  return {
    status,
    headers,
    body,
    get text() {
      return (text ??= body.toString('utf8'));
    },
  };
}

/** A response whose headers are in and whose body is read as it arrives (or dropped). */
export interface OpenResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body's bytes as they arrive; a failure on the way is a 'timeout' or 'network' SourceError. */
  body(): AsyncIterable<Buffer>;
  /** The whole body, within the request's deadline. */
  text(): Promise<HttpResponse>;
  /** Releases the connection without reading the rest of the body. */
  discard(): void;
}

const REDACTED = '[redacted]';

export class Http {
  readonly #pool: Pool;
  readonly #apiKey: () => string;
  /** Every key this pool has sent: an answer to a request sent before a rotation may echo the older one. */
  readonly #sent = new Set<string>();
  readonly #prefix: string;
  readonly #timeoutMs: number;

  constructor(opts: HttpOptions) {
    const url = new URL(opts.baseUrl);
    const key = opts.apiKey;
    this.#apiKey = typeof key === 'string' ? () => key : key;
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
  scrub = (text: string): string => {
    let out = text;
    for (const key of [this.#apiKey(), ...this.#sent]) if (key) out = out.split(key).join(REDACTED);
    return out;
  };

  /**
   * Sends one request and hands back its response as soon as its headers are in. The deadline covers the wait
   * for headers and, for `text()`, the whole body; a body read with `body()` may take as long as its reader
   * needs, as long as no gap between its bytes exceeds the timeout (undici's bodyTimeout).
   * Throws a 'timeout' or 'network' SourceError, or the caller's abort reason when its signal aborted.
   */
  async open(req: HttpRequest): Promise<OpenResponse> {
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, this.#timeoutMs);
    const onCallerAbort = () => abort.abort();
    req.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (req.signal?.aborted) abort.abort();
    const done = () => {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    };
    const failure = (e: unknown): unknown => {
      if (req.signal?.aborted) return req.signal.reason;
      if (timedOut) {
        return new SourceError('timeout', `${req.endpoint}: no complete response within ${this.#timeoutMs} ms`, {
          endpoint: req.endpoint,
          code: 'TIMEOUT',
        });
      }
      return errorFromTransport(req.endpoint, e, this.scrub);
    };
    let res: Awaited<ReturnType<Pool['request']>>;
    try {
      res = await this.#pool.request({
        method: req.method,
        path: this.#prefix + req.path,
        headers: this.#headers(req.body !== undefined),
        body: req.body,
        signal: abort.signal,
      });
    } catch (e) {
      done();
      throw failure(e);
    }
    const stream = res.body;
    return {
      status: res.statusCode,
      headers: res.headers,
      body: async function* () {
        // From here only the gaps between bytes are timed: reading may wait for the reader.
        clearTimeout(timer);
        try {
          for await (const chunk of stream) yield chunk as Buffer;
        } catch (e) {
          throw failure(e);
        } finally {
          done();
        }
      },
      text: async () => {
        try {
          return httpResponse(res.statusCode, res.headers, Buffer.from(await stream.arrayBuffer()));
        } catch (e) {
          throw failure(e);
        } finally {
          done();
        }
      },
      discard: () => {
        done();
        stream.destroy();
      },
    };
  }

  /**
   * Sends one request and reads its whole body within the timeout.
   * Throws a 'timeout' or 'network' SourceError, or the caller's abort reason when its signal aborted.
   */
  async request(req: HttpRequest): Promise<HttpResponse> {
    return (await this.open(req)).text();
  }

  #headers(hasBody: boolean): Record<string, string> {
    const key = this.#apiKey();
    this.#sent.add(key);
    const headers: Record<string, string> = { accept: 'application/json', [AUTH_HEADER]: key };
    if (hasBody) headers['content-type'] = 'application/json';
    return headers;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}
