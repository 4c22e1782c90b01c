import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import type { OpsServer } from '../../src/ops/server.ts';
import { streams } from '../../src/resources/index.ts';
import { freshDatabase } from '../support/db.ts';

/**
 * The overview at a thousand companies, over a real warehouse and the ops server as `wfsync serve` runs it: the
 * companies and a day of their runs are written in a few statements, as a fleet would have left them.
 */

const N = 1000;
let app: App;
let server: OpsServer;
const get = (path: string) => fetch(`${server.url}${path}`, { redirect: 'manual' });

beforeAll(async () => {
  // co-0001 from the settings, the rest from the companies table, as a serving process lists them.
  const config = loadConfig({
    DATABASE_URL: await freshDatabase(),
    WFS_HTTP_PORT: '0',
    WFS_COMPANIES: JSON.stringify([{ key: 'co-0001', apiKey: 'unused', baseUrl: 'http://127.0.0.1:9' }]),
  });
  app = new App(config, pino({ level: 'silent' }), { live: false, write: () => {}, setLive: () => {} });
  const wh = await app.warehouse();
  const s = wh.sql(wh.schema);
  const names = streams.map((c) => c.name);
  await wh.sql`
    insert into ${s}.companies (company_key, base_url, api_key_sealed)
    select 'co-' || lpad(i::text, 4, '0'), 'http://127.0.0.1:9', 'v1.not-a-real-key' from generate_series(2, ${N}) i`;
  // Every stream of every company ran ok a minute ago; the runs before it, an hour apart, pad the table.
  await wh.sql`
    insert into ${s}.sync_runs (company_key, stream, started_at, finished_at, outcome, requests, rows)
    select 'co-' || lpad(i::text, 4, '0'), st, now() - make_interval(mins => 1 + 60 * k), now() - make_interval(mins => 60 * k), 'ok', 3, 10
    from generate_series(1, ${N}) i, unnest(${names}::text[]) st, generate_series(0, 3) k`;
  // co-0500's individuals fail now; co-0700's shift assignments last succeeded two days ago; co-0900 backfills.
  await wh.sql`
    insert into ${s}.sync_runs (company_key, stream, started_at, finished_at, outcome, error)
    values ('co-0500', 'individuals', now(), now(), 'failed', 'HTTP 403: the key may not read individuals')`;
  await wh.sql`delete from ${s}.sync_runs where company_key = 'co-0700' and stream = 'shift-assignments'`;
  await wh.sql`
    insert into ${s}.sync_runs (company_key, stream, started_at, finished_at, outcome)
    values ('co-0700', 'shift-assignments', now() - interval '2 days', now() - interval '2 days', 'ok')`;
  const progress = {
    basis: 'windows',
    fraction: 0.25,
    pagesDone: 100,
    pagesLeft: 300,
    perSecond: 2,
    at: new Date().toISOString(),
  };
  await wh.sql`
    insert into ${s}.sync_runs (company_key, stream, started_at, details)
    values ('co-0900', 'shift-assignments', now(), ${wh.sql.json({ progress })})`;
  await wh.sql`
    insert into ${s}.sync_rejects (company_key, stream, record_key, reason)
    values ('co-0500', 'individuals', '1', 'Birthdate: expected a date'), ('co-0500', 'individuals', '2', 'Birthdate: expected a date')`;
  server = await app.serve();
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

describe('the overview at a thousand companies', () => {
  it('is one row per company, trouble first, in at most 300 KB', async () => {
    const res = await get('/');
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(html)).toBeLessThanOrEqual(300 * 1024);
    const rows = [...html.matchAll(/<tr data-company="([^"]+)" class="(\w+)">/g)].map((m) => [m[1], m[2]]);
    expect(rows).toHaveLength(N);
    expect(rows[0]).toEqual(['co-0500', 'failing']);
    expect(rows[1]).toEqual(['co-0700', 'stale']);
    expect(rows.slice(2).every(([, state]) => state === 'fresh')).toBe(true);
    expect(html).toMatch(
      /<tr data-company="co-0500" class="failing">.*individuals failed<\/td><td class="n"><a href="\/rejects\?company=co-0500">2<\/a>/,
    );
    // Its progress stored a moment ago: 300 pages left at 2 a second.
    expect(/<tr data-company="co-0900".*/.exec(html)?.[0]).toMatch(
      /^<tr data-company="co-0900" class="fresh">.*<td>25%, 2 min \d\d s left<\/td><td><\/td><\/tr>$/,
    );
    expect(html).not.toContain('<script');
  });

  it('searches and filters by state with a plain GET form', async () => {
    const failing = await (await get('/?state=failing')).text();
    expect([...failing.matchAll(/<tr data-company="([^"]+)"/g)].map((m) => m[1])).toEqual(['co-0500']);
    const running = await (await get('/?state=running')).text();
    expect([...running.matchAll(/<tr data-company="([^"]+)"/g)].map((m) => m[1])).toEqual(['co-0900']);
    const search = await (await get('/?q=co-099')).text();
    expect([...search.matchAll(/<tr data-company="([^"]+)"/g)].map((m) => m[1])).toHaveLength(10);
    expect(search).toContain('<form method="get" action="/" id="filter">');
    const bad = await get('/?state=sideways');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'state: expected one of failing, stale, late, fresh, running' });
  });

  it('/status answers in pages of companies, in key order, with their streams', async () => {
    const seen: string[] = [];
    let cursor: string | null = '';
    for (let pages = 0; cursor !== null; pages++) {
      expect(pages).toBeLessThan(N);
      const res = await get(`/status?limit=400${cursor ? `&cursor=${cursor}` : ''}`);
      const body = (await res.json()) as {
        companies: { company: string }[];
        streams: { company: string }[];
        nextCursor: string | null;
        total: number;
      };
      expect(body.total).toBe(N);
      expect(body.streams).toHaveLength(body.companies.length * streams.length);
      seen.push(...body.companies.map((c) => c.company));
      cursor = body.nextCursor;
    }
    expect(seen).toHaveLength(N);
    expect(seen).toEqual([...seen].sort());
    const one = (await (await get('/status?company=co-0700')).json()) as {
      companies: { company: string; state: string; worstStream: string }[];
    };
    expect(one.companies).toEqual([
      expect.objectContaining({ company: 'co-0700', state: 'stale', worstStream: 'shift-assignments' }),
    ]);
    const stale = (await (await get('/status?state=stale')).json()) as { companies: { company: string }[] };
    expect(stale.companies.map((c) => c.company)).toEqual(['co-0700']);
    expect((await get('/status?cursor=%3Cx%3E')).status).toBe(400);
  });
});
