import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import type { Lane, RateLimiter, ServiceFeedback } from '../../src/ratelimit/types.ts';

/** A limiter that lets everything through and remembers what it was asked and told. */
export class RecordingLimiter implements RateLimiter {
  readonly acquired: { key: string; lane: Lane | undefined }[] = [];
  readonly observed: { key: string; feedback: ServiceFeedback }[] = [];

  async acquire(key: string, lane?: Lane, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.acquired.push({ key, lane });
  }

  async observe(key: string, feedback: ServiceFeedback): Promise<void> {
    this.observed.push({ key, feedback });
  }

  async close(): Promise<void> {}
}

export interface Seen {
  method: string;
  path: string;
  /** The query string exactly as sent, still encoded. */
  rawQuery: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** Which TCP connection carried it (1, 2, ...). */
  connection: number;
  at: number;
}

export type Handler = (req: Seen, res: ServerResponse, n: number) => unknown;

export interface FakeService {
  url: string;
  seen: Seen[];
  connections(): number;
  close(): Promise<void>;
}

/** A tiny HTTP server whose every answer a test writes itself: for what the sandbox cannot be made to do. */
export async function fakeService(handler: Handler): Promise<FakeService> {
  const seen: Seen[] = [];
  let connections = 0;
  const ids = new WeakMap<object, number>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const [path = '', rawQuery = ''] = (req.url ?? '').split('?');
    const s: Seen = {
      method: req.method ?? '',
      path,
      rawQuery,
      query: new URLSearchParams(rawQuery),
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      connection: ids.get(req.socket) ?? 0,
      at: Date.now(),
    };
    seen.push(s);
    try {
      await handler(s, res, seen.length);
    } catch (e) {
      res.statusCode = 599;
      res.end(String(e));
    }
  });
  server.on('connection', (socket) => ids.set(socket, ++connections));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function envelope(data: unknown[], hasMore: boolean, offset: number, extra: Record<string, unknown> = {}) {
  return { HasMoreResults: hasMore, Offset: offset, ResultCount: data.length, Data: data, ...extra };
}

/** A pino logger at the most verbose level whose lines land in `lines`. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino({ level: 'trace' }, stream), lines };
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
