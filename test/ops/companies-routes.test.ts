import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { parseKeySpec } from '../../src/sandbox/keys.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The companies on the ops server: JSON routes behind the push token, and the page's forms for a signed-in operator;
 * a company's streams turned off and on there, and shown.
 */

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
    rateLimit: { limit: 100, periodMs: 1000 },
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

describe("a company's streams on the ops server", () => {
  const streams = async (key: string, body?: unknown) => {
    const res = await api(`/${key}/streams`, body === undefined ? 'GET' : 'POST', body);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const offNow = async () => (await streams('north')).body.off;

  it('turns streams off and on through the API, refusing bad input with a 4xx naming the field', async () => {
    expect(await streams('north')).toMatchObject({ status: 200, body: { key: 'north', off: [] } });
    for (const [body, status, error] of [
      [{ off: ['run-logs'] }, 400, /^off: "run-logs" is not a stream; streams: certifications, /],
      [{ on: 'individuals,nothing' }, 400, /^on: "nothing" is not a stream/],
      [{ off: [] }, 400, /^off: name at least one stream/],
      [{ off: 5 }, 400, /^off: /],
      [{ off: ['run-log-forms'], on: ['individuals'] }, 400, /^body: give off or on, not both$/],
      [{}, 400, /^body: give off or on/],
      [{ on: ['run-log-forms'], purge: true }, 400, /^purge: only with off/],
      [{ off: ['run-log-forms'], purge: 'yes' }, 400, /^purge: /],
      [{ off: ['run-log-forms'], everything: true }, 400, /^body: /],
      [[], 400, /^body: expected an object/],
      [{ off: ['individuals'] }, 409, /individuals is read by individual-certifications: turn it off too/],
    ] as const) {
      const answer = await streams('north', body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      expect(answer.body.error, JSON.stringify(body)).toMatch(error);
    }
    expect((await api('/north/streams', 'POST', undefined)).status).toBe(400);
    expect(await streams('nowhere', { off: ['run-log-forms'] })).toMatchObject({
      status: 404,
      body: { kind: 'unknown_company' },
    });
    expect(await offNow()).toEqual([]);

    expect(await streams('north', { off: ['individual-certifications', 'individuals'] })).toMatchObject({
      status: 200,
      body: { off: ['individuals', 'individual-certifications'] },
    });
    expect(await streams('north', { on: ['individual-certifications'] })).toMatchObject({
      status: 409,
      body: { kind: 'dependency_off', error: expect.stringMatching(/reads individuals, which is off/) },
    });
    expect(await streams('north', { on: 'individuals,individual-certifications' })).toMatchObject({
      status: 200,
      body: { off: [] },
    });
  });

  it('purges a stream of one company, and refuses its re-sync while it is off', async () => {
    const env = await t.app.environment();
    const { ctx } = env.companies.get('north')!;
    await runStreams(ctx, selectStreams(['run-log-forms']));
    const wh = await t.app.warehouse();
    const rows = async () =>
      (
        await wh.sql<
          { n: number }[]
        >`select count(*)::int as n from ${wh.sql(wh.schema)}.run_log_forms where company_key = 'north'`
      )[0]!.n;
    expect(await rows()).toBeGreaterThan(0);
    expect(await streams('north', { off: ['run-log-forms'], purge: true })).toMatchObject({
      status: 200,
      body: {
        off: ['run-log-forms'],
        purged: { run_log_forms: expect.any(Number), sync_state: expect.any(Number), sync_rejects: 0 },
      },
    });
    expect(await rows()).toBe(0);
    expect(await api('/north/streams/run-log-forms/resync', 'POST').then((r) => r.status)).toBe(409);
    expect(await streams('north', { on: ['run-log-forms'] })).toMatchObject({ status: 200, body: { off: [] } });
  });

  it("shows the streams off on the overview, the companies page and the company's page, whose form turns them off and on", async () => {
    const form = (fields: [string, string][]) => new URLSearchParams(fields);
    expect(
      (await t.get('/actions/companies/north/streams', { method: 'POST', body: form([['turn', 'off']]) })).status,
    ).toBe(403);
    const signIn = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: DASHBOARD_TOKEN }) });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const act = (fields: [string, string][]) =>
      t.get('/actions/companies/north/streams', { method: 'POST', headers: { cookie }, body: form(fields) });

    const page = await (await t.get('/companies/north', { headers: { cookie } })).text();
    expect(page).toContain('name="streams" value="run-log-form-responses" form="streams-form"');
    const unconfirmed = await act([
      ['streams', 'run-log-forms'],
      ['streams', 'run-log-form-responses'],
      ['turn', 'off'],
      ['purge', 'on'],
      ['confirm', 'nor'],
    ]);
    expect(unconfirmed.status).toBe(400);
    expect(((await unconfirmed.json()) as { error: string }).error).toMatch(/^confirm: /);
    const refused = await act([
      ['streams', 'nothing'],
      ['turn', 'off'],
    ]);
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toMatch(/^streams: "nothing" is not a stream/);
    expect(await offNow()).toEqual([]);

    const turned = await act([
      ['streams', 'run-log-forms'],
      ['streams', 'run-log-form-responses'],
      ['turn', 'off'],
    ]);
    expect(turned.status).toBe(303);
    expect(decodeURIComponent(turned.headers.get('location')!)).toContain(
      'company north: run-log-forms, run-log-form-responses off; their rows stay',
    );
    expect(await offNow()).toEqual(['run-log-forms', 'run-log-form-responses']);

    const after = await (await t.get('/companies/north', { headers: { cookie } })).text();
    expect(after).toMatch(/data-stream="run-log-forms" data-freshness="off"/);
    expect(after).toContain('Off: run-log-forms, run-log-form-responses.');
    expect(after).not.toContain('/streams/run-log-forms/resync');
    expect(after).toContain('/streams/individuals/resync');
    const overview = await (await t.get('/')).text();
    expect(overview).toMatch(/<tr data-company="north"[^\n]*<td>run-log-forms, run-log-form-responses<\/td><\/tr>/);
    expect(await (await t.get('/companies')).text()).toContain('<td>run-log-forms, run-log-form-responses</td>');

    expect(
      (
        await act([
          ['streams', 'run-log-forms'],
          ['streams', 'run-log-form-responses'],
          ['turn', 'on'],
        ])
      ).status,
    ).toBe(303);
    expect(await offNow()).toEqual([]);
  });
});
