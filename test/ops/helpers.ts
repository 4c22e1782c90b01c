import { pino, type Logger } from 'pino';
import { App } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import type { OpsServer } from '../../src/ops/server.ts';
import type { RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';

export interface TestApp {
  app: App;
  server: OpsServer;
  databaseUrl: string;
  get(path: string, init?: RequestInit): Promise<globalThis.Response>;
  close(): Promise<void>;
}

/** The ops server as `wfsync start`/`serve` builds it, over a fresh warehouse, syncing from the sandbox. */
export async function startTestApp(
  sandbox: RunningSandbox,
  settings: Record<string, string> = {},
  plugIn: (app: App) => Promise<void> | void = () => {},
  log: Logger = pino({ level: 'silent' }),
): Promise<TestApp> {
  const databaseUrl = await freshDatabase();
  const config = loadConfig({
    WFS_COMPANIES: JSON.stringify([{ key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url }]),
    DATABASE_URL: databaseUrl,
    WFS_RATE_LIMIT: '100/1s',
    WFS_HTTP_PORT: '0',
    ...settings,
  });
  const quiet = { live: false, write: () => {}, setLive: () => {} };
  const app = new App(config, log, quiet);
  await app.environment();
  await plugIn(app);
  const server = await app.serve();
  return {
    app,
    server,
    databaseUrl,
    get: (path, init) => fetch(`${server.url}${path}`, { redirect: 'manual', ...init }),
    close: () => app.stop(),
  };
}

/** One sample of a Prometheus text exposition: `name{a="b"}` → value. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^([^{\s]+)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

/** The sum of every sample of a series matching the labels. */
export function total(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([^{\s]+)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) sum += Number(m[3]);
  }
  return sum;
}
