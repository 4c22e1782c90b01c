import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fenced, isFencedOff, takeFence } from '../../src/warehouse/fencing.ts';
import { markMissingDeleted } from '../../src/warehouse/deletions.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { targets } from '../../src/resources/index.ts';
import { freshDatabase } from '../support/db.ts';

let wh: Warehouse;
beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
});
afterAll(async () => {
  await wh?.close();
});

const page = (w: Warehouse, id: number) =>
  writePage(w, {
    target: targets.departments,
    companyKey: 'acme',
    stream: 'departments',
    items: [{ DepartmentId: id, DepartmentName: `d${id}` }],
    syncedAt: new Date(),
  });

describe('run fences', () => {
  it('refuse, in Postgres, the pages of a run once a later run of its job took the lock', async () => {
    const first = fenced(wh, await takeFence(wh, 'acme', 'reference-lists', 'job-1'));
    await page(first, 1);
    const second = fenced(wh, await takeFence(wh, 'acme', 'reference-lists', 'job-2'));
    expect(second.fence!.token).toBe(first.fence!.token + 1);

    const refused = await page(first, 2).catch((e: unknown) => e);
    expect(isFencedOff(refused), String(refused)).toBe(true);
    expect(String(refused)).toMatch(/fenced off/);
    const deletion = await markMissingDeleted(first, {
      target: targets.departments,
      companyKey: 'acme',
      seen: new Set<string>(),
    }).catch((e: unknown) => e);
    expect(isFencedOff(deletion)).toBe(true);

    await page(second, 3);
    // Another job, or another company, has a fence of its own.
    await page(fenced(wh, await takeFence(wh, 'other', 'reference-lists', 'job-3')), 4);
    const ids = await wh.sql`select department_id from ${wh.sql(wh.schema)}.departments order by 1`;
    expect(ids.map((r) => r.department_id)).toEqual([1, 3, 4]);
  });

  it('make a run that takes the lock wait for the page the old run is writing', async () => {
    const old = await takeFence(wh, 'acme', 'individuals', 'job-a');
    // The old run's page holds the fence row until it commits.
    const conn = await wh.sql.reserve();
    try {
      await conn`begin`;
      await conn`select ${wh.sql(wh.schema)}.check_run_fence(${old.companyKey}, ${old.job}, ${old.token})`;
      let taken = false;
      const next = takeFence(wh, 'acme', 'individuals', 'job-b').then((f) => {
        taken = true;
        return f;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(taken).toBe(false);
      await conn`commit`;
      expect((await next).token).toBe(old.token + 1);
    } finally {
      conn.release();
    }
  });
});
