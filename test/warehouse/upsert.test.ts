import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { markDeletedByKey, markMissingDeleted } from '../../src/warehouse/deletions.ts';
import { listCheckpoints, readCheckpoint } from '../../src/warehouse/state.ts';
import { readRows } from '../support/rows.ts';
import { finishRun, openRun } from '../../src/warehouse/runs.ts';
import { targets } from '../../src/resources/index.ts';
import { FRESH_STREAK } from '../../src/warehouse/fresh-keys.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { waitFor } from '../support/processes.ts';
import { waitingOnLocks } from '../support/db.ts';
import { migratedWarehouse, parsed } from './fixtures.ts';

let wh: Warehouse;
let company = '';
let n = 0;
const t0 = new Date('2024-06-10T00:00:00Z');
const t1 = new Date('2024-06-11T00:00:00Z');

beforeAll(async () => {
  wh = await migratedWarehouse();
});
afterAll(async () => {
  await wh?.close();
});
// Each test writes under a company of its own, so tests share the database without seeing each other.
beforeEach(() => {
  company = `c${++n}`;
});

const assignment = (id: number, o: Record<string, unknown> = {}) =>
  parsed('shiftAssignments', { ShiftAssignmentId: id, ...o });
const credential = (o: Record<string, unknown> = {}) => parsed('individualCertifications', o);

describe('writePage', () => {
  it('a second identical write changes nothing and writes no history', async () => {
    const page = {
      target: targets.individuals,
      companyKey: company,
      items: [parsed('individuals')],
      stream: 'individuals',
    };
    expect(await writePage(wh, { ...page, syncedAt: t0 })).toEqual({
      inserted: 1,
      updated: 0,
      unchanged: 0,
      deleted: 0,
      keys: ['["9001"]'],
    });
    const before = await readRows(wh, 'individuals', company);
    const childrenBefore = await readRows(wh, 'individual_job_titles', company);
    expect(await writePage(wh, { ...page, syncedAt: t1 })).toEqual({
      inserted: 0,
      updated: 0,
      unchanged: 1,
      deleted: 0,
      keys: ['["9001"]'],
    });
    const after = await readRows(wh, 'individuals', company);
    expect(after).toEqual(before);
    expect(await readRows(wh, 'individual_job_titles', company)).toEqual(childrenBefore);
    expect(await readRows(wh, 'individuals_history', company)).toHaveLength(1);
  });

  it('a content change writes a new history version and closes the old one', async () => {
    const page = { target: targets['individual-certifications'], companyKey: company, stream: 'certs' };
    await writePage(wh, { ...page, items: [credential()], syncedAt: t0 });
    const r = await writePage(wh, { ...page, items: [credential({ ExpirationDate: '2027-01-01' })], syncedAt: t1 });
    expect(r).toEqual({ inserted: 0, updated: 1, unchanged: 0, deleted: 0, keys: ['["7001"]'] });
    const history = await readRows(wh, 'individual_certifications_history', company);
    expect(history.map((h) => [h.expiration_date, h.valid_from, h.valid_to])).toEqual([
      ['2025-01-01', t0, t1],
      ['2027-01-01', t1, null],
    ]);
  });

  it('IsDeleted marks the row deleted and ends its history; reappearing clears it', async () => {
    const page = { target: targets['individual-certifications'], companyKey: company, stream: 'certs' };
    await writePage(wh, { ...page, items: [credential()], syncedAt: t0 });
    const r = await writePage(wh, { ...page, items: [credential({ IsDeleted: true })], syncedAt: t1 });
    expect(r.deleted).toBe(1);
    const [row] = await readRows(wh, targets['individual-certifications'], company);
    expect(row!._deleted_at).toEqual(t1);
    const history = await readRows(wh, 'individual_certifications_history', company);
    expect(history.map((h) => h.valid_to)).toEqual([t1]);
    const t2 = new Date('2024-06-12T00:00:00Z');
    await writePage(wh, { ...page, items: [credential()], syncedAt: t2 });
    const [again] = await readRows(wh, targets['individual-certifications'], company);
    expect(again!._deleted_at).toBeNull();
    expect(
      (await readRows(wh, 'individual_certifications_history', company)).map((h) => [h.valid_from, h.valid_to]),
    ).toEqual([
      [t0, t1],
      [t2, null],
    ]);
  });

  it('keeps the last of duplicate keys in one page', async () => {
    const items = [assignment(1, { VehicleName: 'first' }), assignment(2), assignment(1, { VehicleName: 'last' })];
    const r = await writePage(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      items,
      syncedAt: t0,
      stream: 's',
    });
    expect(r.inserted).toBe(2);
    const rows = await readRows(wh, targets['shift-assignments'], company);
    expect(rows.map((x) => [x.shift_assignment_id, x.vehicle_name])).toEqual([
      [1, 'last'],
      [2, 'Medic 1'],
    ]);
  });

  it('writes a page holding more values than a statement may have parameters', async () => {
    // 22 columns × 3,200 rows is beyond Postgres's 65,535 parameters of one statement.
    const items = Array.from({ length: 3200 }, (_, i) => assignment(i + 1));
    const r = await writePage(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      items,
      syncedAt: t0,
      stream: 's',
    });
    expect(r.inserted).toBe(3200);
    expect(await readRows(wh, targets['shift-assignments'], company)).toHaveLength(3200);
  });

  it('writes rows and checkpoint together, or neither', async () => {
    const good = { target: targets['shift-assignments'], companyKey: company, syncedAt: t0, stream: 's' };
    await writePage(wh, { ...good, items: [assignment(1)], checkpoint: { partition: '-', cursor: { until: 'a' } } });
    // A start that is no date fails inside the transaction, after the first rows were sent.
    const bad = [assignment(2), assignment(3, { StartDateTime: '2024-02-30T00:00:00Z' })];
    await expect(
      writePage(wh, { ...good, items: bad, checkpoint: { partition: '-', cursor: { until: 'b' } } }),
    ).rejects.toThrow();
    expect((await readRows(wh, targets['shift-assignments'], company)).map((r) => r.shift_assignment_id)).toEqual([1]);
    expect(await readCheckpoint(wh, company, 's', '-')).toEqual({ until: 'a' });
    expect((await listCheckpoints(wh, company)).map((c) => [c.stream, c.partition, c.cursor])).toEqual([
      ['s', '-', { until: 'a' }],
    ]);
  });

  it('keeps the progress of every page that edits the stored cursor, pages written side by side', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, syncedAt: t0, stream: 's' };
    const pass = { name: 'backfill', from: 'a', to: 'z', done: ['x'] };
    await writePage(wh, { ...page, items: [], checkpoint: { partition: '-', cursor: { version: 2, pass } } });
    const at = (slice: string, value: unknown) => ({ kind: 'put', object: ['pass', 'at'], key: slice, value }) as const;
    const settle = (slice: string) =>
      ({ kind: 'settle', object: ['pass', 'at'], key: slice, list: ['pass', 'done'] }) as const;
    // Ten slices at once, each with a page of rows; each slice settles after two pages, the odd ones stop at one.
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const slice = `s${i}`;
        await writePage(wh, {
          ...page,
          items: [assignment(100 + i)],
          checkpoint: { partition: '-', edit: at(slice, { offset: 0, next: 200, lastKey: `k${i}` }) },
        });
        if (i % 2 === 0)
          await writePage(wh, {
            ...page,
            items: [assignment(200 + i)],
            checkpoint: { partition: '-', edit: settle(slice) },
          });
      }),
    );
    // A slice settled again (a split window, a page written twice) is listed once.
    await writePage(wh, { ...page, items: [], checkpoint: { partition: '-', edit: settle('s0') } });
    const stored = (await readCheckpoint(wh, company, 's', '-')) as {
      pass: { done: string[]; at: Record<string, unknown> };
    };
    expect(stored.pass.done.sort()).toEqual(['s0', 's2', 's4', 's6', 's8', 'x']);
    expect(Object.keys(stored.pass.at).sort()).toEqual(['s1', 's3', 's5', 's7', 's9']);
    expect(stored.pass.at.s3).toEqual({ offset: 0, next: 200, lastKey: 'k3' });
    expect(await readRows(wh, targets['shift-assignments'], company)).toHaveLength(15);
  });

  it('refuses to edit a cursor that is not stored, and writes none of the page', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, syncedAt: t0, stream: 's' };
    const edit = { kind: 'put', object: ['pass', 'at'], key: 's0', value: 0 } as const;
    await expect(
      writePage(wh, { ...page, items: [assignment(1)], checkpoint: { partition: '-', edit } }),
    ).rejects.toThrow(/no stored cursor/);
    expect(await readRows(wh, targets['shift-assignments'], company)).toEqual([]);
  });

  it('keeps text that array literals quote and escape exactly as sent', async () => {
    const names = [
      'a "quoted", {braced} name',
      'back\\slash \\"',
      'NULL',
      'null',
      'Null',
      '',
      ' padded ',
      'tab\there',
      'new\nline',
      'x,y',
      'a}b',
      'plain',
      'Zoë 🚑',
      '\u00a0nbsp',
    ];
    const items = names.map((name, i) => assignment(i + 1, { ShiftName: name, VehicleName: null }));
    await writePage(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      items,
      syncedAt: t0,
      stream: 's',
    });
    const rows = await readRows(wh, targets['shift-assignments'], company);
    expect(rows.map((r) => [r.shift_name, r.vehicle_name])).toEqual(names.map((n) => [n, null]));
  });

  it('keeps the text of a one-record page whose only value is quoted and escaped', async () => {
    const name = '{"only", \\one}';
    await writePage(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      items: [assignment(1, { ShiftName: name })],
      syncedAt: t0,
      stream: 's',
    });
    const rows = await readRows(wh, targets['shift-assignments'], company);
    expect(rows.map((r) => r.shift_name)).toEqual([name]);
  });

  it('lands a page whose new row another writer inserted after the page read it, counted as an update', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, syncedAt: t1, stream: 's' };
    const other = await wh.sql.reserve();
    try {
      await other`begin`;
      await other.unsafe(
        `insert into ${wh.schema}.shift_assignments (company_key, shift_assignment_id, _synced_at, _hash) values ($1, 2, $2, 'other')`,
        [company, t0],
      );
      // The page reads before the other insert commits, so row 2 looks new and its INSERT waits on the other writer.
      const written = writePage(wh, { ...page, items: [assignment(1), assignment(2)] });
      await new Promise((r) => setTimeout(r, 300));
      await other`commit`;
      expect(await written).toEqual({ inserted: 1, updated: 1, unchanged: 0, deleted: 0, keys: ['["1"]', '["2"]'] });
    } finally {
      other.release();
    }
    const rows = await readRows(wh, targets['shift-assignments'], company);
    expect(rows.map((r) => [r.shift_assignment_id, r._hash === 'other'])).toEqual([
      [1, false],
      [2, false],
    ]);
  });

  it('writes a page right when pages of new keys came before it and some of its keys are stored', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, stream: 's' };
    // Enough pages of new keys that the next page is expected to hold new keys only (fresh-keys.ts).
    for (let p = 0; p <= FRESH_STREAK; p++)
      await writePage(wh, { ...page, items: [assignment(2 * p + 1), assignment(2 * p + 2)], syncedAt: t0 });
    const r = await writePage(wh, {
      ...page,
      items: [assignment(2, { VehicleName: 'Medic 9' }), assignment(4), assignment(100)],
      syncedAt: t1,
    });
    expect(r).toEqual({ inserted: 1, updated: 1, unchanged: 1, deleted: 0, keys: ['["2"]', '["4"]', '["100"]'] });
    const rows = await readRows(wh, targets['shift-assignments'], company);
    expect(
      rows
        .filter((x) => [1, 2, 4, 100].includes(x.shift_assignment_id as number))
        .map((x) => [x.shift_assignment_id, x.vehicle_name, (x._synced_at as Date).getTime()]),
    ).toEqual([
      [1, 'Medic 1', t0.getTime()],
      [2, 'Medic 9', t1.getTime()],
      [4, 'Medic 1', t0.getTime()],
      [100, 'Medic 1', t1.getTime()],
    ]);
    expect(rows).toHaveLength(2 * (FRESH_STREAK + 1) + 1);
  });

  it('returns every connection to the pool after failed pages', async () => {
    const bad = [assignment(1, { StartDateTime: '2024-02-30T00:00:00Z' })];
    // More failures than the pool has connections: a connection kept after a failure would stall the next write.
    for (let i = 0; i < 15; i++) {
      await expect(
        writePage(wh, {
          target: targets['shift-assignments'],
          companyKey: company,
          items: bad,
          syncedAt: t0,
          stream: 's',
        }),
      ).rejects.toThrow(/date\/time field value out of range/);
    }
    await writePage(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      items: [assignment(1)],
      syncedAt: t0,
      stream: 's',
    });
    expect(await readRows(wh, targets['shift-assignments'], company)).toHaveLength(1);
  });

  it('records rejects with the page, without SSN', async () => {
    await writePage(wh, {
      target: targets.individuals,
      companyKey: company,
      items: [],
      syncedAt: t0,
      stream: 'individuals',
      rejects: [{ raw: { ServiceId: 'x', SSN: '123456789' }, reason: 'ServiceId: expected number' }],
    });
    const rejects = await readRows(wh, 'sync_rejects', company);
    expect(rejects.map((r) => [r.stream, r.reason, r.raw])).toEqual([
      ['individuals', 'ServiceId: expected number', { ServiceId: 'x' }],
    ]);
  });

  it('replaces child rows of a changed parent', async () => {
    const page = { target: targets.schedules, companyKey: company, stream: 'schedules' };
    await writePage(wh, { ...page, items: [parsed('schedules')], syncedAt: t0 });
    await writePage(wh, {
      ...page,
      items: [parsed('schedules', { Shifts: [{ ShiftId: 23, ShiftName: 'Swing' }] })],
      syncedAt: t1,
    });
    expect((await readRows(wh, 'schedule_shifts', company)).map((s) => [s.shift_id, s.shift_name])).toEqual([
      [23, 'Swing'],
    ]);
  });
});

describe('deletions', () => {
  it('marks rows a complete read did not return, within the read range only', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, stream: 's' };
    const june = (day: number) => `2024-06-${String(day).padStart(2, '0')}T10:00:00+00:00`;
    await writePage(wh, {
      ...page,
      items: [1, 2, 3].map((d) => assignment(d, { StartDateTime: june(d) })),
      syncedAt: t0,
    });
    const { keys } = await writePage(wh, { ...page, items: [assignment(1, { StartDateTime: june(1) })], syncedAt: t1 });
    const seen = new Set(keys);
    const gone = await markMissingDeleted(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      seen,
      range: {
        startColumn: 'start_date_time',
        from: new Date('2024-06-01T00:00:00Z'),
        to: new Date('2024-06-03T00:00:00Z'),
      },
    });
    expect(gone).toBe(1);
    const rows = await readRows(wh, targets['shift-assignments'], company);
    expect(rows.map((r) => [r.shift_assignment_id, r._deleted_at !== null])).toEqual([
      [1, false],
      [2, true],
      [3, false],
    ]);
  });

  it('leaves a row that a write beside the read moved out of the window while it was being marked', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, stream: 's', syncedAt: t0 };
    await writePage(wh, { ...page, items: [assignment(2, { StartDateTime: '2024-06-02T10:00:00+00:00' })] });
    let marking: Promise<number> | undefined;
    // The move (a read of another window writing the row's new start) holds the row until it commits.
    await wh.sql.begin(async (tx) => {
      await tx.unsafe(
        `update "${wh.schema}".shift_assignments set start_date_time = '2024-06-05T10:00:00Z' where company_key = $1`,
        [company],
      );
      marking = markMissingDeleted(wh, {
        target: targets['shift-assignments'],
        companyKey: company,
        seen: new Set(),
        range: {
          startColumn: 'start_date_time',
          from: new Date('2024-06-02T00:00:00Z'),
          to: new Date('2024-06-03T00:00:00Z'),
        },
      });
      await waitFor(
        'the marking to wait for the moved row',
        async () => (await waitingOnLocks(wh.sql, 'update%shift_assignments%')) > 0,
        10_000,
        20,
      );
    });
    expect(await marking).toBe(0);
    expect(
      (await readRows(wh, targets['shift-assignments'], company)).map((r) => [r.shift_assignment_id, r._deleted_at]),
    ).toEqual([[2, null]]);
  });

  it('marks by partition and closes history and child rows', async () => {
    const page = { target: targets.individuals, companyKey: company, stream: 'individuals' };
    await writePage(wh, { ...page, items: [parsed('individuals')], syncedAt: t0 });
    expect(await markMissingDeleted(wh, { target: targets.individuals, companyKey: company, seen: new Set() })).toBe(1);
    expect((await readRows(wh, 'individual_job_titles', company)).every((r) => r._deleted_at !== null)).toBe(true);
    expect((await readRows(wh, 'individuals_history', company))[0]!.valid_to).not.toBeNull();
    await writePage(wh, {
      target: targets['form-responses'],
      companyKey: company,
      stream: 'f',
      items: [parsed('formResponses')],
      extras: { FormId: 1 },
      syncedAt: t0,
    });
    await writePage(wh, {
      target: targets['form-responses'],
      companyKey: company,
      stream: 'f',
      items: [parsed('formResponses', { ResponseId: 2 })],
      extras: { FormId: 2 },
      syncedAt: t0,
    });
    expect(
      await markMissingDeleted(wh, {
        target: targets['form-responses'],
        companyKey: company,
        seen: new Set(),
        partition: { FormId: 2 },
      }),
    ).toBe(1);
    const responses = await readRows(wh, targets['form-responses'], company);
    expect(responses.map((r) => [r.response_id, r._deleted_at !== null])).toEqual([
      [2, true],
      [801, false],
    ]);
  });

  it('marks rows matching a list of column values', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, stream: 's', syncedAt: t0 };
    await writePage(wh, {
      ...page,
      items: [1, 2, 3].map((id) => assignment(id, { Assignee: { ServiceId: 100 + id } })),
    });
    const gone = await markMissingDeleted(wh, {
      target: targets['shift-assignments'],
      companyKey: company,
      seen: new Set(),
      where: { assignee_service_id: [101, 103] },
    });
    expect(gone).toBe(2);
    expect((await readRows(wh, targets['shift-assignments'], company)).map((r) => r._deleted_at !== null)).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('marks rows by key', async () => {
    const page = { target: targets['shift-assignments'], companyKey: company, stream: 's', syncedAt: t0 };
    await writePage(wh, { ...page, items: [assignment(1), assignment(2)] });
    expect(
      await markDeletedByKey(wh, {
        target: targets['shift-assignments'],
        companyKey: company,
        keys: [{ shift_assignment_id: 2 }, { shift_assignment_id: 99 }],
      }),
    ).toBe(1);
    expect((await readRows(wh, targets['shift-assignments'], company)).map((r) => r._deleted_at !== null)).toEqual([
      false,
      true,
    ]);
  });
});

describe('sync runs', () => {
  it('records start and outcome', async () => {
    const id = await openRun(wh, { companyKey: company, stream: 's' });
    await finishRun(wh, { companyKey: company, id }, {
      outcome: 'ok',
      requests: 3,
      rows: 10,
      rejects: 1,
      durationMs: 5,
    } as never);
    const [run] = await readRows(wh, 'sync_runs', company);
    expect(run).toMatchObject({
      stream: 's',
      outcome: 'ok',
      requests: 3,
      rows: 10,
      rejects: 1,
      error: null,
      details: { durationMs: 5 },
    });
    expect(run!.finished_at).toBeInstanceOf(Date);
  });
});
