import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETENTION } from '../../src/config.ts';
import { Observers } from '../../src/observers.ts';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import type { RateLimiter } from '../../src/ratelimit/types.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { parseKeySpec } from '../../src/sandbox/keys.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { CompanyRegistry } from '../../src/sync/company-registry.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { streamByName } from '../../src/resources/index.ts';
import { addCompany, removeCompany, rotateKey, setPaused } from '../../src/warehouse/company-records.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { changeStreamsOff } from '../../src/warehouse/company-streams.ts';
import { freshDatabase } from '../support/db.ts';

/**
 * The registry a running process reads the companies table through: a pause stops a run under way after the page
 * in flight, a rotated key is what the next request sends, an added company appears and a removed one goes, and a
 * stream turned off stops and is read no more.
 */

const sealer = createSealer('registry-test-secret-key');
let sandbox: RunningSandbox;
let wh: Warehouse;
let registry: CompanyRegistry;
const limiters: RateLimiter[] = [];

beforeAll(async () => {
  // Slow answers, so a run is surely under way when the pause comes.
  sandbox = await startSandbox({
    port: 0,
    seed: 2,
    size: 'small',
    rateLimit: null,
    latencyMs: 40,
    keys: ['key-a', 'key-b'].map(parseKeySpec),
  });
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
  await addCompany(wh, sealer, {
    key: 'slow',
    baseUrl: sandbox.url,
    apiKey: 'key-a',
    formIds: sandbox.data.formIds(),
    runTypeIds: sandbox.data.runTypeIds(),
  });
  registry = new CompanyRegistry({
    warehouse: wh,
    sealer,
    observers: new Observers(),
    log: pino({ level: 'silent' }),
    retention: DEFAULT_RETENTION,
    limiterFor: (budget) => {
      const l = createRateLimiter({ rateLimit: budget });
      limiters.push(l);
      return l;
    },
    // Refreshed by the test itself.
    refreshMs: 3_600_000,
  });
  await registry.start();
});

afterAll(async () => {
  await registry?.close();
  await Promise.all(limiters.map((l) => l.close()));
  await wh?.close();
  await sandbox?.close();
});

describe('the company registry', () => {
  it('stops a run under way after the page in flight when its company is paused', async () => {
    const company = registry.get('slow')!;
    expect(company.paused).toBe(false);
    let pages = 0;
    let pagesAtPause = -1;
    const run = runStreams(
      { ...company.ctx, signal: company.stopped, onProgress: () => void pages++ },
      selectStreams(['shift-assignments', 'assignment-changes', 'individuals']),
    );
    const started = Date.now();
    while (pages < 3 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 20));
    expect(pages).toBeGreaterThanOrEqual(3);
    await setPaused(wh, 'slow', true);
    await registry.refresh();
    pagesAtPause = pages;
    const pausedAt = Date.now();
    const summary = await run;
    expect(Date.now() - pausedAt).toBeLessThan(3_000);
    expect(summary.failed).toBe(0);
    expect(summary.interrupted).toBeGreaterThan(0);
    // At most the pages that were in flight (read ahead, a few per stream) were written after the pause.
    expect(pages - pagesAtPause).toBeLessThanOrEqual(12);
    expect(summary.streams.find((s) => s.outcome === 'interrupted')!.error).toMatch(/company slow paused/);
    expect(registry.activeKeys()).toEqual([]);
    expect(registry.get('slow')!.paused).toBe(true);
  });

  it('a resumed company runs again; a rotated key is what the next request sends', async () => {
    await setPaused(wh, 'slow', false);
    await registry.refresh();
    const company = registry.get('slow')!;
    expect(company.stopped.aborted).toBe(false);
    const before = sandbox.stats().byKey;
    const hashBefore = company.ctx.client.limiterKey;
    await rotateKey(wh, sealer, 'slow', 'key-b');
    await registry.refresh();
    expect(registry.get('slow')!.ctx).toBe(company.ctx);
    expect(company.ctx.client.limiterKey).not.toBe(hashBefore);
    await runStreams({ ...company.ctx, signal: company.stopped }, selectStreams(['locales']));
    const after = sandbox.stats().byKey;
    expect(after['key-a']!.requests).toBe(before['key-a']!.requests);
    expect(after['key-b']!.requests).toBeGreaterThan(before['key-b']!.requests);
  });

  it('tells of a company added, and forgets a removed one, stopping its runs', async () => {
    const seen: string[][] = [];
    const off = registry.onAdded((keys) => seen.push(keys));
    await addCompany(wh, sealer, { key: 'late', baseUrl: sandbox.url, apiKey: 'key-a' });
    expect((await registry.resolve('late'))?.ctx.companyKey).toBe('late');
    expect(seen).toEqual([['late']]);
    const late = registry.get('late')!;
    await removeCompany(wh, 'late');
    await registry.refresh();
    expect(registry.get('late')).toBeUndefined();
    expect(late.stopped.aborted).toBe(true);
    off();
  });

  it('stops a run of a stream under way when the company turns it off; the next run sends no request for it', async () => {
    const company = registry.get('slow')!;
    const shiftAssignments = streamByName('shift-assignments')!;
    let shiftPages = 0;
    const run = runStreams(
      {
        ...company.ctx,
        signal: company.stopped,
        onProgress: (p) => void (p.stream === 'shift-assignments' && shiftPages++),
      },
      // Not the changes it depends on: a complete read of them is long here.
      [shiftAssignments, streamByName('individuals')!],
      { fullRefresh: true },
    );
    const started = Date.now();
    while (shiftPages < 2 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 20));
    expect(shiftPages).toBeGreaterThanOrEqual(2);
    await changeStreamsOff(wh, 'slow', () => ['shift-assignments']);
    await registry.refresh();
    const summary = await run;
    const outcome = (stream: string) => summary.streams.find((s) => s.stream === stream)!;
    expect(outcome('shift-assignments')).toMatchObject({
      outcome: 'interrupted',
      error: 'stream shift-assignments of company slow turned off',
    });
    expect(outcome('individuals').outcome).toBe('ok');

    // Not scheduled for a job of it alone; a job of another stream of it still runs.
    expect(registry.keysToRun(['shift-assignments'])).toEqual([]);
    expect(registry.keysToRun(['assignment-changes', 'shift-assignments'])).toEqual(['slow']);
    expect(registry.keysToRun([])).toEqual(['slow']);

    const before = sandbox.stats().byEndpoint;
    const next = await runStreams({ ...company.ctx, signal: company.stopped }, [
      shiftAssignments,
      streamByName('locales')!,
    ]);
    expect(next.streams.map((s) => [s.stream, s.outcome, s.requests])).toEqual([
      ['shift-assignments', 'off', 0],
      ['locales', 'ok', 1],
    ]);
    expect(sandbox.stats().byEndpoint.shiftAssignments).toBe(before.shiftAssignments);
    expect(sandbox.stats().byEndpoint.locales).toBe(before.locales! + 1);

    await changeStreamsOff(wh, 'slow', () => []);
    await registry.refresh();
    expect(registry.keysToRun(['shift-assignments'])).toEqual(['slow']);
  });
});
