import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { parseKeySpec } from '../../src/sandbox/keys.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** The companies on the ops server: JSON routes behind the push token, and the page's forms for a signed-in operator. */

const PUSH_TOKEN = 'push-token-for-companies-tests';
const DASHBOARD_TOKEN = 'dashboard-token-for-companies-tests';
const NORTH_KEY = 'north-key-for-ops-tests-5Rt';
const EAST_KEY = 'east-key-for-ops-tests-2Lm';
const EAST_NEW_KEY = 'east-new-key-for-ops-tests-9Vb';
let sandbox: RunningSandbox;
let t: TestApp;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 3,
    size: 'tiny',
    rateLimit: { limit: 100, windowMs: 1000 },
    keys: [NORTH_KEY, EAST_KEY, EAST_NEW_KEY].map(parseKeySpec),
  });
  t = await startTestApp(
    sandbox,
    {
      WFS_COMPANIES: JSON.stringify([{ key: 'north', apiKey: NORTH_KEY, baseUrl: sandbox.url }]),
      WFS_PUSH_TOKEN: PUSH_TOKEN,
      WFS_DASHBOARD_TOKEN: DASHBOARD_TOKEN,
      WFS_SECRET_KEY: 'secret-key-for-companies-tests',
      WFS_COMPANIES_REFRESH_SECONDS: '0.5',
    },
    (app) => app.push({ serve: true, run: false }),
  );
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const bearer = { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' };
const api = (path: string, method = 'GET', body?: unknown) =>
  t.get(`/api/companies${path}`, {
    method,
    headers: bearer,
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('the companies JSON routes', () => {
  it('need the push token', async () => {
    expect((await t.get('/api/companies')).status).toBe(401);
    expect(
      (await t.get('/api/companies', { headers: { authorization: 'Bearer wrong-token-of-some-length' } })).status,
    ).toBe(401);
  });

  it('add (checking the key first), pause, resume, rotate and remove; no answer carries a key', async () => {
    const answers: string[] = [];
    const send = async (path: string, method?: string, body?: unknown) => {
      const res = await api(path, method, body);
      const text = await res.text();
      answers.push(text);
      return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
    };
    expect(await send('', 'POST', { key: 'east', baseUrl: sandbox.url, apiKey: 'not-a-key-it-knows' })).toMatchObject({
      status: 422,
      body: { kind: 'key_refused' },
    });
    expect(await send('', 'POST', { key: 'east', baseUrl: 'ftp://x', apiKey: EAST_KEY })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^baseUrl: /) },
    });
    expect(
      await send('', 'POST', {
        key: 'east',
        baseUrl: sandbox.url,
        apiKey: EAST_KEY,
        formIds: [1],
        rateLimit: '100/1s',
      }),
    ).toMatchObject({
      status: 201,
      body: { key: 'east', formIds: [1], rateLimit: '100/1s', paused: false, managedBy: 'operator' },
    });
    expect(await send('', 'POST', { key: 'east', baseUrl: sandbox.url, apiKey: EAST_KEY })).toMatchObject({
      status: 409,
      body: { kind: 'already_added' },
    });
    // Pushes name it at once.
    const change = {
      company: 'east',
      changeId: 'east-1',
      FirstName: 'Ada',
      LastName: 'King',
      Status: 'Active',
      PrimaryEmailAddress: 'ada@example.org',
      LogonId: 'aking',
      EmployeeNumber: 'E-1',
    };
    expect(
      (await t.get('/push/individuals', { method: 'POST', headers: bearer, body: JSON.stringify(change) })).status,
    ).toBe(202);
    expect(await send('/east/pause', 'POST')).toMatchObject({ status: 200, body: { paused: true } });
    expect(await send('/east/resume', 'POST')).toMatchObject({ status: 200, body: { paused: false } });
    expect(await send('/east/rotate-key', 'POST', { apiKey: 'not-a-key-it-knows' })).toMatchObject({
      status: 422,
      body: { kind: 'key_refused' },
    });
    expect(await send('/east/rotate-key', 'POST', { apiKey: EAST_NEW_KEY })).toMatchObject({ status: 200 });
    expect(await send('/north/pause', 'POST')).toMatchObject({ status: 409, body: { kind: 'managed_by_environment' } });
    expect(await send('/nowhere', 'DELETE')).toMatchObject({ status: 404, body: { kind: 'unknown_company' } });
    const list = await send('');
    expect((list.body as unknown as { key: string }[]).map((c) => c.key)).toEqual(['east', 'north']);
    // Each change is on the company's timeline, newest first; the refused rotation is not.
    const timeline = async () =>
      ((await send('/east/events')).body as { events: { event: string }[] }).events.map((e) => e.event);
    expect(await timeline()).toEqual(['key_rotated', 'company_resumed', 'company_paused', 'company_added']);
    expect(await send('/east/events?since=yesterday')).toMatchObject({
      status: 400,
      body: { error: 'since: expected an ISO date or time' },
    });
    expect(await send('/east?purge=true', 'DELETE')).toMatchObject({
      status: 200,
      body: { removed: { key: 'east' }, purged: expect.objectContaining({ individuals: 0, push_outbox: 1 }) },
    });
    // A purge leaves no row of the company, its timeline included.
    expect(await timeline()).toEqual([]);
    for (const key of [NORTH_KEY, EAST_KEY, EAST_NEW_KEY]) expect(answers.join('\n')).not.toContain(key);
  });
});

describe('the companies page', () => {
  it('shows the companies to everyone, and acts only for a signed-in operator', async () => {
    const page = await (await t.get('/companies')).text();
    expect(page).toContain('north');
    expect(page).not.toContain(NORTH_KEY);
    expect(page).not.toContain('action="/actions/companies"');
    const form = new URLSearchParams({ key: 'west', baseUrl: sandbox.url, apiKey: EAST_KEY });
    expect((await t.get('/actions/companies', { method: 'POST', body: form })).status).toBe(403);

    const signIn = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: DASHBOARD_TOKEN }) });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    expect(await (await t.get('/companies', { headers: { cookie } })).text()).toContain('action="/actions/companies"');
    const added = await t.get('/actions/companies', { method: 'POST', headers: { cookie }, body: form });
    expect(added.status).toBe(303);
    expect(decodeURIComponent(added.headers.get('location')!)).toContain('company west is added');
    expect((await t.get('/actions/companies/west/pause', { method: 'POST', headers: { cookie } })).status).toBe(303);
    // Purging from the page asks for the key typed again.
    const unconfirmed = await t.get('/actions/companies/west/remove', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ purge: 'on', confirm: 'wes' }),
    });
    expect(unconfirmed.status).toBe(400);
    expect(((await unconfirmed.json()) as { error: string }).error).toMatch(/^confirm: /);
    const removed = await t.get('/actions/companies/west/remove', {
      method: 'POST',
      headers: { cookie },
      body: new URLSearchParams({ purge: 'on', confirm: 'west' }),
    });
    expect(removed.status).toBe(303);
    const after = await (await t.get('/companies', { headers: { cookie } })).text();
    expect(after).not.toContain('>west<');
    expect(after).not.toContain(EAST_KEY);
  });
});
