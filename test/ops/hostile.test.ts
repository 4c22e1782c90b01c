import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import {
  HOSTILE_BODIES,
  HOSTILE_ENCODED,
  HOSTILE_VALUES,
  LEAKS,
  REFLECTED,
  XSS,
  fillPath,
  type HostileBody,
} from '../support/hostile.ts';
import { insertReject } from '../support/rejects.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * Every route of the ops server and the push API, as `wfsync start` serves them with both tokens set and Redis
 * (so bull-board's routes are there too), sent hostile input: no answer is a 5xx or shows a stack, SQL or a
 * driver's message, no markup is reflected, nothing is stored by a refused push, and the process keeps answering.
 * The routes are read from the app, so a route added later is covered without listing it here.
 */

const PUSH_TOKEN = 'push-token-for-hostile-tests';
const DASHBOARD_TOKEN = 'dashboard-token-for-hostile-tests';
const PII = 'hostile-pii@example.org';
let sandbox: RunningSandbox;
let t: TestApp;
/**
 * Sessions taken before any hostile sign-in: the barrage's wrong tokens soon hold this client's sign-ins for the
 * throttle's period, and each route is sent hostile input signed in, to reach past the guards.
 */
const sessions: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 11, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(
    sandbox,
    {
      WFS_PUSH_TOKEN: PUSH_TOKEN,
      WFS_DASHBOARD_TOKEN: DASHBOARD_TOKEN,
      WFS_SECRET_KEY: 'secret-key-for-hostile-tests',
      REDIS_URL: `${inject('redisUrl')}/11`,
    },
    (app) => app.push({ serve: true, run: false }),
  );
  await insertReject(await t.app.warehouse(), {
    company: 'north',
    stream: 'individuals',
    raw: { ServiceId: 77, PrimaryEmailAddress: PII },
    reason: 'DateOfBirth: expected a date',
  });
  for (let i = 0; i < 200; i++) sessions.push(await signIn());
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

interface Route {
  method: string;
  path: string;
}

/** The app's routes, each method and path once; middleware (ALL) is sent as GET and POST. */
function routes(): Route[] {
  const seen = new Map<string, Route>();
  for (const r of t.server.app.routes) {
    for (const method of r.method === 'ALL' ? ['GET', 'POST'] : [r.method])
      seen.set(`${method} ${r.path}`, { method, path: r.path });
  }
  return [...seen.values()];
}

async function outboxRows(): Promise<number> {
  const wh = await t.app.warehouse();
  const [r] = await wh.sql<{ n: number }[]>`select count(*)::int as n from ${wh.sql(wh.schema)}.push_outbox`;
  return r!.n;
}

async function signIn(): Promise<string> {
  const res = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: DASHBOARD_TOKEN }) });
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
}

interface Answer {
  route: string;
  request: string;
  status: number;
  type: string;
  body: string;
  injected: boolean;
  framesDenied: boolean;
}

/** Static assets (bull-board's scripts and styles) are code, not answers: only their status is checked. */
const isAsset = (type: string) => /javascript|css|font|image|svg|octet-stream/.test(type);

/**
 * One request on a connection of its own: the server drops a connection whose refused body it stops reading,
 * which would otherwise fail whichever request came next on it.
 */
async function send(
  route: Route,
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array },
  label: string,
): Promise<Answer> {
  const res = await request(`${t.server.url}${url}`, {
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers,
    body: init.body,
    reset: true,
  }).catch((e: Error) => {
    throw new Error(`${route.method} ${route.path} ← ${label} ${url.slice(0, 120)}: ${e.message}`);
  });
  const type = String(res.headers['content-type'] ?? '');
  const body = isAsset(type) ? '' : await res.body.text();
  if (isAsset(type)) await res.body.dump();
  return {
    route: `${route.method} ${route.path}`,
    request: `${label} ${url.slice(0, 120)}`,
    status: res.statusCode,
    type,
    body,
    injected: 'x-injected' in res.headers,
    framesDenied: res.headers['x-frame-options'] === 'DENY' && res.headers['x-content-type-options'] === 'nosniff',
  };
}

/** Runs the jobs a few at a time, as a client hammering the server would. */
async function pool<T>(jobs: (() => Promise<T>)[], width = 6): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

/**
 * Sends a body in chunks (chunked unless a length is declared) and resolves with the status as soon as the server
 * answers: a server refusing the body may close the connection while the rest is still being written.
 */
function postUntilAnswered(path: string, headers: Record<string, string>, chunks: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(`${t.server.url}${path}`, { method: 'POST', headers }, (res) => {
      answered = true;
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', (e) => (answered ? undefined : reject(e)));
    const write = (i: number): void => {
      if (answered || req.destroyed) return;
      if (i === chunks.length) return void req.end();
      req.write(chunks[i], () => write(i + 1));
    };
    write(0);
  });
}

function problems(answers: Answer[]): string[] {
  const bad: string[] = [];
  for (const a of answers) {
    const what = `${a.route} ← ${a.request}: ${a.status}`;
    if (a.status >= 500) bad.push(`${what} (a 5xx) ${a.body.slice(0, 200)}`);
    // /ready names its checks (postgres, redis) by design; nothing else may mention the database.
    const leak = a.route.endsWith(' /ready') ? null : LEAKS.exec(a.body);
    if (leak) bad.push(`${what} leaks "${leak[0]}": ${a.body.slice(Math.max(0, leak.index - 80), leak.index + 80)}`);
    if (a.type.includes('html') && REFLECTED.test(a.body)) bad.push(`${what} reflects markup unescaped`);
    if (a.injected) bad.push(`${what} carries an injected header`);
    // 431: node refuses a request line past its header limit before the app sees it.
    if (!a.framesDenied && a.status !== 431) bad.push(`${what} may be framed by another site or sniffed into markup`);
  }
  return bad;
}

describe('the known faults', () => {
  const bearer = { authorization: `Bearer ${PUSH_TOKEN}` };

  it('an id past bigint is a 400 naming id, not a Postgres cast error', async () => {
    const res = await t.get('/push/99999999999999999999999999', { headers: bearer });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^id: /);
  });

  it('limits and ids are digits only: GET /push?limit=1e3 is a 400 naming limit', async () => {
    for (const limit of ['1e3', '0x10', '-1', '1.5', '99999999999999999999', '']) {
      const res = await t.get(`/push?limit=${limit}`, { headers: bearer });
      expect(res.status, limit).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^limit: /);
    }
    expect((await t.get('/push?limit=10', { headers: bearer })).status).toBe(200);
  });

  it('/rejects?before=1e400 is a 400 naming before', async () => {
    const res = await t.get('/rejects?before=1e400');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^before: /);
    for (const before of ['-1', '1.5', '0x10', '99999999999999999999'])
      expect((await t.get(`/rejects?before=${before}`)).status).toBe(400);
    expect((await t.get('/rejects?before=1')).status).toBe(200);
  });

  it("a company's timeline: a since, before or limit that is not one is a 400 naming it", async () => {
    const cases: [string, RegExp][] = [
      ['since=yesterday', /^since: expected an ISO date or time$/],
      ['since=2026-13-45', /^since: expected an ISO date or time$/],
      [`since=${encodeURIComponent(XSS)}`, /^since: /],
      ['before=1e400', /^before: /],
      ['before=0', /^before: /],
      ['limit=0x10', /^limit: /],
      ['limit=-1', /^limit: /],
      ['limit=99999999999999999999', /^limit: /],
    ];
    for (const [query, error] of cases) {
      const res = await t.get(`/api/companies/north/events?${query}`, { headers: bearer });
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as { error: string }).error, query).toMatch(error);
    }
    const res = await t.get('/api/companies/north/events?since=2026-01-01&before=1&limit=5', { headers: bearer });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ events: [], next: null });
  });

  it('flags are true or false: ?dryRun=maybe and ?purge=maybe are 400s naming them, and nothing changes', async () => {
    const before = await outboxRows();
    const push = await t.get('/push/individuals?dryRun=maybe', {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ ServiceId: 1, FirstName: 'A' }),
    });
    expect(push.status).toBe(400);
    expect(((await push.json()) as { error: string }).error).toBe('dryRun: expected true or false');
    const remove = await t.get('/api/companies/north?purge=maybe', { method: 'DELETE', headers: bearer });
    expect(remove.status).toBe(400);
    expect(((await remove.json()) as { error: string }).error).toBe('purge: expected true or false');
    expect(await outboxRows()).toBe(before);
    const companies = (await (await t.get('/api/companies', { headers: bearer })).json()) as { key: string }[];
    expect(companies.map((c) => c.key)).toContain('north');
  });

  it("a company's streams: a 4xx naming the field, and nothing changes", async () => {
    const post = (key: string, body: string) =>
      t.get(`/api/companies/${key}/streams`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body,
      });
    const cases: [string, string, number, RegExp][] = [
      ['north', JSON.stringify({ off: [XSS] }), 400, /^off: ".*" is not a stream; streams: /],
      ['north', JSON.stringify({ on: 'individuals,../../etc' }), 400, /^on: /],
      [
        'north',
        JSON.stringify({ off: ['run-log-forms'], on: ['individuals'] }),
        400,
        /^body: give off or on, not both/,
      ],
      ['north', JSON.stringify({ purge: true }), 400, /^body: give off or on/],
      ['north', JSON.stringify({ on: ['run-log-forms'], purge: true }), 400, /^purge: /],
      ['north', JSON.stringify({ off: { $gt: '' } }), 400, /^off: /],
      ['north', JSON.stringify({ off: Array(101).fill('individuals') }), 400, /^off: /],
      ['north', '{"off":', 400, /^body: expected JSON/],
      ['north', JSON.stringify({ off: ['individuals'] }), 409, /individuals is read by individual-certifications/],
      ['nowhere', JSON.stringify({ off: ['run-log-forms'] }), 404, /company nowhere is not added/],
      ["north'--", JSON.stringify({ off: ['run-log-forms'] }), 400, /^key: /],
    ];
    for (const [key, body, status, error] of cases) {
      const res = await post(encodeURIComponent(key), body);
      expect(res.status, body).toBe(status);
      expect(((await res.json()) as { error: string }).error, body).toMatch(error);
    }
    const res = await t.get('/api/companies/north/streams', { headers: bearer });
    expect(((await res.json()) as { off: string[] }).off).toEqual([]);
  });

  it('a malformed multipart sign-in is a 400 naming the body', async () => {
    const res = await t.get('/signin', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      body: '--x\r\ngarbage',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^body: expected a form/);
  });
});

describe('the new-fields routes', () => {
  const bearer = { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' };
  const fields = async () => {
    const wh = await t.app.warehouse();
    return wh.sql`select company_key, field, class from ${wh.sql(wh.schema)}.field_classes
      union all select company_key, 'mode', mode from ${wh.sql(wh.schema)}.new_field_modes`;
  };

  it('answer a bad body or field with a 400 naming it, and an unknown company or field with a 4xx; store nothing', async () => {
    const before = await fields();
    const bodies = [
      '{"class":',
      '[]',
      'null',
      '"personal"',
      '{"class":5}',
      '{"class":"PERSONAL"}',
      '{"class":"personal","then":1}',
      `{"class":${JSON.stringify(XSS)}}`,
      `${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`,
    ];
    for (const body of bodies) {
      for (const path of ['/api/companies/north/fields/BadgeNumber', '/api/companies/north/new-fields']) {
        const res = await t.get(path, {
          method: 'PUT',
          headers: bearer,
          body: body.replace('class', path.endsWith('new-fields') ? 'mode' : 'class'),
        });
        const error = ((await res.json()) as { error: string }).error;
        expect(res.status, `${path} ${body.slice(0, 40)}`).toBe(400);
        expect(error, `${path} ${body.slice(0, 40)}`).toMatch(/^(body|class|mode|then): /);
        expect(error).not.toContain('<script>');
      }
    }
    for (const field of HOSTILE_VALUES) {
      const res = await t.get(`/api/companies/north/fields/${encodeURIComponent(field)}`, {
        method: 'PUT',
        headers: bearer,
        body: '{"class":"personal"}',
      });
      expect([400, 404], field.slice(0, 40)).toContain(res.status);
      expect(((await res.json()) as { error: string }).error, field.slice(0, 40)).toMatch(/^(field|key|path): /);
    }
    expect(await fields()).toEqual(before);
  });
});

describe('an unexpected fault', () => {
  it('is a 500 with a generic message and a request id; the detail is only in the log, under that id', async () => {
    const lines: string[] = [];
    const log = pino(
      { level: 'error' },
      new Writable({
        write: (chunk, _enc, done) => {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const broken = await startTestApp(sandbox, {}, () => {}, log);
    try {
      const wh = await broken.app.warehouse();
      // A real fault: the table the page reads is gone.
      await wh.sql`drop table ${wh.sql(wh.schema)}.sync_rejects cascade`;
      const res = await broken.get('/rejects');
      expect(res.status).toBe(500);
      const body = (await res.json()) as { error: string; requestId: string };
      expect(body.error).toMatch(/^internal error/);
      expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get('x-request-id')).toBe(body.requestId);
      expect(JSON.stringify(body)).not.toMatch(LEAKS);
      const logged = lines
        .map((l) => JSON.parse(l) as { requestId?: string; err?: { message: string } })
        .find((l) => l.requestId === body.requestId);
      expect(logged?.err?.message).toMatch(/sync_rejects/);
      expect((await broken.get('/health')).status).toBe(200);
    } finally {
      await broken.close();
    }
  });
});

describe('concurrent duplicates', () => {
  it('the same push changeId 20 times at once is one stored change, and every answer names it', async () => {
    const before = await outboxRows();
    const change = {
      changeId: 'hostile-duplicate-1',
      FirstName: 'Dup',
      LastName: 'Licate',
      Status: 'Active',
      PrimaryEmailAddress: 'dup@example.org',
      LogonId: 'duplicate1',
      EmployeeNumber: 'DUP-1',
    };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.get('/push/individuals', {
          method: 'POST',
          headers: { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify(change),
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    const ids = new Set<number>();
    for (const a of answers) for (const s of (await a.json()) as { id: number; changeId: string }[]) ids.add(s.id);
    expect(ids.size).toBe(1);
    expect(await outboxRows()).toBe(before + 1);
  });

  it('20 sign-ins at once are 20 sessions, and 20 sign-outs of one session at once end it without a fault', async () => {
    const cookies = await Promise.all(Array.from({ length: 20 }, () => signIn()));
    expect(new Set(cookies).size).toBe(20);
    const outs = await Promise.all(
      Array.from({ length: 20 }, () => t.get('/signout', { method: 'POST', headers: { cookie: cookies[0]! } })),
    );
    expect(outs.map((o) => o.status)).toEqual(Array(20).fill(303));
    expect(await (await t.get('/rejects', { headers: { cookie: cookies[0]! } })).text()).not.toContain(PII);
    expect(await (await t.get('/rejects', { headers: { cookie: cookies[1]! } })).text()).toContain(PII);
  });
});

describe('every route', () => {
  it('reads the routes from the app: the ops pages, the push API and bull-board are all there', () => {
    const paths = new Set(routes().map((r) => `${r.method} ${r.path}`));
    for (const known of [
      'GET /',
      'GET /rejects',
      'GET /status',
      'GET /health',
      'GET /ready',
      'GET /metrics',
      'GET /signin',
      'POST /signin',
      'POST /signout',
      'POST /actions/run',
      'POST /actions/retry-push',
      'POST /push/individuals',
      'POST /push/certifications',
      'POST /push/verifications',
      'GET /push/:id{[0-9]+}',
      'GET /push',
      'GET /push/openapi.json',
      'GET /push/models',
      'POST /push/models',
      'GET /push/models/:name/preview',
      'POST /push/models/:name/run',
      'DELETE /push/models/:name',
      'POST /actions/push-models/:name/:verb',
      'GET /api/companies/:key/streams',
      'POST /api/companies/:key/streams',
      'POST /actions/companies/:key/streams',
      'GET /api/companies/:key/fields',
      'PUT /api/companies/:key/fields/:field',
      'PUT /api/companies/:key/new-fields',
      'POST /actions/companies/:key/fields/:field',
      'POST /actions/companies/:key/new-fields',
    ]) {
      expect(paths).toContain(known);
    }
    expect([...paths].filter((p) => p.includes('/queues/api/')).length).toBeGreaterThan(5);
  });

  it('answers hostile paths, queries and bodies, signed in and with the bearer token, without a 5xx, a leak or reflected markup; stores nothing', async () => {
    const all = routes();
    const before = await outboxRows();
    const cookies = sessions.splice(0, all.length);
    const jobs: (() => Promise<Answer>)[] = [];
    all.forEach((route, i) => {
      const headers = { cookie: cookies[i]!, authorization: `Bearer ${PUSH_TOKEN}` };
      const values = [...HOSTILE_VALUES.map(encodeURIComponent), ...HOSTILE_ENCODED];
      for (const v of values) {
        const query = ['company', 'stream', 'before', 'id', 'limit', 'status', 'since', 'done', 'page', 'jobsPerPage']
          .map((k) => `${k}=${v}`)
          .join('&');
        const url = `${fillPath(route.path, v)}?${query}`;
        if (route.method === 'GET') jobs.push(() => send(route, url, { headers }, 'GET'));
        else jobs.push(() => send(route, url, { method: route.method, headers }, route.method));
      }
      if (route.method === 'GET' || route.method === 'HEAD') return;
      const path = fillPath(route.path, route.path.includes('/push/') ? '1' : 'sync');
      for (const b of HOSTILE_BODIES) {
        jobs.push(() =>
          send(
            route,
            path,
            {
              method: route.method,
              headers: { ...headers, ...(b.type ? { 'content-type': b.type } : {}) },
              body: b.body,
            },
            b.name,
          ),
        );
      }
    });
    const answers = await pool(jobs);
    expect(problems(answers)).toEqual([]);
    // Every route was reached.
    expect(new Set(answers.map((a) => a.route)).size).toBe(all.length);
    expect(await outboxRows()).toBe(before);
    expect(await (await t.get('/health')).json()).toEqual({ ok: true });
  }, 240_000);

  it('refuses a missing or wrong credential on every route that needs one, and leaks nothing to it', async () => {
    const before = await outboxRows();
    const wrong: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-of-some-length', cookie: 'wfsync_session=forged-session-id' },
      { authorization: `Basic ${btoa('admin:admin')}`, cookie: 'wfsync_session=' },
    ];
    const jobs: (() => Promise<Answer>)[] = [];
    for (const route of routes()) {
      const path = fillPath(route.path, route.path.includes('/push/') ? '1' : 'sync');
      for (const headers of wrong) {
        const body =
          route.method === 'GET' ? undefined : JSON.stringify([{ changeId: 'no-credential', FirstName: 'Eve' }]);
        jobs.push(() =>
          send(
            route,
            path,
            { method: route.method, headers: { ...headers, 'content-type': 'application/json' }, body },
            'no credential',
          ),
        );
      }
    }
    const answers = await pool(jobs);
    expect(problems(answers)).toEqual([]);
    for (const a of answers) {
      const [method, path] = a.route.split(' ') as [string, string];
      if (path.startsWith('/push') && path !== '/push/openapi.json') expect(a.status, a.route).toBe(401);
      if (path.startsWith('/actions/') && method !== 'GET') expect(a.status, a.route).toBe(403);
      if (path.startsWith('/queues/api/') && method !== 'GET') expect(a.status, a.route).toBe(403);
      // Nobody signed in sees a payload.
      expect(a.body, a.route).not.toContain(PII);
    }
    expect(await outboxRows()).toBe(before);
  }, 120_000);

  it('oversized bodies are refused before they are read whole, with or without a declared length', async () => {
    const cookie = sessions.pop()!;
    const headers = { cookie, authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' };
    const before = await outboxRows();
    const big = (n: number) => `[${'{"FirstName":"x"},'.repeat(Math.ceil(n / 18))}{}]`;
    for (const path of ['/signin', '/actions/run', '/actions/retry-push']) {
      const res = await t.get(path, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${'x'.repeat(20_000)}`,
      });
      expect(res.status, path).toBe(413);
      expect(((await res.json()) as { error: string }).error).toMatch(/^body: larger than/);
    }
    const mb = big(1024 * 1024);
    expect(
      await postUntilAnswered(
        '/push/individuals',
        { ...headers, 'content-length': String(17 * Buffer.byteLength(mb)) },
        Array(17).fill(mb),
      ),
    ).toBe(413);
    expect(await postUntilAnswered('/push/individuals', headers, Array(17).fill(mb))).toBe(413);
    expect(await outboxRows()).toBe(before);
    expect((await t.get('/health')).status).toBe(200);
  }, 120_000);

  it('names the refused field for deep nesting, NUL characters and too many changes', async () => {
    const headers = { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' };
    const refusal = async (b: HostileBody) => {
      const res = await t.get('/push/individuals', { method: 'POST', headers, body: b.body });
      expect(res.status, b.name).toBe(422);
      return ((await res.json()) as { refused: { index: number; fields: Record<string, string> }[] }).refused[0]!;
    };
    const byName = (name: string) => HOSTILE_BODIES.find((b) => b.name === name)!;
    expect((await refusal(byName('a change nested deep in a field'))).fields).toEqual({
      [`FirstName${'.0'.repeat(7)}`]: 'nested deeper than 8 levels',
    });
    expect(Object.values((await refusal(byName('NUL and a lone surrogate'))).fields)[0]).toMatch(/NUL character/);
    expect((await refusal(byName('more changes than allowed'))).fields.body).toMatch(/at most 10000 changes/);
  });
});
