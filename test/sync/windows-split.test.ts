import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints } from '../../src/resources/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { divergence } from '../support/convergence.ts';
import { startProxy, type ProxyHooks, type RunningProxy } from '../support/proxy.ts';
import { openTestSync, type TestSync, type TestSyncOptions } from '../support/sync-context.ts';

/**
 * A window the service refuses (400), keeps failing (500) or does not answer in time is halved until the
 * service accepts it; the stream completes and the warehouse equals the service. A proxy in front of the
 * sandbox refuses the long spans.
 */

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const SPAN_PARAMS: Record<string, [string, string]> = {
  [endpoints.shiftAssignments.path]: ['StartDate', 'EndDate'],
  [endpoints.individualCourses.path]: ['startDate', 'endDate'],
};

/** The date span a request asks for, in ms, when it is one of the windowed endpoints under test. */
function spanOf(url: URL): number | undefined {
  const names = SPAN_PARAMS[url.pathname];
  if (!names) return undefined;
  return Date.parse(url.searchParams.get(names[1])!) - Date.parse(url.searchParams.get(names[0])!);
}

/** Longest span each endpoint accepts in these tests. */
const LIMIT_MS: Record<string, number> = {
  [endpoints.shiftAssignments.path]: 2 * DAY_MS,
  [endpoints.individualCourses.path]: 10 * DAY_MS,
};

const tooLong = (url: URL) => {
  const span = spanOf(url);
  return span !== undefined && span > LIMIT_MS[url.pathname]!;
};

let sandbox: RunningSandbox;
let proxy: RunningProxy;
const opened: TestSync[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 11, size: 'tiny', rateLimit: null });
  proxy = await startProxy(sandbox.url);
});

afterAll(async () => {
  for (const t of opened) await t.close();
  await proxy?.close();
  await sandbox?.close();
});

async function syncThroughProxy(hooks: ProxyHooks, streams: string[], client: TestSyncOptions['client'] = {}) {
  proxy.setHooks(hooks);
  proxy.seen.length = 0;
  const t = await openTestSync(sandbox, { baseUrl: proxy.url, client: { maxRetries: 0, ...client } });
  opened.push(t);
  const summary = await runStreams(t.ctx, selectStreams(streams));
  return { t, summary, seen: [...proxy.seen] };
}

/** Requests of an endpoint the proxy did not pass on (refused or given up on), and the longest span passed on. */
function traffic(seen: RunningProxy['seen'], path: string) {
  const mine = seen.filter((s) => s.url.pathname === path);
  const passed = mine.filter((s) => s.outcome === 'forwarded');
  return {
    refused: mine.length - passed.length,
    passed: passed.length,
    longestPassedMs: Math.max(...passed.map((s) => spanOf(s.url)!)),
  };
}

async function expectConverged(t: TestSync, streams: string[]) {
  const d = await divergence(t.warehouse, sandbox.data, 'acme');
  for (const s of streams) {
    expect(d[s]!.expected, s).toBeGreaterThan(0);
    expect({ stream: s, missing: d[s]!.missing.length, extra: d[s]!.extra.length, stale: d[s]!.stale.length }).toEqual({
      stream: s,
      missing: 0,
      extra: 0,
      stale: 0,
    });
  }
}

const okOutcomes = (summary: { streams: { stream: string; outcome: string; error?: string }[] }) =>
  summary.streams.map((s) => ({ stream: s.stream, outcome: s.outcome, error: s.error }));

describe('a window the service will not answer is split until it does', () => {
  it('400 for spans too long: shift assignments and courses are read in halves and converge', async () => {
    const { t, summary, seen } = await syncThroughProxy(
      {
        answer: (url) =>
          tooLong(url)
            ? { status: 400, body: { error: 'invalid_parameters', error_message: 'The date span is too long.' } }
            : undefined,
      },
      ['shift-assignments', 'individual-courses'],
    );
    expect(
      summary.streams.every((s) => s.outcome === 'ok'),
      JSON.stringify(okOutcomes(summary)),
    ).toBe(true);
    for (const path of [endpoints.shiftAssignments.path, endpoints.individualCourses.path]) {
      const x = traffic(seen, path);
      expect(x.refused, path).toBeGreaterThan(0);
      expect(x.passed, path).toBeGreaterThan(x.refused);
      expect(x.longestPassedMs, path).toBeLessThanOrEqual(LIMIT_MS[path]!);
    }
    await expectConverged(t, ['shift-assignments', 'individual-courses', 'assignment-changes']);
  });

  it('500 every time for spans too long (after the retries): the same', async () => {
    const { t, summary, seen } = await syncThroughProxy(
      {
        answer: (url) =>
          tooLong(url)
            ? { status: 500, body: { error: 'internal_server_error', error_message: 'query timed out' } }
            : undefined,
      },
      ['shift-assignments', 'individual-courses'],
      { maxRetries: 1, backoff: { baseMs: 1, capMs: 5 } },
    );
    expect(
      summary.streams.every((s) => s.outcome === 'ok'),
      JSON.stringify(okOutcomes(summary)),
    ).toBe(true);
    for (const path of [endpoints.shiftAssignments.path, endpoints.individualCourses.path]) {
      const x = traffic(seen, path);
      expect(x.refused, path).toBeGreaterThan(0);
      expect(x.longestPassedMs, path).toBeLessThanOrEqual(LIMIT_MS[path]!);
    }
    await expectConverged(t, ['shift-assignments', 'individual-courses']);
  });

  it('no answer within the client timeout for spans too long: courses are read in halves and converge', async () => {
    const { t, summary, seen } = await syncThroughProxy(
      { delayMs: (url) => (url.pathname === endpoints.individualCourses.path && tooLong(url) ? 5_000 : 0) },
      ['individual-courses'],
      { timeoutMs: 500 },
    );
    expect(okOutcomes(summary)).toEqual([{ stream: 'individual-courses', outcome: 'ok', error: undefined }]);
    const x = traffic(seen, endpoints.individualCourses.path);
    expect(x.refused).toBeGreaterThan(0);
    expect(x.longestPassedMs).toBeLessThanOrEqual(LIMIT_MS[endpoints.individualCourses.path]!);
    await expectConverged(t, ['individual-courses']);
  });

  it('a window refused even at the smallest span fails its stream with a clear error; the other streams complete', async () => {
    const { t, summary, seen } = await syncThroughProxy(
      {
        answer: (url) =>
          url.pathname === endpoints.shiftAssignments.path
            ? { status: 400, body: { error: 'invalid_parameters', error_message: 'Nothing today.' } }
            : undefined,
      },
      ['shift-assignments', 'individual-courses', 'departments'],
    );
    const outcome = Object.fromEntries(summary.streams.map((s) => [s.stream, s.outcome]));
    expect(outcome).toEqual({
      departments: 'ok',
      'assignment-changes': 'ok',
      'shift-assignments': 'failed',
      'individual-courses': 'ok',
    });
    // It was split down to the smallest span before giving up.
    const spans = seen.filter((s) => s.url.pathname === endpoints.shiftAssignments.path).map((s) => spanOf(s.url)!);
    expect(Math.min(...spans)).toBeLessThanOrEqual(HOUR_MS);
    expect(seen.some((s) => s.url.pathname === endpoints.shiftAssignments.path && s.outcome === 'forwarded')).toBe(
      false,
    );

    const sql = t.warehouse.sql;
    const [run] = await sql<{ outcome: string; error: string | null }[]>`
      select outcome, error from ${sql(t.warehouse.schema)}.sync_runs where company_key = 'acme' and stream = 'shift-assignments'`;
    expect(run!.outcome).toBe('failed');
    // Says what refused, what the service said, and which window, so an operator can act on it.
    expect(run!.error).toMatch(/shiftAssignments/);
    expect(run!.error).toMatch(/400/);
    expect(run!.error).toMatch(/Nothing today\./);
    expect(run!.error).toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
    expect(summary.streams.find((s) => s.stream === 'shift-assignments')!.error).toBe(run!.error);

    await expectConverged(t, ['departments', 'assignment-changes', 'individual-courses']);
  });
});
