import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { tableInfo } from '../../src/warehouse/catalog.ts';
import { claimStaging, staging } from '../../src/warehouse/staging.ts';
import { readCheckpoint } from '../../src/warehouse/state.ts';
import { readRows } from '../support/rows.ts';
import { targets } from '../../src/resources/index.ts';
import { COPY_MIN_ROWS } from '../../src/warehouse/row-writes.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { migratedWarehouse, parsed } from './fixtures.ts';

let wh: Warehouse;
let n = 0;
let company = '';
const t0 = new Date('2024-06-10T00:00:00Z');
const t1 = new Date('2024-06-11T00:00:00Z');

beforeAll(async () => {
  wh = await migratedWarehouse();
});
afterAll(async () => {
  await wh?.close();
});
beforeEach(() => {
  company = `s${++n}`;
});

/** Enough rows for the COPY path; the same rows in pages below it take the unnest path. */
const MANY = COPY_MIN_ROWS + 200;
const FEW = Math.floor(COPY_MIN_ROWS / 4);

const assignment = (id: number, o: Record<string, unknown> = {}) =>
  parsed('shiftAssignments', { ShiftAssignmentId: id, ...o });

/** Values COPY's text format must escape, in columns and in `_extra` (jsonb). */
const awkward = (id: number) => ({ VehicleName: `Medic\t${id}\n\\N\r\\`, Radio: { Channel: 'a\\b\t"c"' } });

/** The second page: a third unchanged, a third changed, a third new. */
function secondPage(first: number): Record<string, unknown>[] {
  const third = Math.floor(first / 3);
  return [
    ...Array.from({ length: third }, (_, i) => assignment(i + 1, i % 2 ? awkward(i + 1) : {})),
    ...Array.from({ length: third }, (_, i) => assignment(third + i + 1, { VehicleName: `Changed ${i}` })),
    ...Array.from({ length: third }, (_, i) => assignment(first + i + 1)),
  ];
}

const firstPage = (count: number) =>
  Array.from({ length: count }, (_, i) => assignment(i + 1, i % 2 ? awkward(i + 1) : {}));

async function writeInPages(companyKey: string, items: Record<string, unknown>[], size: number, syncedAt: Date) {
  const total = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
  for (let i = 0; i < items.length; i += size) {
    const r = await writePage(wh, {
      target: targets['shift-assignments'],
      companyKey,
      items: items.slice(i, i + size),
      syncedAt,
      stream: 's',
    });
    for (const k of Object.keys(total) as (keyof typeof total)[]) total[k] += r[k];
  }
  return total;
}

/** Rows of two companies compare without the company and the content hash, which covers the company. */
const withoutCompany = (rows: Record<string, unknown>[]) => rows.map(({ company_key, _hash, ...rest }) => rest);

describe('pages written through COPY staging', () => {
  it('write new, changed and unchanged rows exactly as unnested pages do', async () => {
    const copied = `${company}-copy`;
    const unnested = `${company}-unnest`;
    expect(await writeInPages(copied, firstPage(MANY), MANY, t0)).toEqual({
      inserted: MANY,
      updated: 0,
      unchanged: 0,
      deleted: 0,
    });
    expect(await writeInPages(unnested, firstPage(MANY), FEW, t0)).toEqual({
      inserted: MANY,
      updated: 0,
      unchanged: 0,
      deleted: 0,
    });
    const second = secondPage(MANY);
    const third = Math.floor(MANY / 3);
    const expected = { inserted: third, updated: third, unchanged: third, deleted: 0 };
    expect(await writeInPages(copied, second, second.length, t1)).toEqual(expected);
    expect(await writeInPages(unnested, second, FEW, t1)).toEqual(expected);

    const rows = await readRows(wh, targets['shift-assignments'], copied);
    expect(withoutCompany(rows)).toEqual(withoutCompany(await readRows(wh, targets['shift-assignments'], unnested)));
    expect(rows).toHaveLength(MANY + third);
    // Rows the second page left out or repeated unchanged keep the first page's _synced_at.
    const leftOut = (id: number) => id <= MANY && !(id > third && id <= 2 * third);
    expect(
      rows.filter((r) => (r._synced_at as Date).getTime() === t0.getTime()).map((r) => r.shift_assignment_id),
    ).toEqual(rows.map((r) => r.shift_assignment_id as number).filter(leftOut));
    const byId = new Map(rows.map((r) => [r.shift_assignment_id as number, r]));
    expect(byId.get(2)).toMatchObject({
      vehicle_name: 'Medic\t2\n\\N\r\\',
      _extra: { Radio: { Channel: 'a\\b\t"c"' } },
      _synced_at: t0,
    });
    expect(byId.get(third + 1)).toMatchObject({ vehicle_name: 'Changed 0', _synced_at: t1 });
    expect(byId.get(MANY + 1)).toMatchObject({ _synced_at: t1, _deleted_at: null });
  });

  it('replace the child rows of changed parents and keep history', async () => {
    const shifts = (name: string) =>
      Array.from({ length: MANY }, (_, i) => ({ ShiftId: i + 1, ShiftName: `${name} ${i}` }));
    const page = { target: targets.schedules, companyKey: company, stream: 'schedules' };
    await writePage(wh, { ...page, items: [parsed('schedules', { Shifts: shifts('Day') })], syncedAt: t0 });
    expect(
      await writePage(wh, { ...page, items: [parsed('schedules', { Shifts: shifts('Night') })], syncedAt: t1 }),
    ).toEqual({
      inserted: 0,
      updated: 1,
      unchanged: 0,
      deleted: 0,
      keys: [`[${JSON.stringify(String(parsed('schedules').ScheduleId))}]`],
    });
    const children = await readRows(wh, 'schedule_shifts', company);
    expect(children).toHaveLength(MANY);
    expect(
      children.every(
        (c) => (c.shift_name as string).startsWith('Night ') && (c._synced_at as Date).getTime() === t1.getTime(),
      ),
    ).toBe(true);

    const credentials = Array.from({ length: MANY }, (_, i) =>
      parsed('individualCertifications', { IndividualCertificationId: i + 1 }),
    );
    const creds = { target: targets['individual-certifications'], companyKey: company, stream: 'certs' };
    await writePage(wh, { ...creds, items: credentials, syncedAt: t0 });
    const changed = credentials.map((c, i) => (i < 10 ? { ...c, ExpirationDate: '2027-01-01' } : c));
    expect(await writePage(wh, { ...creds, items: changed, syncedAt: t1 })).toEqual({
      inserted: 0,
      updated: 10,
      unchanged: MANY - 10,
      deleted: 0,
      keys: credentials.map((_, i) => `["${i + 1}"]`),
    });
    const history = await readRows(wh, 'individual_certifications_history', company);
    expect(history).toHaveLength(MANY + 10);
    expect(history.filter((h) => h.valid_to !== null).map((h) => h.valid_to)).toEqual(Array(10).fill(t1));
  });

  it('fail as a whole, with Postgres’s reason, when one value is not of its column’s type', async () => {
    const items = [...firstPage(MANY - 1), assignment(MANY, { StartDateTime: '2024-02-30T00:00:00Z' })];
    const page = { target: targets['shift-assignments'], companyKey: company, syncedAt: t0, stream: 's' };
    await expect(
      writePage(wh, { ...page, items, checkpoint: { partition: '-', cursor: { until: 'b' } } }),
    ).rejects.toThrow(/2024-02-30/);
    expect(await readRows(wh, targets['shift-assignments'], company)).toEqual([]);
    expect(await readCheckpoint(wh, company, 's', '-')).toBeUndefined();
    // The connection that held the failed transaction stages the next page as usual.
    expect(await writePage(wh, { ...page, items: firstPage(MANY) })).toMatchObject({ inserted: MANY });
  });

  it('stage a table at most once per transaction', async () => {
    const s = staging(wh.schema, tableInfo('shift_assignments'));
    const claims = await wh.sql.begin(async (tx) => [claimStaging(tx, s), claimStaging(tx, s)]);
    expect(claims).toEqual([true, false]);
    expect(await wh.sql.begin(async (tx) => claimStaging(tx, s))).toBe(true);
  });
});
