import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { openWarehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';

/** Bad input of every kind a user meets first: one line on stderr naming it, no stack, no secret. */

let sandbox: RunningSandbox;
let truncating: RunningSandbox;
let htmlProxy: Server;
let htmlProxyUrl: string;
let htmlPagesServed = 0;
let databaseUrl: string;
let cwd: string;
let env: Record<string, string>;

beforeAll(async () => {
  const rateLimit = { limit: 100, periodMs: 1000 };
  sandbox = await startSandbox({ port: 0, seed: 3, size: 'tiny', rateLimit });
  truncating = await startSandbox({ port: 0, seed: 3, size: 'tiny', rateLimit, faults: { truncate: 1 } });
  // What a gateway in front of a service that is down answers: a 502 page of HTML.
  htmlProxy = createServer((_req, res) => {
    htmlPagesServed++;
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end(
      '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n<body><h1>Bad Gateway</h1></body></html>\n',
    );
  });
  await new Promise<void>((resolve) => htmlProxy.listen(0, '127.0.0.1', resolve));
  htmlProxyUrl = `http://127.0.0.1:${(htmlProxy.address() as AddressInfo).port}`;
  databaseUrl = await freshDatabase();
  // A warehouse that is already there, as a user's is: its first migration is news worth a line of its own.
  const wh = await openWarehouse({ databaseUrl });
  await wh.migrate();
  await wh.close();
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-errors-'));
  env = {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    DATABASE_URL: databaseUrl,
    WFS_RATE_LIMIT: '100/1s',
    WFS_FORM_IDS: '1',
    WFS_RUN_TYPE_IDS: '1',
    // The default level: retries before a failure are debug lines, and an error retrying cannot fix is not retried.
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  await sandbox?.close();
  await truncating?.close();
  await new Promise<void>((resolve) => (htmlProxy ? htmlProxy.close(() => resolve()) : resolve()));
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function stderrOf(
  args: string[],
  overrides: Record<string, string>,
): Promise<{ code: number | null; stderr: string }> {
  const run = spawnWfsync(args, { ...env, ...overrides }, cwd);
  let stderr = '';
  run.proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const { code } = await run.exited();
  return { code, stderr };
}

const STACK_FRAME = /^\s+at /m;

async function oneLine(
  overrides: Record<string, string>,
  args = ['sync', '--once', '--streams', 'departments'],
): Promise<string> {
  const ran = await stderrOf(args, overrides);
  expect(ran.code, ran.stderr).toBe(1);
  expect(ran.stderr).not.toMatch(STACK_FRAME);
  const lines = ran.stderr.split('\n').filter((l) => l.trim() !== '');
  expect(lines, ran.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^wfsync: /);
  return lines[0]!;
}

describe('one clear line for bad input', () => {
  it('a wrong API key', async () => {
    const line = await oneLine({ WFS_API_KEY: 'not-the-key-5e1d' });
    expect(line).toMatch(/refused the API key \(WFS_API_KEY\).*HTTP 401/);
    expect(line).not.toContain('not-the-key-5e1d');
  });

  it('a body cut short on every try', async () => {
    const line = await oneLine({ WFS_BASE_URL: truncating.url, WFS_API_KEY: truncating.apiKey });
    expect(line).toMatch(/no complete answer from the service/);
  });

  it('a database that refuses the login, without its password', async () => {
    const wrong = databaseUrl.replace(/\/\/([^:]+):[^@]*@/, '//$1:Wr0ngPassw0rd@');
    const line = await oneLine({ DATABASE_URL: wrong });
    expect(line).toMatch(/password authentication failed/);
    expect(line).not.toContain('Wr0ngPassw0rd');
  });

  it('a base URL without its scheme', async () => {
    const line = await oneLine({ WFS_BASE_URL: 'localhost:44010' });
    expect(line).toMatch(/setting WFS_BASE_URL: expected an http:\/\/ or https:\/\/ URL/);
  });

  it('an HTML error page from a proxy, said to be one', async () => {
    const line = await oneLine({ WFS_BASE_URL: htmlProxyUrl });
    expect(line).toMatch(/HTTP 502 with an HTML page \("502 Bad Gateway"\)/);
    expect(line).not.toMatch(/internal_server_error/);
    // Asking a proxy's page again gets the page again: one request, not a round of retries.
    expect(htmlPagesServed).toBe(1);
  });

  it('WFS_COMPANIES holding an object: the shape expected, never the value', async () => {
    const companies = JSON.stringify({ key: 'north', apiKey: 'secret-key-93b1', baseUrl: sandbox.url });
    const line = await oneLine({ WFS_COMPANIES: companies });
    expect(line).toMatch(/setting WFS_COMPANIES: expected a JSON array of \{key, apiKey/);
    expect(line).toMatch(/got a JSON object$/);
    expect(line).not.toContain('secret-key-93b1');
  });

  it('the stack with LOG_LEVEL=debug', async () => {
    const ran = await stderrOf(['sync', '--once', '--streams', 'departments'], {
      WFS_API_KEY: 'not-the-key-5e1d',
      LOG_LEVEL: 'debug',
    });
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(STACK_FRAME);
  });
});

describe('database password', () => {
  it('wfsync migrate names the database without its password', async () => {
    const password = /\/\/[^:]+:([^@]*)@/.exec(databaseUrl)![1]!;
    const ran = await stderrOf(['migrate'], {});
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(/warehouse migrated: psql 'postgres:\/\/[^:]+:\*\*\*@/);
    expect(ran.stderr).not.toContain(`:${password}@`);
  });
});
