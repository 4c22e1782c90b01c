import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { targets } from '../../src/resources/index.ts';
import { tableInfo } from '../../src/warehouse/catalog.ts';
import { ANALYZE_AFTER_ROWS } from '../../src/warehouse/statistics.ts';
import { lockAndReadStatement } from '../../src/warehouse/write-sql.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { migratedWarehouse, parsed } from './fixtures.ts';

let wh: Warehouse;
beforeAll(async () => {
  wh = await migratedWarehouse('statistics_test');
});
afterAll(async () => {
  await wh?.close();
});

const target = targets['individual-certifications'];
const PAGE = 200;

async function writeCertifications(from: number): Promise<void> {
  const items = Array.from({ length: PAGE }, (_, i) =>
    parsed('individualCertifications', { IndividualCertificationId: from + i }),
  );
  await writePage(wh, { target, companyKey: 'acme', items, syncedAt: new Date(), stream: 'individual-certifications' });
}

async function analyzed(table: string): Promise<boolean> {
  const [row] =
    await wh.sql`select last_analyze is not null as done from pg_stat_user_tables where schemaname = ${wh.schema} and relname = ${table}`;
  return row!.done as boolean;
}

describe('a table a first sync fills from empty', () => {
  it('is analyzed with its history once a thousand rows are in, so that a page looks up its own keys, not every row of the company', async () => {
    const pages = ANALYZE_AFTER_ROWS / PAGE;
    for (let p = 0; p < pages - 1; p++) await writeCertifications(p * PAGE + 1);
    expect(await analyzed(target.table)).toBe(false);
    await writeCertifications((pages - 1) * PAGE + 1);
    expect(await analyzed(target.table)).toBe(true);
    expect(await analyzed(target.history!)).toBe(true);

    const lookup = lockAndReadStatement(wh.schema, tableInfo(target.table));
    const plan = (await wh.sql.unsafe(`explain (generic_plan) ${lookup}`))
      .map((r) => Object.values(r)[0] as string)
      .join('\n');
    expect(plan).toMatch(/Index Cond: .*individual_certification_id = ANY/);
  });
});
