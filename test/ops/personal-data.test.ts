import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/** Personal data on the ops server: the JSON routes behind the push token, and the page's forms signed in. */

const PUSH_TOKEN = 'push-token-for-personal-data-tests';
const DASHBOARD_TOKEN = 'dashboard-token-for-personal-data-tests';
let sandbox: RunningSandbox;
let t: TestApp;
let wh: Warehouse;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 3, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(
    sandbox,
    {
      WFS_COMPANIES: JSON.stringify([{ key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url }]),
      WFS_PUSH_TOKEN: PUSH_TOKEN,
      WFS_DASHBOARD_TOKEN: DASHBOARD_TOKEN,
      WFS_SECRET_KEY: 'secret-key-for-personal-data-tests',
      WFS_PERSONAL_DATA_KEY: 'personal-data-key-for-tests',
    },
    (app) => app.push({ serve: true, run: false }),
  );
  wh = await t.app.warehouse();
  const s = wh.sql(wh.schema);
  await wh.sql`insert into ${s}.individuals (company_key, service_id, first_name, employee_number, primary_email_address, mobile_phone_number, _synced_at, _hash)
    values ('north', 77, 'Ada', 'E-77', 'ada@example.org', '555-0177', now(), 'h77'), ('north', 78, 'Bo', 'E-78', 'bo@example.org', '555-0178', now(), 'h78')`;
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

const bearer = { authorization: `Bearer ${PUSH_TOKEN}`, 'content-type': 'application/json' };
const api = async (path: string, method = 'GET', body?: unknown) => {
  const res = await t.get(`/api/companies${path}`, {
    method,
    headers: bearer,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const individual = async (id: number) =>
  (
    await wh.sql`select first_name, employee_number, primary_email_address, mobile_phone_number, _hash from ${wh.sql(wh.schema)}.individuals where service_id = ${id}`
  )[0];

describe('the personal-data JSON routes', () => {
  it('need the push token', async () => {
    expect((await t.get('/api/companies/north/personal-data')).status).toBe(401);
    expect((await t.get('/api/companies/north/erasures', { method: 'POST', body: '{"serviceId":77}' })).status).toBe(
      401,
    );
  });

  it('set a policy, rewrite what is stored, and show it', async () => {
    const set = await api('/north/personal-data', 'PUT', { PrimaryEmailAddress: 'hash', MobilePhoneNumber: 'block' });
    expect(set).toMatchObject({ status: 200, body: { company: 'north', rewritten: { individuals: 2 } } });
    expect(await individual(78)).toMatchObject({
      first_name: 'Bo',
      mobile_phone_number: null,
      primary_email_address: expect.stringMatching(/^[0-9a-f]{64}$/),
      _hash: expect.stringMatching(/^p/),
    });
    expect(await api('/north/personal-data')).toMatchObject({
      status: 200,
      body: {
        company: 'north',
        fields: { PrimaryEmailAddress: 'hash', MobilePhoneNumber: 'block' },
        rewritePending: false,
      },
    });
  });

  it('refuse an unknown field, action, company or person with a 4xx naming it, and change nothing', async () => {
    const before = await individual(78);
    expect(await api('/north/personal-data', 'PUT', { ShoeSize: 'hash' })).toMatchObject({
      status: 400,
      body: { kind: 'unknown_field', error: expect.stringContaining('ShoeSize') },
    });
    expect(await api('/north/personal-data', 'PUT', { FirstName: 'shred' })).toMatchObject({
      status: 400,
      body: { kind: 'unknown_action', error: expect.stringContaining('FirstName') },
    });
    expect(await api('/north/personal-data', 'PUT', { DateOfBirth: 'hash' })).toMatchObject({
      status: 400,
      body: { kind: 'not_hashable' },
    });
    expect(await api('/south/personal-data', 'PUT', { FirstName: 'hash' })).toMatchObject({
      status: 404,
      body: { kind: 'unknown_company' },
    });
    expect(await api('/north/erasures', 'POST', { serviceId: 999 })).toMatchObject({
      status: 404,
      body: { kind: 'unknown_person' },
    });
    expect(await api('/north/erasures', 'POST', { serviceId: '77' })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^serviceId: /) },
    });
    expect(await api('/north/erasures', 'POST', { serviceId: 77, who: 'me' })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^who: /) },
    });
    expect(await individual(78)).toEqual(before);
  });

  it('erase a person by employee number: every personal field blocked, one erasures row without personal data', async () => {
    const done = await api('/north/erasures', 'POST', { employeeNumber: 'E-77', requestedBy: 'privacy office' });
    expect(done).toMatchObject({ status: 201, body: { company: 'north', rewritten: { individuals: 1 } } });
    expect(await individual(77)).toMatchObject({
      first_name: null,
      employee_number: null,
      primary_email_address: null,
      mobile_phone_number: null,
    });
    expect(await individual(78)).toMatchObject({ first_name: 'Bo' });
    const rows = await wh.sql`select requested_by, cause, counts::text as counts from ${wh.sql(wh.schema)}.erasures`;
    expect(rows).toEqual([
      { requested_by: 'token:env (privacy office)', cause: 'request', counts: expect.not.stringContaining('E-77') },
    ]);
  });
});

describe('the personal-data page', () => {
  it('shows the policy to everyone and sets it for a signed-in operator only', async () => {
    const page = await (await t.get('/companies/north/personal-data')).text();
    expect(page).toContain('PrimaryEmailAddress');
    expect(page).not.toContain('<select');
    const form = new URLSearchParams({ FirstName: 'hash' });
    expect(
      (await t.get('/actions/companies/north/personal-data', { method: 'POST', body: form })).status,
    ).toBeGreaterThanOrEqual(400);
    expect(await individual(78)).toMatchObject({ first_name: 'Bo' });

    const signin = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: DASHBOARD_TOKEN }) });
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    const res = await t.get('/actions/companies/north/personal-data', {
      method: 'POST',
      body: form,
      headers: { cookie },
    });
    expect(res.status).toBe(303);
    expect(await individual(78)).toMatchObject({ first_name: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(await (await t.get('/companies/north/personal-data', { headers: { cookie } })).text()).toContain(
      '<select name="FirstName">',
    );
  });
});
