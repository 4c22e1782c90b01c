import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULTS, type RateLimit } from '../config.ts';
import { createSandboxData, type SandboxSize } from './data.ts';
import { log as rootLog, type Logger } from '../log.ts';
import type { Scope } from '../source/endpoints.ts';
import { FaultInjector, type FaultSpec } from './faults.ts';
import { ADMIN_PREFIX, createAdmin } from './http-admin.ts';
import { SandboxApi, type SandboxStats } from './http.ts';
import type { Quirk } from './http-wire.ts';
import { KeyRing, defaultKeys } from './keys.ts';
import { FixedWindowLimiter } from './ratelimit.ts';
import type { SandboxData } from './service.ts';

export type { SandboxSize, Quirk };
export { QUIRKS } from './http-wire.ts';
export const SANDBOX_SIZES: readonly SandboxSize[] = ['tiny', 'small', 'medium', 'large'];

export interface SandboxOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1: the admin routes need no key. */
  host?: string;
  seed?: number;
  size?: SandboxSize;
  /** Default: one key, `sandbox-key`, with every scope. */
  keys?: Array<{ key: string; scopes: Scope[] }>;
  /** Default 100 per 60 s per key; null turns the limit off. */
  rateLimit?: RateLimit | null;
  /** Added to every API response. */
  latencyMs?: number;
  faults?: FaultSpec;
  /** Known departures of the real service from the spec, off by default (docs/sandbox.md). */
  quirks?: readonly Quirk[];
  now?: Date;
  /** How late a change record or audit row may become visible after its stamp (default 30 minutes; 0 for never). */
  lateMs?: number;
  /** Serve this data instead of generating it from seed and size. */
  data?: SandboxData;
  log?: Logger;
}

export interface RunningSandbox {
  url: string;
  /** The first key. */
  apiKey: string;
  data: SandboxData;
  setFaults(f: FaultSpec): void;
  stats(): SandboxStats;
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<RunningSandbox> {
  const log = (opts.log ?? rootLog).child({ component: 'sandbox' });
  const data = opts.data ?? createSandboxData({ seed: opts.seed, size: opts.size, now: opts.now, lateMs: opts.lateMs });
  const keys = new KeyRing(opts.keys ?? defaultKeys());
  const rateLimit = opts.rateLimit === undefined ? { ...DEFAULTS.rateLimit } : opts.rateLimit;
  const limiter = rateLimit ? new FixedWindowLimiter(rateLimit) : null;
  const faults = new FaultInjector(opts.seed ?? 1, opts.faults ?? {});
  const api = new SandboxApi({
    data,
    keys,
    limiter,
    faults,
    latencyMs: opts.latencyMs ?? 0,
    log,
    quirks: new Set(opts.quirks ?? []),
  });
  const admin = createAdmin({ data, faults, rateLimit, stats: () => api.stats(), keys });

  const server = createServer({ keepAlive: true }, (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const search = q < 0 ? '' : url.slice(q + 1);
    if (path.startsWith(ADMIN_PREFIX)) admin(req, res, path, search);
    else api.handle(req, res, path, search);
  });
  // Longer than undici's default keep-alive so clients, not the server, close idle connections.
  server.keepAliveTimeout = 30_000;
  const address = await listen(server, opts.port ?? 0, opts.host ?? '127.0.0.1');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    apiKey: keys.first,
    data,
    setFaults: (f) => faults.set(f),
    stats: () => api.stats(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
