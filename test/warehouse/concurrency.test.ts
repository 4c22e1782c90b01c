import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { readRows } from '../support/rows.ts';
import { targets } from '../../src/resources/index.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { migratedWarehouse, parsed } from './fixtures.ts';

let wh: Warehouse;
beforeAll(async () => {
  wh = await migratedWarehouse();
});
afterAll(async () => {
  await wh?.close();
});

const certification = (id: number, expires: string) =>
  parsed('individualCertifications', { IndividualCertificationId: id, ExpirationDate: expires });

/** A deterministic shuffle, so each writer holds the same keys in its own order. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('writePage with concurrent writers of the same keys', () => {
  // Adjacent windows share their boundary (the service's end is inclusive), so pages written at once can overlap.
  it('never deadlocks, whatever order each page holds its rows in, and keeps one open history version per key', async () => {
    const company = 'overlap';
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    const writer = async (seed: number, dates: readonly string[]) => {
      for (const [round, date] of dates.entries()) {
        const items = shuffled(ids, seed + round).map((id) => certification(id, date));
        await writePage(wh, {
          target: targets['individual-certifications'],
          companyKey: company,
          items,
          syncedAt: new Date(Date.UTC(2024, 5, 2, 0, round, seed)),
          stream: 'c',
        });
      }
    };
    const dates = ['2026-01-01', '2027-01-01', '2028-01-01', '2026-06-01'];
    await Promise.all([writer(1, dates), writer(2, [...dates].reverse()), writer(3, dates)]);
    const rows = await readRows(wh, targets['individual-certifications'], company);
    expect(rows).toHaveLength(ids.length);
    const open = (await readRows(wh, 'individual_certifications_history', company)).filter((h) => h.valid_to === null);
    expect(open).toHaveLength(ids.length);
    const byId = new Map(rows.map((r) => [r.individual_certification_id, r.expiration_date]));
    expect(open.every((h) => byId.get(h.individual_certification_id) === h.expiration_date)).toBe(true);
  });
});
