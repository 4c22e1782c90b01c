import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

/**
 * A small HTTP proxy in front of the sandbox, for tests that need the service to answer in ways the sandbox
 * does not: fields it does not know yet, records that break their schema, refusals of long date spans,
 * answers that never come in time. Every request is forwarded with its method, path, headers and body;
 * the hooks decide per request what happens instead.
 */
export interface ProxyHooks {
  /** Answer this instead of forwarding (a refusal, say); undefined forwards. */
  answer?: (url: URL) => { status: number; body: unknown } | undefined;
  /** Hold the request this long before forwarding it (a service too slow to answer in time). */
  delayMs?: (url: URL) => number;
  /**
   * A fault for this request: `500` answers 500 without forwarding, `reset` drops the connection without
   * forwarding, `lost` forwards (the service acts on it) and then drops the connection before the answer.
   */
  fault?: (url: URL, method: string) => 'lost' | 'reset' | '500' | undefined;
  /** Rewrite the JSON body of a 2xx answer; return undefined to keep it as it came. */
  rewrite?: (url: URL, body: unknown) => unknown;
}

export interface SeenRequest {
  url: URL;
  /** What the proxy did: forwarded (possibly rewritten), answered itself, or gave up on a client gone. */
  outcome: 'forwarded' | 'answered' | 'abandoned' | 'lost' | 'reset';
  status?: number;
}

export interface RunningProxy {
  url: string;
  seen: SeenRequest[];
  setHooks(hooks: ProxyHooks): void;
  close(): Promise<void>;
}

/** Hop-by-hop headers and the ones the proxy recomputes. */
const NOT_COPIED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'host', 'upgrade']);

function copyHeaders(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !NOT_COPIED.has(k.toLowerCase())) out[k] = v;
  return out;
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

export async function startProxy(target: string, initial: ProxyHooks = {}): Promise<RunningProxy> {
  let hooks = initial;
  const seen: SeenRequest[] = [];
  const upstream = new Pool(new URL(target).origin, { connections: 16 });
  const timers = new Set<NodeJS.Timeout>();

  const wait = (ms: number, res: ServerResponse) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      timers.add(t);
      res.once('close', done);
      function done() {
        clearTimeout(t);
        timers.delete(t);
        res.off('close', done);
        resolve();
      }
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const body = await readBody(req);
    const canned = hooks.answer?.(url);
    if (canned) {
      seen.push({ url, outcome: 'answered', status: canned.status });
      const text = JSON.stringify(canned.body);
      res.writeHead(canned.status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    const fault = hooks.fault?.(url, req.method ?? 'GET');
    if (fault === '500') {
      seen.push({ url, outcome: 'answered', status: 500 });
      const text = JSON.stringify({ error: 'internal_server_error', error_message: 'injected by the test proxy' });
      res.writeHead(500, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    if (fault === 'reset') {
      seen.push({ url, outcome: 'reset' });
      req.socket.destroy();
      return;
    }
    const delay = hooks.delayMs?.(url) ?? 0;
    if (delay > 0) await wait(delay, res);
    if (res.destroyed || req.socket.destroyed) {
      seen.push({ url, outcome: 'abandoned' });
      return;
    }
    const answer = await upstream.request({
      method: req.method as 'GET' | 'POST',
      path: req.url ?? '/',
      headers: { ...copyHeaders(req.headers), ...(body ? { 'content-length': String(body.length) } : {}) },
      body,
    });
    let out = Buffer.from(await answer.body.arrayBuffer());
    const type = String(answer.headers['content-type'] ?? '');
    if (hooks.rewrite && answer.statusCode >= 200 && answer.statusCode < 300 && type.includes('json')) {
      const rewritten = hooks.rewrite(url, JSON.parse(out.toString('utf8')));
      if (rewritten !== undefined) out = Buffer.from(JSON.stringify(rewritten), 'utf8');
    }
    if (fault === 'lost') {
      seen.push({ url, outcome: 'lost', status: answer.statusCode });
      req.socket.destroy();
      return;
    }
    seen.push({ url, outcome: 'forwarded', status: answer.statusCode });
    if (res.destroyed) return;
    res.writeHead(answer.statusCode, { ...copyHeaders(answer.headers), 'content-length': out.length });
    res.end(out);
  };

  const server = createServer({ keepAlive: true }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      // The sandbox went away under us (the test is closing): drop the client's connection, as a broken proxy would.
      seen.push({ url: new URL(req.url ?? '/', 'http://proxy'), outcome: 'abandoned' });
      if (!res.headersSent && !res.destroyed) res.destroy(err instanceof Error ? err : undefined);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    setHooks: (h) => (hooks = h),
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await upstream.close();
    },
  };
}
