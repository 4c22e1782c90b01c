import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { finishRun, openRun } from '../../src/warehouse/runs.ts';
import type { SyncRunOutcome } from '../../src/warehouse/tables/bookkeeping.ts';
import { listEvents } from '../../src/warehouse/events.ts';
import { recordStart } from '../../src/warehouse/start-events.ts';
import { freshDatabase } from '../support/db.ts';

/** What the sync itself puts on a company's timeline: a stream's change to failing and back, and upgrades at start. */

let wh: Warehouse;

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
});

afterAll(async () => {
  await wh?.close();
});

const run = async (company: string, stream: string, outcome: SyncRunOutcome, error?: string) => {
  const id = await openRun(wh, { companyKey: company, stream });
  await finishRun(wh, { companyKey: company, id }, { outcome, ...(error ? { error } : {}) });
};
const timeline = async (company: string) =>
  (await listEvents(wh, { companyKey: company })).reverse().map((e) => [e.event, e.stream, e.detail]);

describe('a stream starting to fail and recovering', () => {
  it('is recorded once each way, not for every run; an interrupted run says neither', async () => {
    await run('acme', 'individuals', 'ok');
    await run('acme', 'individuals', 'failed', 'HTTP 403: scope');
    await run('acme', 'individuals', 'failed', 'HTTP 403: scope');
    await run('acme', 'individuals', 'interrupted');
    await run('acme', 'individuals', 'failed', 'HTTP 500');
    await run('acme', 'individuals', 'ok');
    await run('acme', 'individuals', 'ok');
    // Another stream failing from its first run on.
    await run('acme', 'departments', 'failed', 'HTTP 404');
    expect(await timeline('acme')).toEqual([
      ['stream_failing', 'individuals', expect.objectContaining({ error: 'HTTP 403: scope' })],
      ['stream_recovered', 'individuals', expect.objectContaining({ runId: expect.any(Number) })],
      ['stream_failing', 'departments', expect.objectContaining({ error: 'HTTP 404' })],
    ]);
    expect(await timeline('beta')).toEqual([]);
  });
});

describe('at start', () => {
  it('records migrations and a version change on each company once, not at every start', async () => {
    const first = await recordStart(wh, ['north', 'south'], '0.4.0');
    expect(first.map((e) => [e.companyKey, e.event])).toEqual([
      ['north', 'migrated'],
      ['south', 'migrated'],
    ]);
    expect(await recordStart(wh, ['north', 'south'], '0.4.0')).toEqual([]);
    const upgraded = await recordStart(wh, ['north'], '0.5.0');
    expect(upgraded).toEqual([
      {
        companyKey: 'north',
        event: 'version_changed',
        detail: expect.objectContaining({ version: '0.5.0', before: '0.4.0' }),
      },
    ]);
    expect((await timeline('north')).map(([e]) => e)).toEqual(['migrated', 'version_changed']);
  });
});
