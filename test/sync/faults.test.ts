import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams, type SyncSummary } from '../../src/sync/runner.ts';
import { divergence, summarizeDivergence } from '../support/convergence.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * A full sync through a service that answers 500, resets connections and cuts bodies short (each about one
 * request in ten) converges on the service all the same, and its counters say what a clean run says.
 */

// Faults are the subject here, not pacing: the sandbox enforces no rate limit, so every retry is a fault's.
const rateLimit = null;
const SEED = 21;

interface RetryLine {
  msg: string;
  kind?: string;
  status?: number;
  err?: string;
}

let faulty: RunningSandbox;
let clean: RunningSandbox;
let faultySync: TestSync;
let cleanSync: TestSync;
const retries: RetryLine[] = [];
let withFaults: SyncSummary;
let reference: SyncSummary;

beforeAll(async () => {
  [faulty, clean] = await Promise.all([
    startSandbox({
      port: 0,
      seed: SEED,
      size: 'tiny',
      rateLimit,
      faults: { error500: 0.1, reset: 0.1, truncate: 0.1 },
    }),
    startSandbox({ port: 0, seed: SEED, size: 'tiny', rateLimit }),
  ]);
  const lines = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) retries.push(JSON.parse(line) as RetryLine);
      done();
    },
  });
  // Enough retries that ten faults in a row on one request stay out of the picture; short waits between them.
  const client = { maxRetries: 8, backoff: { baseMs: 5, capMs: 100 } };
  faultySync = await openTestSync(faulty, { client, log: pino({ level: 'debug' }, lines) });
  cleanSync = await openTestSync(clean, { client });
});

afterAll(async () => {
  await faultySync?.close();
  await cleanSync?.close();
  await faulty?.close();
  await clean?.close();
});

describe('a full sync through 500s, resets and truncated bodies', () => {
  it('completes every stream and converges on the service, row for row', async () => {
    withFaults = await runStreams(faultySync.ctx, selectStreams());
    expect(withFaults.streams.filter((s) => s.outcome !== 'ok').map((s) => `${s.stream}: ${s.error}`)).toEqual([]);
    expect(withFaults.rejects).toBe(0);
    expect(summarizeDivergence(await divergence(faultySync.warehouse, faulty.data, 'acme'))).toEqual({});
  });

  it('met the faults on the way, and retried them', () => {
    const retried = retries.filter((l) => l.msg === 'retrying request');
    expect(retried.length).toBe(faultySync.client.stats().retries);
    expect(retried.some((l) => l.kind === 'server' && l.status === 500)).toBe(true);
    // A reset connection and a body cut short both reach the client as the socket closing early.
    expect(retried.some((l) => l.kind === 'network')).toBe(true);
    expect(new Set(retried.map((l) => l.kind))).toEqual(new Set(['server', 'network']));
  });

  it('counts what a clean run of the same service counts: rows per stream; every attempt, retries included', async () => {
    reference = await runStreams(cleanSync.ctx, selectStreams());
    expect(reference.failed).toBe(0);
    const counts = (s: SyncSummary) =>
      Object.fromEntries(s.streams.map((o) => [o.stream, { rows: o.rows, rejects: o.rejects }]));
    expect(counts(withFaults)).toEqual(counts(reference));
    expect(withFaults.rows).toBeGreaterThan(1000);
    // A stream that met faults sent at least what the clean run sent: its pages, and its retries besides.
    for (const o of withFaults.streams)
      expect(o.requests).toBeGreaterThanOrEqual(reference.streams.find((r) => r.stream === o.stream)!.requests);

    // Every HTTP request the client sent is counted by the stream that sent it, retries included, but for the run's
    // clock read (one request, and its retries when it met a fault); and every one reached the service.
    for (const [sync, sandbox, summary] of [
      [faultySync, faulty, withFaults],
      [cleanSync, clean, reference],
    ] as const) {
      const stats = sync.client.stats();
      expect(stats.requests - summary.requests).toBeGreaterThanOrEqual(1);
      expect(stats.requests - summary.requests).toBeLessThanOrEqual(1 + 5);
      expect(sandbox.stats().requests).toBe(stats.requests);
    }
    // About three requests in ten meet a fault: far more retries than a clean run, and far fewer than requests.
    const stats = faultySync.client.stats();
    expect(stats.retries).toBeGreaterThan(withFaults.requests / 10);
    expect(stats.retries).toBeLessThan(withFaults.requests);
    expect(cleanSync.client.stats().retries).toBeLessThan(stats.retries / 5);

    const runs = await faultySync.warehouse.sql<{ stream: string; outcome: string; requests: number; rows: number }[]>`
      select stream, outcome, requests, rows from ${faultySync.warehouse.sql(faultySync.warehouse.schema)}.sync_runs where company_key = 'acme'`;
    expect(Object.fromEntries(runs.map((r) => [r.stream, [r.outcome, r.requests, r.rows]]))).toEqual(
      Object.fromEntries(withFaults.streams.map((s) => [s.stream, ['ok', s.requests, s.rows]])),
    );
  });

  it('a day of changes later, an incremental sync through the same faults converges again', async () => {
    faulty.data.advance(24);
    expect(
      Object.keys(summarizeDivergence(await divergence(faultySync.warehouse, faulty.data, 'acme'))).length,
    ).toBeGreaterThan(3);
    const before = faultySync.client.stats().retries;
    const incremental = await runStreams(faultySync.ctx, selectStreams());
    expect(incremental.streams.filter((s) => s.outcome !== 'ok').map((s) => `${s.stream}: ${s.error}`)).toEqual([]);
    expect(faultySync.client.stats().retries).toBeGreaterThan(before);
    expect(summarizeDivergence(await divergence(faultySync.warehouse, faulty.data, 'acme'))).toEqual({});
  });
});
