import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync, waitFor } from '../support/processes.ts';
import { sample, startTestApp, total, type TestApp } from './helpers.ts';

let sandbox: RunningSandbox;
let t: TestApp;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 3,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    latencyMs: 20,
  });
  t = await startTestApp(sandbox);
});

afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('/metrics', () => {
  it('during and after a sync: requests, rows, budget and freshness with the values the sync produced', async () => {
    const env = await t.app.environment();
    const ctx = env.contexts[0]!;
    const scrapes: string[] = [];
    const started = Date.now();
    let done = false;
    const sync = runStreams(ctx, selectStreams(['individuals', 'individual-certifications', 'departments'])).finally(
      () => (done = true),
    );
    while (!done) {
      const res = await t.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      scrapes.push(await res.text());
      await new Promise((r) => setTimeout(r, 50));
    }
    const summary = await sync;
    expect(summary.failed).toBe(0);
    // Scraped while the sync was running, some requests already counted and not all yet.
    expect(
      scrapes.some(
        (s) => total(s, 'wfsync_requests_total') > 0 && total(s, 'wfsync_requests_total') < summary.requests,
      ),
    ).toBe(true);

    const text = await (await t.get('/metrics')).text();
    // The streams' requests, plus the one that reads the service's clock (locales) when a run starts.
    const clock = sample(text, 'wfsync_requests_total', { endpoint: 'locales', status_class: '2xx' });
    expect(clock).toBe(1);
    const attempts = summary.requests + clock!;
    expect(total(text, 'wfsync_requests_total')).toBe(attempts);
    expect(total(text, 'wfsync_requests_total', { status_class: '2xx' })).toBe(attempts);
    expect(total(text, 'wfsync_request_duration_seconds_count')).toBe(attempts);
    for (const s of summary.streams) {
      expect(sample(text, 'wfsync_rows_written_total', { stream: s.stream }), s.stream).toBe(s.rows);
      expect(sample(text, 'wfsync_rejects_total', { stream: s.stream }), s.stream).toBe(s.rejects);
      expect(sample(text, 'wfsync_stream_runs_total', { stream: s.stream, outcome: 'ok' }), s.stream).toBe(1);
      const at = sample(text, 'wfsync_stream_last_success_timestamp_seconds', { company: 'north', stream: s.stream })!;
      expect(at * 1000).toBeGreaterThanOrEqual(started - 1000);
      expect(at * 1000).toBeLessThanOrEqual(Date.now());
    }
    // The sandbox states 100 per period; what this key used is what the service said last.
    expect(sample(text, 'wfsync_budget_limit_requests', { company: 'north' })).toBe(100);
    const used = sample(text, 'wfsync_budget_used_requests', { company: 'north' })!;
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThanOrEqual(100);
    expect(total(text, 'wfsync_limiter_wait_seconds_count')).toBe(attempts);
    expect(total(text, 'wfsync_rate_limited_total')).toBe(0);
    // Node's process metrics, under the one prefix; and nothing outside it.
    expect(text).toMatch(/^wfsync_process_resident_memory_bytes /m);
    const names = new Set(
      text
        .split('\n')
        .filter((l) => l && !l.startsWith('#'))
        .map((l) => /^[^{\s]+/.exec(l)![0]),
    );
    for (const n of names) expect(n).toMatch(/^wfsync_/);
    // No push here yet: the outbox is empty.
    expect(sample(text, 'wfsync_push_in_doubt_changes')).toBe(0);
  });

  it('the status JSON and the live key figures come from the same events', async () => {
    const status = (await (await t.get('/status')).json()) as {
      keys: { company: string; requests: number; limit: number }[];
      streams: { stream: string; freshness: string }[];
    };
    const key = status.keys.find((k) => k.company === 'north')!;
    const metrics = await (await t.get('/metrics')).text();
    expect(key.requests).toBeGreaterThan(0);
    expect(key.requests).toBe(total(metrics, 'wfsync_requests_total'));
    expect(key.limit).toBe(100);
    expect(status.streams.find((s) => s.stream === 'individuals')!.freshness).toBe('fresh');
  });
});

describe('a worker process', () => {
  it('serves its own /metrics on WFS_METRICS_PORT, counting the jobs it runs', async () => {
    const redisUrl = `${inject('redisUrl')}/6`;
    const worker = spawnWfsync(['worker'], {
      WFS_BASE_URL: sandbox.url,
      WFS_API_KEY: sandbox.apiKey,
      DATABASE_URL: await freshDatabase(),
      REDIS_URL: redisUrl,
      WFS_RATE_LIMIT: '100/1s',
      WFS_METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      const url = await waitFor(
        () => `the worker to start; output:\n${worker.output().slice(-2000)}`,
        async () => /"metrics":"(http:[^"]+)"/.exec(worker.output())?.[1],
        60_000,
      );
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^wfsync_process_cpu_seconds_total /m);
      expect(text).toMatch(/^wfsync_queue_jobs\{queue="sync",state="waiting"\} \d+/m);
      const health = await fetch(url.replace(/\/metrics$/, '/ready'));
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({
        ready: true,
        checks: { postgres: { ok: true }, migrations: { ok: true }, redis: { ok: true } },
      });
    } finally {
      worker.proc.kill('SIGTERM');
      await worker.exited();
    }
  });
});
