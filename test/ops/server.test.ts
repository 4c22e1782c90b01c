import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { createMetricsApp, listen } from '../../src/ops/server.ts';
import { Metrics } from '../../src/ops/metrics.ts';
import { openWarehouse } from '../../src/warehouse/connection.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { freshDatabase } from '../support/db.ts';
import { waitFor } from '../support/processes.ts';
import { insertReject } from '../support/rejects.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** The ops server without Redis (as `npm start` runs it), and with the hooks other modules plug in. */

let sandbox: RunningSandbox;
let t: TestApp;
const retried: number[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(sandbox, {}, (app) => {
    const push = new Hono();
    push.get('/openapi.json', (c) => c.json({ openapi: '3.1.0' }));
    app.apps.push({ path: '/push', app: push });
    app.actions.retryPush = async (id) => {
      retried.push(id);
      return `change ${id} is queued again`;
    };
  });
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('health and readiness', () => {
  it('/health answers; /ready checks Postgres and the migrations', async () => {
    expect(await (await t.get('/health')).json()).toEqual({ ok: true });
    const ready = await t.get('/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { postgres: { ok: true }, migrations: { ok: true } } });
  });

  it('/ready is 503 on a warehouse whose migrations were not applied, naming the check', async () => {
    const wh = await openWarehouse({ databaseUrl: await freshDatabase() });
    const server = await listen(createMetricsApp({ metrics: new Metrics(), warehouse: wh }), 0);
    try {
      const res = await fetch(`${server.url}/ready`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { ready: boolean; checks: Record<string, { ok: boolean; error?: string }> };
      expect(body.ready).toBe(false);
      expect(body.checks.postgres).toEqual({ ok: true });
      expect(body.checks.migrations!.ok).toBe(false);
    } finally {
      await server.close();
      await wh.close();
    }
  });
});

describe('without Redis', () => {
  it('/queues says jobs run in-process and lists the stream runs', async () => {
    const env = await t.app.environment();
    await runStreams(env.contexts[0]!, selectStreams(['departments']));
    const html = await (await t.get('/queues')).text();
    expect(html).toMatch(/no REDIS_URL, so there is no queue: jobs run in-process/);
    expect(html).toMatch(/<td>north<\/td><td>departments<\/td>/);
  });

  it('actions need sign-in: read-only without WFS_DASHBOARD_TOKEN', async () => {
    const res = await t.get('/actions/run', {
      method: 'POST',
      body: new URLSearchParams({ company: 'north', stream: 'departments' }),
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'read-only: neither WFS_DASHBOARD_TOKEN nor WFS_OIDC_ISSUER is set' });
    const signin = await t.get('/signin', {
      method: 'POST',
      body: new URLSearchParams({ token: 'anything-at-all-123' }),
    });
    expect(signin.status).toBe(403);
    expect(signin.headers.get('set-cookie')).toBeNull();
  });
});

describe('record contents', () => {
  const hedy = async (app: TestApp) =>
    insertReject(await app.app.warehouse(), {
      company: 'north',
      stream: 'individuals',
      raw: { ServiceId: 903, FirstName: 'Hedy', PrimaryEmailAddress: 'hedy@example.org' },
      reason: 'DateOfBirth: expected a date',
    });

  it('on loopback without a dashboard token, /rejects shows raw payloads', async () => {
    await hedy(t);
    const html = await (await t.get('/rejects')).text();
    expect(html).toContain('hedy@example.org');
    expect(html).toContain('DateOfBirth: expected a date');
  });

  it('listening beyond loopback without a dashboard token, /rejects shows reasons only and says why', async () => {
    const open = await startTestApp(sandbox, { WFS_HTTP_HOST: '0.0.0.0' });
    try {
      await hedy(open);
      const html = await (await open.get('/rejects')).text();
      expect(html).toContain('DateOfBirth: expected a date');
      expect(html).not.toContain('hedy@example.org');
      expect(html).not.toContain('Hedy');
      expect(html).toMatch(
        /listens on 0\.0\.0\.0, beyond this machine, and no sign-in is set up \(WFS_DASHBOARD_TOKEN or WFS_OIDC_ISSUER\)/,
      );
      const status = await (await open.get('/')).text();
      expect(status).toMatch(/<b><a href="\/rejects">1<\/a><\/b>open rejects/);
    } finally {
      await open.close();
    }
  });
});

describe('what other modules plug in', () => {
  it('a mounted app answers under its path', async () => {
    expect(await (await t.get('/push/openapi.json')).json()).toEqual({ openapi: '3.1.0' });
  });

  it('the retry-push hook lists failed and refused changes and is called with the change id', async () => {
    const wh = await t.app.warehouse();
    const s = wh.sql(wh.schema);
    const [row] = await wh.sql<{ id: number }[]>`
      insert into ${s}.push_outbox (company_key, kind, change_id, entity_key, seq, payload, status, error)
      values ('north', 'individual', 'hr-e-1', 'en:E-1', 1, ${wh.sql.json({ EmployeeNumber: 'E-1' })}, 'failed', 'refused: EmployeeNumber already used')
      returning id::int as id`;
    const html = await (await t.get('/')).text();
    expect(html).toContain('refused: EmployeeNumber already used');
    expect(html).toMatch(/data-status="failed"><b>1<\/b>failed/);
    // Not signed in (and no token to sign in with): no button, and the action is refused.
    expect(html).not.toContain('action="/actions/retry-push"');
    const res = await t.get('/actions/retry-push', {
      method: 'POST',
      body: new URLSearchParams({ id: String(row!.id) }),
    });
    expect(res.status).toBe(403);
    expect(retried).toEqual([]);
  });
});

describe('signed in', () => {
  let signed: TestApp;
  const calls: number[] = [];
  beforeAll(async () => {
    signed = await startTestApp(sandbox, { WFS_DASHBOARD_TOKEN: 'a-token-of-sixteen-or-more' }, async (app) => {
      // Jobs run in this process, as with `npm start`: "run now" runs the stream here.
      await app.inProcessRunner();
      app.actions.retryPush = async (id) => {
        calls.push(id);
        return `change ${id} is queued again`;
      };
    });
  });
  afterAll(() => signed?.close());

  it('runs a stream now in this process, and retries a push through the hook', async () => {
    const signin = await signed.get('/signin', {
      method: 'POST',
      body: new URLSearchParams({ token: 'a-token-of-sixteen-or-more' }),
    });
    expect(signin.status).toBe(303);
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    expect(cookie).not.toContain('a-token-of-sixteen-or-more');
    const page = await (await signed.get('/companies/north', { headers: { cookie } })).text();
    expect(page).toContain('action="/actions/run"');
    const run = await signed.get('/actions/run', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ company: 'north', stream: 'departments' }),
    });
    expect(run.status).toBe(303);
    expect(decodeURIComponent(run.headers.get('location')!)).toBe('/?done=departments of north is running');
    const wh = await signed.app.warehouse();
    await waitFor(
      'the run from the dashboard',
      async () => {
        const [r] =
          await wh.sql`select outcome from ${wh.sql(wh.schema)}.sync_runs where stream = 'departments' and outcome = 'ok'`;
        return r;
      },
      20_000,
    );
    const unknown = await signed.get('/actions/run', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ company: 'west', stream: 'departments' }),
    });
    expect(unknown.status).toBe(400);
    const retry = await signed.get('/actions/retry-push', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ id: '42' }),
    });
    expect(retry.status).toBe(303);
    expect(decodeURIComponent(retry.headers.get('location')!)).toBe('/?done=change 42 is queued again');
    expect(calls).toEqual([42]);
  });

  it('ends the session at sign-out: the copied cookie no longer acts', async () => {
    const signin = await signed.get('/signin', {
      method: 'POST',
      body: new URLSearchParams({ token: 'a-token-of-sixteen-or-more' }),
    });
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    const other = (
      await signed.get('/signin', {
        method: 'POST',
        body: new URLSearchParams({ token: 'a-token-of-sixteen-or-more' }),
      })
    ).headers
      .get('set-cookie')!
      .split(';')[0]!;
    expect(other).not.toBe(cookie);
    expect(await (await signed.get('/companies/north', { headers: { cookie } })).text()).toContain(
      'action="/actions/run"',
    );
    const out = await signed.get('/signout', { method: 'POST', headers: { cookie } });
    expect(out.status).toBe(303);
    const page = await (await signed.get('/companies/north', { headers: { cookie } })).text();
    expect(page).not.toContain('action="/actions/run"');
    expect(page).toContain('href="/signin"');
    const retry = await signed.get('/actions/retry-push', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ id: '43' }),
    });
    expect(retry.status).toBe(403);
    expect(calls).not.toContain(43);
    // Another sign-in's session is its own.
    expect(await (await signed.get('/companies/north', { headers: { cookie: other } })).text()).toContain(
      'action="/actions/run"',
    );
  });

  it('answers 429 with Retry-After once a client has failed too often, even with the right token', async () => {
    const attempt = (token: string) => signed.get('/signin', { method: 'POST', body: new URLSearchParams({ token }) });
    let last: globalThis.Response | undefined;
    for (let i = 0; i < 10; i++) {
      last = await attempt(`wrong-token-guess-${i}`);
      expect(last.status).toBe(403);
    }
    const held = await attempt('a-token-of-sixteen-or-more');
    expect(held.status).toBe(429);
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(held.headers.get('set-cookie')).toBeNull();
    expect(await held.text()).toMatch(/Too many failed sign-ins: try again in \d+ s/);
  });
});
