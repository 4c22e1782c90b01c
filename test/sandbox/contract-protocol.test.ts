import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { Endpoint } from '../../src/source/endpoints.ts';
import { endpoints } from '../../src/resources/index.ts';
import { individualAliases, renameKeys } from '../../src/source/schemas/index.ts';
import { asXmlReads, call, parseXml, truth, v2, xmlValue } from './http-helpers.ts';

const DAY = 86_400_000;
const SA = '/ShiftAssignment/GetList';

function window(sb: RunningSandbox, days = 10) {
  const now = sb.data.now().getTime();
  return {
    StartDate: new Date(now - days * DAY).toISOString(),
    EndDate: new Date(now + days * DAY).toISOString(),
  };
}

describe('protocol against the generated data', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 1, rateLimit: null });
  });
  afterAll(() => sb.close());

  describe('errors', () => {
    it('answers an unknown path with status 404, error `not_found` in the `error`/`error_message` shape', async () => {
      const res = await call(sb, v2('/Individual/NoSuchThing'));
      expect(res.status).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found', error_message: expect.any(String) });
    });

    it('answers a write path read with GET as not found', async () => {
      expect((await call(sb, v2('/Individual/Insert'))).status).toBe(404);
    });

    it('refuses a body that is not JSON: 400 `invalid_request` ("not a valid request")', async () => {
      for (const rawBody of ['{"FirstName":', '']) {
        const res = await call(sb, v2('/Individual/Insert'), { method: 'POST', rawBody });
        expect(res.status).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request' });
      }
    });
  });

  describe('query parameters (Endpoints; "Offset int optional, default 0 ... Limit int optional, default 200, must be between 1 and 200")', () => {
    it('matches parameter names case-insensitively, as the spec writes both `serviceId` and `ServiceId`', async () => {
      const w = window(sb);
      const a = await call(sb, v2(SA, w));
      const b = await call(sb, v2(SA.toLowerCase(), { startdate: w.StartDate, ENDDATE: w.EndDate }));
      expect(a.status).toBe(200);
      expect(b.text).toBe(a.text);
    });

    it('refuses a missing required parameter with 400 `invalid_parameters` naming it', async () => {
      const res = await call(sb, v2(SA, { StartDate: window(sb).StartDate }));
      expect(res.status).toBe(400);
      expect(res.json().error).toBe('invalid_parameters');
      expect(res.json().error_message).toContain('EndDate');
    });

    it('refuses Limit outside 1 to 200 and a negative Offset, naming the parameter', async () => {
      for (const [name, value] of [
        ['Limit', 0],
        ['Limit', 201],
        ['Limit', 'ten'],
        ['Offset', -1],
      ] as const) {
        const res = await call(sb, v2(SA, { ...window(sb), [name]: value }));
        expect(res.status, `${name}=${value}`).toBe(400);
        expect(res.json()).toEqual({ error: 'invalid_parameters', error_message: expect.stringContaining(name) });
      }
    });

    it("refuses values that are not of the parameter's type", async () => {
      const bad: Array<[string, string]> = [
        ['OnlyOpenShifts', 'yes'],
        ['StartDate', '2025-02-30'],
        ['StartDate', 'yesterday'],
      ];
      for (const [name, value] of bad) {
        const res = await call(sb, v2(SA, { ...window(sb), [name]: value }));
        expect(res.status, `${name}=${value}`).toBe(400);
        expect(res.json().error_message).toContain(name);
      }
    });

    it('"A `+` in an offset sent in a query string must be encoded as `%2B`": unencoded it arrives as a space and is refused', async () => {
      const res = await call(
        sb,
        `${SA}?api-version=2.0&StartDate=2025-01-01T00:00:00+02:00&EndDate=2025-01-31T00:00:00%2B02:00`,
      );
      expect(res.status).toBe(400);
      expect(res.json()).toMatchObject({
        error: 'invalid_parameters',
        error_message: expect.stringContaining('StartDate'),
      });
    });

    it('reads offsets sent as %2B as the same instants as their UTC spelling', async () => {
      const now = sb.data.now().getTime();
      const start = new Date(now - 5 * DAY);
      const end = new Date(now + 5 * DAY);
      const shifted = (d: Date) => `${new Date(d.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}%2B02:00`;
      const a = await call(sb, `${SA}?api-version=2.0&StartDate=${shifted(start)}&EndDate=${shifted(end)}`);
      const b = await call(sb, v2(SA, { StartDate: start.toISOString(), EndDate: end.toISOString() }));
      expect(a.status).toBe(200);
      expect(a.json().Data.length).toBeGreaterThan(0);
      expect(a.text).toBe(b.text);
    });
  });

  describe('paging ("Paged result envelope")', () => {
    it('defaults to Offset 0 and Limit 200 and carries exactly HasMoreResults, Offset, ResultCount, Data', async () => {
      const w = window(sb, 60);
      const all = await truth(sb, 'shiftAssignments', w);
      expect(all.length).toBeGreaterThan(200);
      const page = (await call(sb, v2(SA, w))).json();
      expect(Object.keys(page).sort()).toEqual(['Data', 'HasMoreResults', 'Offset', 'ResultCount']);
      expect(page).toMatchObject({ HasMoreResults: true, Offset: 0, ResultCount: 200 });
      expect(page.Data).toHaveLength(200);
    });

    it('echoes the Offset sent, and walking the pages yields every record once; the last page says HasMoreResults false', async () => {
      const w = window(sb, 60);
      const expected = (await truth(sb, 'shiftAssignments', w)).map((r) => r.ShiftAssignmentId);
      const seen: number[] = [];
      for (let offset = 0; ; offset += 37) {
        const page = (await call(sb, v2(SA, { ...w, Offset: offset, Limit: 37 }))).json();
        expect(page.Offset).toBe(offset);
        expect(page.ResultCount).toBe(page.Data.length);
        seen.push(...page.Data.map((r: { ShiftAssignmentId: number }) => r.ShiftAssignmentId));
        if (!page.HasMoreResults) break;
      }
      expect(seen).toHaveLength(expected.length);
      expect(new Set(seen)).toEqual(new Set(expected));
    });

    it('answers an Offset past the end with an empty last page', async () => {
      const page = (await call(sb, v2(SA, { ...window(sb), Offset: 1_000_000 }))).json();
      expect(page).toEqual({ HasMoreResults: false, Offset: 1_000_000, ResultCount: 0, Data: [] });
    });

    it('returns plain arrays, without envelope, where the spec says so (individual list, schedules)', async () => {
      for (const path of ['/Individual/GetList', '/Schedule/GetList', '/RunLogForm/GetList']) {
        const res = await call(sb, v2(path));
        expect(res.status, path).toBe(200);
        expect(Array.isArray(res.json()), path).toBe(true);
      }
    });
  });

  describe('versions ("Representations without that parameter ... differ from the v2.0 ones")', () => {
    it('answers the individual endpoints without api-version in the earlier representation', async () => {
      const record = (await truth(sb, 'individuals'))[0];
      const stored = sb.data.read('individualByServiceId', { serviceId: record.ServiceId }, { offset: 0, limit: 1 });
      if (!stored.ok) throw new Error('individual not found');
      const earlier = JSON.parse(
        JSON.stringify(renameKeys(sb.data.earlier('individual', stored.value.items[0]!), individualAliases)),
      );
      const res = await call(sb, `/Individual/GetByServiceId?serviceId=${record.ServiceId}`);
      expect(res.status).toBe(200);
      expect(res.json()).toEqual(earlier);
      const current = (await call(sb, v2('/Individual/GetByServiceId', { serviceId: record.ServiceId }))).json();
      expect(current).not.toEqual(res.json());
      expect(current.ServiceId).toBe(record.ServiceId);
    });

    it('answers the certification list without api-version as a plain array ("the earlier representation of the individual certification list")', async () => {
      const res = await call(sb, '/IndividualCertification/GetIndividualCertificationList');
      expect(res.status).toBe(200);
      const list = res.json();
      expect(Array.isArray(list)).toBe(true);
      expect(list.length).toBe((await truth(sb, 'individualCertifications', { IncludeDeleted: false })).length);
      expect(Object.keys(list[0])).not.toContain('IsDeleted');
    });

    it('refuses a version other than 2.0 with 400 naming api-version', async () => {
      const res = await call(sb, '/Individual/GetList?api-version=3.0');
      expect(res.status).toBe(400);
      expect(res.json().error_message).toContain('api-version');
    });
  });

  describe('formats ("`application/json` (default, also selected by suffix `.json`) and `text/xml` (suffix `.xml`)")', () => {
    it('answers JSON by default, for `.json`, `*/*` and application/json', async () => {
      const base = await call(sb, v2(SA, window(sb)));
      expect(base.headers['content-type']).toMatch(/^application\/json/);
      for (const [path, accept] of [
        [v2(`${SA}.json`, window(sb)), undefined],
        [v2(SA, window(sb)), '*/*'],
        [v2(SA, window(sb)), 'application/json'],
      ] as const) {
        const res = await call(sb, path, accept ? { accept } : {});
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.text).toBe(base.text);
      }
    });

    it('answers well-formed XML for `.xml` and Accept text/xml, carrying the same data as JSON', async () => {
      const w = { ...window(sb), Limit: 50 };
      const json = (await call(sb, v2(SA, w))).json();
      for (const res of [await call(sb, v2(`${SA}.xml`, w)), await call(sb, v2(SA, w), { accept: 'text/xml' })]) {
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/xml/);
        expect(xmlValue(parseXml(res.text))).toEqual(asXmlReads(json));
      }
      const id = (await truth(sb, 'individuals'))[0].ServiceId;
      const one = (await call(sb, v2('/Individual/GetByServiceId', { serviceId: id }))).json();
      const xml = await call(sb, v2('/Individual/GetByServiceId.xml', { serviceId: id }));
      expect(xmlValue(parseXml(xml.text))).toEqual(asXmlReads(one));
    });

    it('"An Accept header asking for an unknown format gives 406 `not_acceptable`"', async () => {
      const res = await call(sb, v2(SA, window(sb)), { accept: 'application/msgpack' });
      expect(res.status).toBe(406);
      expect(res.json()).toMatchObject({ error: 'not_acceptable' });
    });

    it('"Error bodies use the requested format"', async () => {
      const res = await call(sb, v2('/Nothing/Here.xml'));
      expect(res.status).toBe(404);
      expect(xmlValue(parseXml(res.text))).toEqual({ error: 'not_found', error_message: expect.any(String) });
    });
  });
});

describe('authentication ("Every request carries the header `Authorization-Token`")', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      size: 'tiny',
      rateLimit: null,
      keys: [
        { key: 'all-key', scopes: ['individuals', 'certifications'] },
        { key: 'people-key', scopes: ['individuals'] },
        { key: 'creds-key', scopes: ['certifications'] },
      ],
    });
  });
  afterAll(() => sb.close());

  it('"A request with a key that is missing or not valid ... is answered with 401 `unauthorized`"', async () => {
    for (const key of [null, 'not-a-key', '']) {
      const res = await call(sb, v2('/Individual/GetList'), { key });
      expect(res.status).toBe(401);
      expect(res.json()).toEqual({ error: 'unauthorized', error_message: expect.any(String) });
    }
    expect((await call(sb, v2('/Individual/GetList'), { key: 'all-key' })).status).toBe(200);
  });

  it('"A missing scope gives 403 `insufficient_scope`", for every endpoint the catalog scopes', async () => {
    const scoped = Object.values(endpoints as Record<string, Endpoint>).filter((e) => e.scope);
    expect(scoped.length).toBeGreaterThan(5);
    for (const e of scoped) {
      const other = e.scope === 'individuals' ? 'creds-key' : 'people-key';
      const res = await call(sb, v2(e.path), {
        key: other,
        method: e.method,
        ...(e.method === 'POST' ? { body: {} } : {}),
      });
      expect(res.status, `${e.name} with ${other}`).toBe(403);
      expect(res.json().error).toBe('insufficient_scope');
    }
    expect((await call(sb, v2('/Individual/GetList'), { key: 'people-key' })).status).toBe(200);
    expect(
      (await call(sb, v2('/IndividualCertification/GetIndividualCertificationPendingList'), { key: 'creds-key' }))
        .status,
    ).toBe(200);
    // Endpoints the catalog leaves unscoped answer any valid key.
    expect((await call(sb, v2('/Schedule/GetList'), { key: 'creds-key' })).status).toBe(200);
  });
});

describe('rate limit ("100 requests per 1-minute interval; exceeding gives 429; resets after 1 minute")', () => {
  it('allows 100 per key per minute by default, then 429 `too_many_requests` with the rate-limit headers', async () => {
    const sb = await startSandbox({ size: 'tiny' });
    const agent = new Agent({ connections: 20 });
    try {
      const before = Date.now() / 1000;
      const results = await Promise.all(
        Array.from({ length: 100 }, () =>
          request(`${sb.url}/Schedule/GetList?api-version=2.0`, {
            dispatcher: agent,
            headers: { 'Authorization-Token': sb.apiKey },
          }).then(async (r) => {
            await r.body.text();
            return r;
          }),
        ),
      );
      expect(results.map((r) => r.statusCode)).toEqual(Array(100).fill(200));
      const remaining = results.map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((a, b) => a - b);
      expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
      const res = await call(sb, v2('/Schedule/GetList'));
      expect(res.status).toBe(429);
      expect(res.json()).toEqual({ error: 'too_many_requests', error_message: expect.any(String) });
      expect(res.headers['x-ratelimit-limit']).toBe('100');
      expect(res.headers['x-ratelimit-remaining']).toBe('0');
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(Math.floor(before) + 60);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61);
      expect(sb.stats().byKey[sb.apiKey]).toEqual({ requests: 101, rateLimited: 1 });
    } finally {
      await agent.close();
      await sb.close();
    }
  });

  it('runs compressed periods: fractional X-RateLimit-Reset, a new period after it, 429s not counted', async () => {
    const sb = await startSandbox({ size: 'tiny', rateLimit: { limit: 5, periodMs: 700 } });
    try {
      const first = await call(sb, v2('/Schedule/GetList'));
      const reset = Number(first.headers['x-ratelimit-reset']);
      expect(first.headers['x-ratelimit-remaining']).toBe('4');
      expect(reset * 1000).toBeGreaterThan(Date.now() + 500);
      expect(reset * 1000).toBeLessThanOrEqual(Date.now() + 700);
      for (let i = 0; i < 4; i++) expect((await call(sb, v2('/Schedule/GetList'))).status).toBe(200);
      for (let i = 0; i < 10; i++) {
        const refused = await call(sb, v2('/Schedule/GetList'));
        expect(refused.status).toBe(429);
        expect(Number(refused.headers['x-ratelimit-reset'])).toBe(reset);
      }
      await new Promise((r) => setTimeout(r, reset * 1000 - Date.now() + 20));
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await call(sb, v2('/Schedule/GetList'))).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      expect(sb.stats()).toMatchObject({ requests: 21, rateLimited: 11 });
    } finally {
      await sb.close();
    }
  });

  it('carries X-RateLimit-Limit, -Remaining and -Reset on every response, errors included', async () => {
    const sb = await startSandbox({ size: 'tiny', rateLimit: { limit: 50, periodMs: 60_000 } });
    try {
      const responses = [
        await call(sb, v2('/Schedule/GetList')),
        await call(sb, v2('/No/Such')),
        await call(sb, v2(SA)),
        await call(sb, v2('/Schedule/GetList'), { accept: 'application/msgpack' }),
        await call(sb, v2('/Schedule/GetList'), { key: 'wrong' }),
      ];
      expect(responses.map((r) => r.status)).toEqual([200, 404, 400, 406, 401]);
      for (const r of responses) {
        expect(r.headers['x-ratelimit-limit']).toBe('50');
        expect(r.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
        expect(r.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
      }
      expect(responses.slice(0, 4).map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['49', '48', '47', '46']);
    } finally {
      await sb.close();
    }
  });

  it('keeps a separate budget per API key', async () => {
    const sb = await startSandbox({
      size: 'tiny',
      rateLimit: { limit: 2, periodMs: 60_000 },
      keys: [
        { key: 'north', scopes: ['individuals'] },
        { key: 'south', scopes: ['individuals'] },
      ],
    });
    try {
      const get = (key: string) => call(sb, v2('/Schedule/GetList'), { key }).then((r) => r.status);
      expect([await get('north'), await get('north'), await get('north')]).toEqual([200, 200, 429]);
      expect([await get('south'), await get('south'), await get('south')]).toEqual([200, 200, 429]);
      expect(sb.stats().byKey).toEqual({
        north: { requests: 3, rateLimited: 1 },
        south: { requests: 3, rateLimited: 1 },
      });
    } finally {
      await sb.close();
    }
  });
});
