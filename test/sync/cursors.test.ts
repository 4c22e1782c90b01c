import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import {
  ChangeCursor,
  CURSOR_VERSION,
  MIGRATIONS,
  readStoredCursor,
  SinceCursor,
  SnapshotCursor,
  StatusCursor,
  WindowCursor,
} from '../../src/sync/cursors.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { readCheckpoint, saveCheckpoint } from '../../src/warehouse/state.ts';
import { capturingLogger } from '../support/logs.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

const t = (day: number) => `2026-03-${String(day).padStart(2, '0')}T00:00:00.000Z`;
const pass = (at: Record<string, unknown>) => ({ name: 'backfill', from: t(1), to: t(29), done: [t(1)], at });

describe('a cursor of version 2 (release 0.1.0)', () => {
  it('has its bare offsets migrated to points naming their page', () => {
    const stored = {
      version: 2,
      changesAfter: t(20),
      horizon: t(30),
      rereads: { all: t(19) },
      pass: pass({ [t(8)]: 300, [t(15)]: { offset: 100, next: 200, lastKey: '["7"]' } }),
    };
    const r = readStoredCursor(ChangeCursor, stored);
    expect(r).toEqual({
      ok: true,
      migratedFrom: 2,
      cursor: {
        ...stored,
        version: CURSOR_VERSION,
        pass: pass({ [t(8)]: { offset: 300 }, [t(15)]: { offset: 100, next: 200, lastKey: '["7"]' } }),
      },
    });
  });

  it('of a first read cut short keeps where that read stands', () => {
    const r = readStoredCursor(SinceCursor, { version: 2, since: t(3), rereads: {}, firstReadAt: 500 });
    expect(r.ok && r.cursor).toEqual({
      version: CURSOR_VERSION,
      since: t(3),
      rereads: {},
      firstReadAt: { offset: 500 },
    });
  });

  it.each([
    ['windowed', WindowCursor, { until: t(30), backfilledFrom: t(1), rereads: { all: t(28) } }],
    ['status-driven', StatusCursor, { from: t(1), rereads: {} }],
    ['snapshot', SnapshotCursor, { suspects: ['["1"]'], signpost: t(28) }],
    ['updated-since', SinceCursor, { since: t(28), rereads: { all: t(27) }, individualsAfter: t(27) }],
  ])('of a %s stream, with no read in part, keeps every field', (_kind, schema, fields) => {
    const r = readStoredCursor(schema as typeof WindowCursor, { version: 2, ...fields });
    expect(r).toEqual({ ok: true, migratedFrom: 2, cursor: { version: CURSOR_VERSION, ...fields } });
  });
});

describe('a stored cursor', () => {
  it('of the current version is read as it is', () => {
    const stored = { version: CURSOR_VERSION, until: t(30), rereads: {}, pass: pass({ [t(8)]: { offset: 300 } }) };
    expect(readStoredCursor(WindowCursor, stored)).toEqual({ ok: true, cursor: stored });
  });

  it('of every version since the oldest migrated reaches the current one, one step at a time', () => {
    const versions = Object.keys(MIGRATIONS)
      .map(Number)
      .sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: CURSOR_VERSION - versions[0]! }, (_, i) => versions[0]! + i));
    for (const v of versions) expect(MIGRATIONS[v]!({ version: v, rereads: {} }).version).toBe(v + 1);
  });

  it.each([
    ['with no version (the format before versions)', { until: t(30), backfilledFrom: t(1) }, /names no version/],
    [
      'of a newer version',
      { version: CURSOR_VERSION + 1, until: t(30), rereads: {} },
      /version 4, newer than this one \(3\)/,
    ],
    ['of a version older than any release', { version: 1, until: t(30), rereads: {} }, /older than any release stored/],
    ['that is not an object', 'garbage', /names no version/],
    [
      'of this version with fields of another shape',
      { version: CURSOR_VERSION, until: 'yesterday', rereads: {} },
      /until: /,
    ],
  ])('%s cannot be used, and says why', (_name, stored, reason) => {
    const r = readStoredCursor(WindowCursor, stored);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toMatch(reason);
  });

  it('absent is no cursor', () => {
    expect(readStoredCursor(WindowCursor, undefined)).toEqual({ ok: true, cursor: undefined });
    expect(readStoredCursor(WindowCursor, null)).toEqual({ ok: true, cursor: undefined });
  });
});

describe('a stream whose stored cursor cannot be used', () => {
  let sandbox: RunningSandbox;
  let sync: TestSync;
  const captured = capturingLogger();
  const selected = selectStreams(['assignment-changes']);
  let backfillRequests: number;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: null });
    sync = await openTestSync(sandbox, { log: captured.log });
    backfillRequests = (await runStreams(sync.ctx, selected)).streams[0]!.requests;
  });
  afterAll(async () => {
    await sync?.close();
    await sandbox?.close();
  });

  const lastRun = async () => {
    const { sql, schema } = sync.warehouse;
    const [run] = await sql<{ outcome: string; requests: number; details: { cursorsRestarted?: string[] } }[]>`
      select outcome, requests, details from ${sql(schema)}.sync_runs where stream = 'assignment-changes' order by id desc limit 1`;
    return run!;
  };

  it.each([
    ['written before cursors named a version', { until: '2026-01-01T00:00:00Z' }, 'it names no version'],
    ['written by a newer version', { version: 99, until: '2026-01-01T00:00:00Z', rereads: {} }, 'it is of version 99'],
  ])(
    '%s is backfilled again with one warning and a note in its run record, and runs incrementally after',
    async (_name, stored, reason) => {
      await saveCheckpoint(sync.warehouse, 'acme', 'assignment-changes', '-', stored);
      captured.lines.length = 0;

      const summary = await runStreams(sync.ctx, selected);
      expect(summary.failed).toBe(0);
      const warnings = captured.lines.filter((l) => JSON.parse(l).level === 40);
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({
        stream: 'assignment-changes',
        partition: '-',
        msg: expect.stringMatching(/cursor cannot be used/),
      });
      const run = await lastRun();
      expect(run.outcome).toBe('ok');
      expect(run.details.cursorsRestarted).toEqual([expect.stringContaining(reason)]);
      expect(run.requests).toBe(backfillRequests);
      expect(WindowCursor.parse(await readCheckpoint(sync.warehouse, 'acme', 'assignment-changes')).version).toBe(
        CURSOR_VERSION,
      );

      const next = await runStreams(sync.ctx, selected);
      expect(next.failed).toBe(0);
      expect(next.streams[0]!.requests).toBeLessThan(backfillRequests);
      expect((await lastRun()).details.cursorsRestarted).toEqual([]);
    },
  );
});
