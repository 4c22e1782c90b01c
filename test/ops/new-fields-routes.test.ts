import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { startTestApp, type TestApp } from './helpers.ts';

/**
 * The fields the service added, on the ops server: their classes and the company's mode for new fields as JSON
 * behind the push token, and as forms on the company's page signed in.
 */

const PUSH_TOKEN = 'push-token-for-new-fields-tests';
const DASHBOARD_TOKEN = 'dashboard-token-for-new-fields-tests';
let sandbox: RunningSandbox;
let t: TestApp;
let wh: Warehouse;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  t = await startTestApp(
    sandbox,
    {
      WFS_COMPANIES: JSON.stringify([{ key: 'north', apiKey: sandbox.apiKey, baseUrl: sandbox.url }]),
      WFS_PUSH_TOKEN: PUSH_TOKEN,
      WFS_DASHBOARD_TOKEN: DASHBOARD_TOKEN,
      WFS_SECRET_KEY: 'secret-key-for-new-fields-tests',
    },
    (app) => app.push({ serve: true, run: false }),
  );
  wh = await t.app.warehouse();
  const s = wh.sql(wh.schema);
  await wh.sql`insert into ${s}.individuals (company_key, service_id, first_name, _extra, _synced_at, _hash)
    values ('north', 77, 'Ada', '{"BadgeNumber":"B-00000077","Locker":"L-7"}', now(), 'c77')`;
  await wh.sql`insert into ${s}.schema_changes (company_key, stream, field_path, json_type, example, records_seen)
    values ('north', 'individuals', 'BadgeNumber', 'string', '"x-99999999"', 1), ('north', 'individuals', 'Locker', 'string', '"x-9"', 1)`;
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
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const extra = async () =>
  (await wh.sql`select _extra from ${wh.sql(wh.schema)}.individuals where service_id = 77`)[0]!._extra;
const stored = async () => ({
  classes: await wh.sql`select company_key, field, class from ${wh.sql(wh.schema)}.field_classes order by 1, 2`,
  modes: await wh.sql`select company_key, mode from ${wh.sql(wh.schema)}.new_field_modes order by 1`,
  extra: await extra(),
});

describe('the new-fields JSON routes', () => {
  it('need the push token', async () => {
    expect((await t.get('/api/companies/north/fields')).status).toBe(401);
    const put = await t.get('/api/companies/north/new-fields', { method: 'PUT', body: '{"mode":"hold"}' });
    expect(put.status).toBe(401);
    expect(await extra()).toEqual({ BadgeNumber: 'B-00000077', Locker: 'L-7' });
  });

  it('hold the values of unclassified fields, and classify one, asking for a re-sync of the stream that sent it', async () => {
    expect(await api('/north/fields')).toMatchObject({
      status: 200,
      body: {
        company: 'north',
        newFields: 'keep',
        fields: [{ field_path: expect.any(String), class: 'unclassified' }, {}],
      },
    });
    const held = await api('/north/new-fields', 'PUT', { mode: 'hold' });
    expect(held).toMatchObject({
      status: 200,
      body: { company: 'north', mode: 'hold', rewritten: { individuals: 1 } },
    });
    expect(await extra()).toBeNull();
    const classified = await api('/north/fields/Locker', 'PUT', { class: 'personal' });
    expect(classified).toMatchObject({
      status: 200,
      body: {
        company: 'north',
        field: 'Locker',
        class: 'personal',
        resync: [{ company: 'north', stream: 'individuals' }],
      },
    });
    expect((classified.body.resyncs as string[])[0]).toMatch(/re-sync \d+ of individuals of north/);
    expect(await wh.sql`select stream, via from ${wh.sql(wh.schema)}.resync_requests`).toEqual([
      { stream: 'individuals', via: 'api' },
    ]);
    expect((await api('/north/personal-data')).body.kinds).toMatchObject({
      Locker: 'personal',
      IncidentAddress: 'patient',
    });
  });

  it('refuse bad input with a 4xx naming the field, and change nothing', async () => {
    const before = await stored();
    const cases: [string, string, unknown, number, RegExp][] = [
      ['/north/fields/BadgeNumber', 'PUT', { class: 'secret' }, 400, /^class: /],
      ['/north/fields/BadgeNumber', 'PUT', {}, 400, /^class: /],
      ['/north/fields/BadgeNumber', 'PUT', { class: 'personal', also: 1 }, 400, /^also: unknown field/],
      ['/north/fields/BadgeNumber', 'PUT', '{"class":', 400, /^body: expected JSON/],
      ['/north/fields/BadgeNumber', 'PUT', ['personal'], 400, /^body: /],
      ['/north/fields/ShoeSize', 'PUT', { class: 'personal' }, 400, /^field: "ShoeSize" was never sent/],
      [
        '/north/fields/FirstName',
        'PUT',
        { class: 'not-personal' },
        400,
        /^FirstName: a field of the personal-data catalog/,
      ],
      ['/south/fields/BadgeNumber', 'PUT', { class: 'personal' }, 404, /unknown company "south"/],
      ['/north/new-fields', 'PUT', { mode: 'drop' }, 400, /^mode: /],
      ['/north/new-fields', 'PUT', { mode: 'hold', class: 'x' }, 400, /^class: unknown field/],
      ['/south/new-fields', 'PUT', { mode: 'hold' }, 404, /unknown company "south"/],
      ['/south/fields', 'GET', undefined, 404, /unknown company "south"/],
    ];
    for (const [path, method, body, status, error] of cases) {
      const res = await api(path, method, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(res.body.error, `${method} ${path} ${JSON.stringify(body)}`).toMatch(error);
    }
    expect(await stored()).toEqual(before);
  });
});

describe("the company page's new fields", () => {
  it('shows each field with its class to everyone, and classifies one for a signed-in operator only', async () => {
    const page = await (await t.get('/companies/north')).text();
    expect(page).toMatch(
      /<tr data-field="BadgeNumber"><td><code>BadgeNumber<\/code><\/td><td class="late">unclassified<\/td><td>held<\/td>/,
    );
    expect(page).not.toContain('name="class"');
    const form = new URLSearchParams({ class: 'patient' });
    const action = '/actions/companies/north/fields/BadgeNumber';
    expect((await t.get(action, { method: 'POST', body: form })).status).toBe(403);
    const signin = await t.get('/signin', { method: 'POST', body: new URLSearchParams({ token: DASHBOARD_TOKEN }) });
    const cookie = signin.headers.get('set-cookie')!.split(';')[0]!;
    const res = await t.get(action, { method: 'POST', body: form, headers: { cookie } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toMatch(/^\/companies\/north\?done=BadgeNumber%20is%20patient/);
    const signedIn = await (await t.get('/companies/north', { headers: { cookie } })).text();
    expect(signedIn).toMatch(
      /<tr data-field="BadgeNumber"><td><code>BadgeNumber<\/code><\/td><td class="">patient<\/td><td>stored<\/td>/,
    );
    expect(signedIn).toContain('<select name="mode">');
    const bad = await t.get(action, {
      method: 'POST',
      body: new URLSearchParams({ class: 'secret' }),
      headers: { cookie },
    });
    expect(bad.status).toBe(400);
  });
});
