import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** Push models on the ops server: the JSON routes behind the push token, the status page, and its signed-in buttons. */

const PUSH_TOKEN = 'push-token-for-model-tests';
const DASHBOARD_TOKEN = 'dashboard-token-for-model-tests';
let sandbox: RunningSandbox;
let t: TestApp;
beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 5,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    log: pino({ level: 'silent' }),
  });
  t = await startTestApp(
    sandbox,
    { WFS_PUSH_TOKEN: PUSH_TOKEN, WFS_DASHBOARD_TOKEN: DASHBOARD_TOKEN, WFS_SECRET_KEY: 'secret-key-for-model-tests' },
    (app) => app.push({ serve: true, run: false }),
  );
  const wh = await t.app.warehouse();
  await wh.sql.unsafe(`create table public.hr_people (employee_number text, first_name text)`);
  await wh.sql.unsafe(`insert into public.hr_people values ('HR-1', 'Ada'), ('HR-2', 'Grace')`);
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const bearer = { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' };

describe('push models on the ops server', () => {
  it('adds, previews and lists a model over the API; refuses a bad one with a 4xx naming it', async () => {
    const add = (body: unknown) =>
      t.get('/push/models', { method: 'POST', headers: bearer, body: JSON.stringify(body) });
    const query = `select employee_number as "EmployeeNumber", first_name as "FirstName" from public.hr_people`;
    const added = await add({ name: 'hr', kind: 'individuals', query, key: 'EmployeeNumber', cron: '*/15 * * * *' });
    expect(added.status).toBe(201);
    expect(await added.json()).toMatchObject({
      name: 'hr',
      company: 'north',
      fields: ['EmployeeNumber', 'FirstName'],
      cron: '*/15 * * * *',
      maxChanges: 100,
    });
    expect((await add({ name: 'hr', kind: 'individuals', query, key: 'EmployeeNumber' })).status).toBe(409);
    const readOnly = await add({
      name: 'ro',
      kind: 'individuals',
      query: `select 'x' as "EmployeeNumber", 1 as "JobTitleId"`,
      key: 'EmployeeNumber',
    });
    expect(readOnly.status).toBe(400);
    expect(((await readOnly.json()) as { error: string }).error).toBe(
      'model ro: JobTitleId is read only: the service sets it, so it cannot be pushed',
    );
    expect(
      (await add({ name: 'broken', kind: 'individuals', query: 'select from nowhere', key: 'EmployeeNumber' })).status,
    ).toBe(422);
    expect((await t.get('/push/models', { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const preview = await t.get('/push/models/hr/preview', { headers: bearer });
    // Two people the warehouse lacks: two inserts, each refused (an insert needs LastName, Status, e-mail and LogonId).
    expect(await preview.json()).toMatchObject({ rowsRead: 2, changed: 2, refused: 2, queued: 0 });
    expect(await (await t.get('/push/models', { headers: bearer })).json()).toEqual([
      expect.objectContaining({ name: 'hr' }),
    ]);
    expect((await t.get('/push/models/nope/preview', { headers: bearer })).status).toBe(404);
  });

  it('shows each model and its last run on the status page; a signed-in operator runs, pauses and removes it', async () => {
    const signin = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: DASHBOARD_TOKEN }) });
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    const anonymous = await (await t.get('/')).text();
    expect(anonymous).toContain('id="push-models"');
    expect(anonymous).not.toContain('action="/actions/push-models/hr/run"');
    expect((await t.get('/actions/push-models/hr/run', { method: 'POST' })).status).toBe(403);
    const run = await t.get('/actions/push-models/hr/run', { method: 'POST', headers: { cookie } });
    expect(run.status).toBe(303);
    expect(decodeURIComponent(run.headers.get('location')!)).toBe('/?done=model hr: 2 changed, 0 queued, 2 refused');
    const page = await (await t.get('/', { headers: { cookie } })).text();
    const row = /<tr data-model="hr">(.*?)<\/tr>/s.exec(page)![1]!;
    expect(row.match(/<td>(\d+)<\/td>/g)!.map((d) => d.replace(/\D/g, ''))).toEqual(['100', '2', '0', '2', '0', '2']);
    const paused = await t.get('/actions/push-models/hr/pause', { method: 'POST', headers: { cookie } });
    expect(decodeURIComponent(paused.headers.get('location')!)).toBe('/?done=model hr is paused');
    expect(await (await t.get('/', { headers: { cookie } })).text()).toContain(
      'action="/actions/push-models/hr/resume"',
    );
    await t.get('/actions/push-models/hr/remove', { method: 'POST', headers: { cookie } });
    expect(await (await t.get('/push/models', { headers: bearer })).json()).toEqual([]);
    expect((await t.get('/actions/push-models/hr/explode', { method: 'POST', headers: { cookie } })).status).toBe(400);
  });
});
