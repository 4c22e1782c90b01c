import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFaults } from '../../src/sandbox/faults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { call, v2 } from './http-helpers.ts';

const PATH = v2('/Schedule/GetList');

async function statuses(sb: RunningSandbox, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(sb, PATH)).status);
  return out;
}

describe('faults on demand', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 21, rateLimit: { limit: 1000, periodMs: 60_000 } });
  });
  afterAll(() => sb.close());

  it('serves without faults by default', async () => {
    expect(await statuses(sb, 30)).toEqual(Array(30).fill(200));
  });

  it('answers 500 `internal_server_error` when asked', async () => {
    sb.setFaults({ error500: 1 });
    const res = await call(sb, PATH);
    expect(res.status).toBe(500);
    expect(res.json()).toEqual({ error: 'internal_server_error', error_message: expect.any(String) });
    sb.setFaults({});
    expect((await call(sb, PATH)).status).toBe(200);
  });

  it('resets the connection', async () => {
    sb.setFaults({ reset: 1 });
    await expect(call(sb, PATH)).rejects.toThrow();
    sb.setFaults({});
  });

  it('truncates a body: fewer bytes than Content-Length, then the connection closes', async () => {
    sb.setFaults({ truncate: 1 });
    const res = await request(sb.url + PATH, { headers: { 'Authorization-Token': sb.apiKey } });
    expect(res.statusCode).toBe(200);
    await expect(res.body.text()).rejects.toThrow();
    sb.setFaults({});
  });

  it('slows responses down', async () => {
    sb.setFaults({ slow: 1, slowMs: 300 });
    const started = Date.now();
    expect((await call(sb, PATH)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    sb.setFaults({});
  });

  it('blows a 429 storm regardless of budget for its period, then serves again; storm 429s cost no budget', async () => {
    const before = sb.stats().byKey[sb.apiKey]!;
    sb.setFaults({ storm429: { everyMs: 60_000, forMs: 400 } });
    const res = await call(sb, PATH);
    expect(res.status).toBe(429);
    expect(res.json()).toMatchObject({ error: 'too_many_requests' });
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    // With budget left, the reset says when the storm ends (rounded up to a whole second), not a period (60 s) later.
    const resetMs = Number(res.headers['x-ratelimit-reset']) * 1000;
    expect(resetMs - Date.now()).toBeLessThanOrEqual(2000);
    await new Promise((r) => setTimeout(r, 450));
    const after = await call(sb, PATH);
    expect(after.status).toBe(200);
    const stats = sb.stats().byKey[sb.apiKey]!;
    expect(stats.rateLimited - before.rateLimited).toBe(1);
    sb.setFaults({});
  });

  it('is deterministic for a seed: the same seed meets the same faults', async () => {
    const run = async (seed: number) => {
      const s = await startSandbox({ size: 'tiny', seed, rateLimit: null, faults: { error500: 0.5 } });
      try {
        return await statuses(s, 40);
      } finally {
        await s.close();
      }
    };
    const [a, b, c] = [await run(5), await run(5), await run(6)];
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(a.filter((s) => s === 500).length).toBeGreaterThan(5);
    expect(a.filter((s) => s === 200).length).toBeGreaterThan(5);
  });

  it('takes faults at run time through POST /_sandbox/faults, and refuses a bad spec', async () => {
    const set = await call(sb, '/_sandbox/faults', { key: null, body: { error500: 1 } });
    expect(set.status).toBe(200);
    expect((await call(sb, PATH)).status).toBe(500);
    const bad = await call(sb, '/_sandbox/faults', { key: null, body: { error500: 2 } });
    expect(bad.status).toBe(400);
    await call(sb, '/_sandbox/faults', { key: null, body: {} });
    expect((await call(sb, PATH)).status).toBe(200);
  });

  it('reads the command-line syntax 500=P,reset=P,lost=P,slow=P:MS,truncate=P,storm=EVERY:FOR', () => {
    expect(parseFaults('500=0.1,reset=0.05,lost=0.02,slow=0.1:2000,truncate=0.05,storm=10000:2000')).toEqual({
      error500: 0.1,
      reset: 0.05,
      lost: 0.02,
      slow: 0.1,
      slowMs: 2000,
      truncate: 0.05,
      storm429: { everyMs: 10_000, forMs: 2000 },
    });
    expect(parseFaults('lost=0.1,reset=0.05,500=0.05,304=0.02,only=writes')).toEqual({
      lost: 0.1,
      reset: 0.05,
      error500: 0.05,
      notModified: 0.02,
      only: 'writes',
    });
    expect(() => parseFaults('only=posts')).toThrow(/only=reads or only=writes/);
    expect(() => parseFaults('explode=1')).toThrow(/explode/);
    expect(() => parseFaults('500=1.5')).toThrow(/error500/);
    expect(() => parseFaults('storm=100:200')).toThrow(/forMs/);
  });
});

describe('latency and admin routes', () => {
  it('adds --latency-ms to every API response', async () => {
    const sb = await startSandbox({ size: 'tiny', rateLimit: null, latencyMs: 150 });
    try {
      for (const key of [sb.apiKey, 'wrong']) {
        const started = Date.now();
        await call(sb, PATH, { key });
        expect(Date.now() - started).toBeGreaterThanOrEqual(145);
      }
    } finally {
      await sb.close();
    }
  });

  it('serves now, info, stats, truth and advance under /_sandbox/ without a key or rate limit', async () => {
    const sb = await startSandbox({ size: 'tiny', rateLimit: { limit: 1, periodMs: 60_000 } });
    try {
      const now = (await call(sb, '/_sandbox/now', { key: null })).json().now;
      expect(now).toBe(sb.data.now().toISOString());
      const advanced = await call(sb, '/_sandbox/advance?hours=6', { key: null, method: 'POST' });
      expect(advanced.status).toBe(200);
      expect(advanced.json()).toMatchObject({ hours: 6, now: expect.any(String), counts: expect.any(Object) });
      expect(Date.parse((await call(sb, '/_sandbox/now', { key: null })).json().now) - Date.parse(now)).toBe(
        6 * 3_600_000,
      );
      expect((await call(sb, '/_sandbox/truth/individuals', { key: null })).json().length).toBe(
        sb.data.truth('individuals').length,
      );
      expect((await call(sb, '/_sandbox/truth/nothing', { key: null })).status).toBe(404);
      expect((await call(sb, '/_sandbox/advance?hours=-1', { key: null, method: 'POST' })).status).toBe(400);
      const info = (await call(sb, '/_sandbox/info', { key: null })).json();
      expect(info).toMatchObject({ companyId: sb.data.companyId(), rateLimit: '1/60s' });
      expect(sb.stats()).toMatchObject({
        requests: 0,
        rateLimited: 0,
        byKey: { [sb.apiKey]: { requests: 0, rateLimited: 0 } },
      });
      await call(sb, PATH);
      await call(sb, PATH);
      expect((await call(sb, '/_sandbox/stats', { key: null })).json()).toEqual({
        requests: 2,
        rateLimited: 1,
        byKey: { [sb.apiKey]: { requests: 2, rateLimited: 1 } },
        // The second was refused by the budget before it reached an endpoint.
        byEndpoint: { schedules: 1 },
        faults: { error500: 0, reset: 0, lost: 0, truncate: 0, notModified: 0, slow: 0 },
        writes: {
          applied: {
            individualInsert: 0,
            individualUpdate: 0,
            certificationInsert: 0,
            certificationUpdate: 0,
            validateSubmission: 0,
          },
          duplicateRequestIds: 0,
        },
      });
    } finally {
      await sb.close();
    }
  });
});
