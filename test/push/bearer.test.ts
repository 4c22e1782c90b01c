import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { startTestApp, type TestApp } from '../ops/helpers.ts';
import { runWfsync } from '../support/processes.ts';
import { newcomer } from './support.ts';

/**
 * Named API tokens on two `serve` processes of one warehouse: made and revoked with `wfsync tokens`, each
 * token's scopes and companies enforced on the push API and the JSON routes, its pushes audited under its name,
 * and a revoked token refused by both servers at once.
 */

let sandbox: RunningSandbox;
let a: TestApp;
let b: TestApp;
let dir: string;
let cli: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  const settings = {
    WFS_COMPANIES: JSON.stringify([
      { key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
      { key: 'south', apiKey: sandbox.apiKey, baseUrl: sandbox.url },
    ]),
    WFS_SECRET_KEY: 'bearer-test-secret-key-01',
  };
  const push = (app: TestApp['app']) => app.push({ serve: true, run: false });
  a = await startTestApp(sandbox, settings, push);
  b = await startTestApp(sandbox, { ...settings, DATABASE_URL: a.databaseUrl }, push);
  dir = mkdtempSync(join(tmpdir(), 'wfsync-tokens-'));
  cli = { DATABASE_URL: a.databaseUrl, WFS_DATA_DIR: dir, LOG_LEVEL: 'warn', ...settings };
});

afterAll(async () => {
  await b?.close();
  await a?.close();
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function token(...args: string[]): Promise<string> {
  const r = await runWfsync(['tokens', 'create', ...args], cli);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/shown this once/);
  return r.stdout.trim();
}

const call = (server: TestApp, path: string, secret: string, method = 'GET', body?: unknown) =>
  server.get(path, {
    method,
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('named API tokens', () => {
  let hrA: string;
  let reader: string;
  let southAdmin: string;

  beforeAll(async () => {
    hrA = await token('hr-a', '--scope', 'push', '--company', 'north');
    reader = await token('reader', '--scope', 'read', '--company', 'north');
    southAdmin = await token('south-admin', '--scope', 'admin', '--company', 'south');
  }, 120_000);

  it('pushes with a push token (202), audited under its name; a wrong token is 401', async () => {
    expect(hrA).toMatch(/^wfs_[\w-]{43}$/);
    const pushed = await call(a, '/push/individuals', hrA, 'POST', newcomer({ changeId: 'token-1' }));
    expect(pushed.status).toBe(202);
    expect((await call(a, '/push/individuals', `${hrA}x`, 'POST', newcomer())).status).toBe(401);
    expect((await a.get('/push/individuals', { method: 'POST', body: '{}' })).status).toBe(401);
    const wh = await a.app.warehouse();
    const [row] = await wh.sql`select actor, action, company_key, outcome from ${wh.sql(wh.schema)}.audit
                               where action = 'push' order by id desc limit 1`;
    expect(row).toEqual({ actor: 'token:hr-a', action: 'push', company_key: 'north', outcome: 'done' });
  });

  it("enforces each token's scopes and companies", async () => {
    // A push token reads nothing; a read token pushes nothing and changes no company.
    expect((await call(a, '/push', hrA)).status).toBe(403);
    expect((await call(a, '/push/individuals', reader, 'POST', newcomer())).status).toBe(403);
    expect((await call(a, '/api/companies/north/pause', reader, 'POST')).status).toBe(403);
    // A token limited to north pushes for north only: south is unknown to it.
    const south = await call(a, '/push/individuals', hrA, 'POST', newcomer({ company: 'south' }));
    expect(south.status).toBe(422);
    expect(JSON.stringify(await south.json())).toMatch(/unknown company \\"south\\"/);
    // A read token limited to north sees north only.
    const listed = (await (await call(a, '/api/companies', reader)).json()) as { key: string }[];
    expect(listed.map((c) => c.key)).toEqual(['north']);
    expect((await call(a, '/api/companies/south/events', reader)).status).toBe(403);
    expect((await call(a, '/api/companies/north/events', reader)).status).toBe(200);
    const changes = (await (await call(a, '/push', reader)).json()) as { company: string }[];
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every((c) => c.company === 'north')).toBe(true);
    // An admin token of south acts on south, not north; the audit is admin's.
    const policy = { PrimaryEmailAddress: 'hash' };
    expect((await call(a, '/api/companies/north/personal-data', southAdmin, 'PUT', policy)).status).toBe(403);
    expect((await call(a, '/api/companies/south/personal-data', southAdmin, 'PUT', policy)).status).toBe(200);
    expect((await call(a, '/api/audit', reader)).status).toBe(403);
    const audit = (await (await call(a, '/api/audit?company=south', southAdmin)).json()) as {
      audit: { actor: string; action: string }[];
    };
    expect(audit.audit[0]).toMatchObject({ actor: 'token:south-admin', action: 'personal-data set' });
    expect((await call(a, '/api/audit', southAdmin)).status).toBe(200);
    expect((await call(a, '/api/audit?company=north', southAdmin)).status).toBe(403);
    expect((await call(a, '/api/audit?since=yesterday', southAdmin)).status).toBe(400);
  });

  it('lists tokens without their secret, and a revoked token is refused by every server at once', async () => {
    const listed = await runWfsync(['tokens', 'list', '--json'], cli);
    const tokens = JSON.parse(listed.stdout) as { name: string; scopes: string[]; lastUsedAt: string | null }[];
    expect(tokens.map((t) => [t.name, t.scopes])).toEqual([
      ['hr-a', ['push']],
      ['reader', ['read']],
      ['south-admin', ['admin']],
    ]);
    expect(tokens.find((t) => t.name === 'hr-a')!.lastUsedAt).not.toBeNull();
    expect(listed.stdout).not.toContain(hrA);
    expect(listed.stdout).not.toMatch(/token_hash|wfs_/);

    expect((await call(b, '/push/individuals', hrA, 'POST', newcomer())).status).toBe(202);
    const revoked = await runWfsync(['tokens', 'revoke', 'hr-a'], cli);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const server of [a, b])
      expect((await call(server, '/push/individuals', hrA, 'POST', newcomer())).status).toBe(401);
    const again = await runWfsync(['tokens', 'revoke', 'hr-a'], cli);
    expect([again.code, again.stderr.trim()]).toEqual([1, 'wfsync: no token hr-a (wfsync tokens list)']);
    const wh = await a.app.warehouse();
    const rows = await wh.sql`select actor, action, target, outcome from ${wh.sql(wh.schema)}.audit
                              where action like 'tokens %' order by id`;
    expect(rows.map((r) => [r.action, r.target, r.outcome])).toEqual([
      ['tokens create', 'token hr-a: push for north', 'done'],
      ['tokens create', 'token reader: read for north', 'done'],
      ['tokens create', 'token south-admin: admin for south', 'done'],
      ['tokens revoke', 'token hr-a', 'done'],
      ['tokens revoke', 'token hr-a', 'refused'],
    ]);
    expect(rows.every((r) => String(r.actor).startsWith('cli:'))).toBe(true);
  }, 60_000);

  it('refuses a bad name or scope in one line, and a name taken', async () => {
    for (const [args, line] of [
      [['bad name!', '--scope', 'push'], /^wfsync: NAME "bad name!": letters, digits/],
      [['env', '--scope', 'push'], /^wfsync: NAME "env" is reserved/],
      [['x1', '--scope', 'write'], /^wfsync: --scope "write": expected push, read, admin/],
      [['x2', '--scope', 'read', '--company', 'east'], /^wfsync: --company "east" is not added/],
      [['reader', '--scope', 'read'], /^wfsync: token reader exists already/],
    ] as const) {
      const r = await runWfsync(['tokens', 'create', ...args], cli);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim()).toMatch(line);
      expect(r.stdout).toBe('');
    }
  }, 90_000);
});
