import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/warehouse/secret.ts';
import { listEvents } from '../../src/warehouse/events.ts';
import {
  addCompany,
  companyRowTables,
  listCompanies,
  mirrorEnvironmentCompanies,
  purgeCompanyRows,
  readCompaniesWithKeys,
  removeCompany,
  rotateKey,
  setPaused,
} from '../../src/warehouse/company-records.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';

const sealer = createSealer('a test secret of enough length');
const CLEAR_KEY = 'clear-api-key-0123456789';
let wh: Warehouse;

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
});
afterAll(() => wh?.close());

/** Every text of every row of the schema, to look for a key in clear. */
async function dump(): Promise<string> {
  const tables = await wh.sql<
    { name: string }[]
  >`select table_name as name from information_schema.tables where table_schema = ${wh.schema} and table_type = 'BASE TABLE'`;
  let out = '';
  for (const { name } of tables)
    out += JSON.stringify(await wh.sql`select * from ${wh.sql(wh.schema)}.${wh.sql(name)}`);
  return out;
}

describe('the companies table', () => {
  it('stores the API key sealed, and hands it back in clear only to the registry', async () => {
    const added = await addCompany(wh, sealer, {
      key: 'north',
      baseUrl: 'http://127.0.0.1:1',
      apiKey: CLEAR_KEY,
      formIds: [1, 2],
      runTypeIds: [3],
    });
    expect(added).toMatchObject({
      key: 'north',
      formIds: [1, 2],
      runTypeIds: [3],
      paused: false,
      managedBy: 'operator',
      rateLimit: { limit: 100, periodMs: 60_000 },
    });
    expect(JSON.stringify(added)).not.toContain(CLEAR_KEY);
    expect(JSON.stringify(await listCompanies(wh))).not.toContain(CLEAR_KEY);
    const [row] = await wh.sql`select api_key_sealed from workforce.companies where company_key = 'north'`;
    expect(row!.api_key_sealed).toMatch(/^v1\./);
    expect(await dump()).not.toContain(CLEAR_KEY);
    expect((await readCompaniesWithKeys(wh, sealer)).find((c) => c.key === 'north')!.apiKey).toBe(CLEAR_KEY);
    // The table itself refuses a key in clear.
    await expect(wh.sql`update workforce.companies set api_key_sealed = ${CLEAR_KEY}`).rejects.toThrow(
      /companies_api_key_sealed/,
    );
  });

  it('refuses a second company of the same key, and changes to an unknown one, each with one line', async () => {
    await expect(addCompany(wh, sealer, { key: 'north', baseUrl: 'http://x', apiKey: 'k' })).rejects.toMatchObject({
      kind: 'already_added',
    });
    await expect(setPaused(wh, 'nowhere', true)).rejects.toMatchObject({
      kind: 'unknown_company',
      message: 'company nowhere is not added (wfsync companies list)',
    });
    await expect(addCompany(wh, sealer, { key: 'bad key!', baseUrl: 'http://x', apiKey: 'k' })).rejects.toMatchObject({
      kind: 'invalid',
    });
  });

  it('pauses, resumes and rotates', async () => {
    expect((await setPaused(wh, 'north', true)).paused).toBe(true);
    expect((await setPaused(wh, 'north', false)).paused).toBe(false);
    await rotateKey(wh, sealer, 'north', 'the-new-key-9876543210');
    expect((await readCompaniesWithKeys(wh, sealer)).find((c) => c.key === 'north')!.apiKey).toBe(
      'the-new-key-9876543210',
    );
    expect(await dump()).not.toContain('the-new-key-9876543210');
  });

  it("mirrors the environment's companies, which the operator's commands then refuse to change", async () => {
    await mirrorEnvironmentCompanies(wh, sealer, [
      { key: 'env', baseUrl: 'http://127.0.0.1:2', apiKey: 'env-key-1234567890' },
    ]);
    const before = (await listCompanies(wh)).find((c) => c.key === 'env')!;
    expect(before.managedBy).toBe('environment');
    const [sealedBefore] = await wh.sql`select api_key_sealed from workforce.companies where company_key = 'env'`;
    // Mirrored again with the same key: the sealed key is left as it was.
    await mirrorEnvironmentCompanies(wh, sealer, [
      { key: 'env', baseUrl: 'http://127.0.0.1:3', apiKey: 'env-key-1234567890' },
    ]);
    const [sealedAfter] =
      await wh.sql`select api_key_sealed, base_url from workforce.companies where company_key = 'env'`;
    expect(sealedAfter!.api_key_sealed).toBe(sealedBefore!.api_key_sealed);
    expect(sealedAfter!.base_url).toBe('http://127.0.0.1:3');
    for (const change of [
      () => setPaused(wh, 'env', true),
      () => rotateKey(wh, sealer, 'env', 'x'),
      () => removeCompany(wh, 'env'),
    ]) {
      await expect(change()).rejects.toMatchObject({
        kind: 'managed_by_environment',
        message: expect.stringMatching(/^company env is managed by the environment/),
      });
    }
    // A company the environment no longer names leaves the table; the operator's stay.
    await mirrorEnvironmentCompanies(wh, sealer, []);
    expect((await listCompanies(wh)).map((c) => c.key)).toEqual(['north']);
    // Its timeline: added, then removed, by the environment; the refused changes are not on it.
    expect((await listEvents(wh, { companyKey: 'env' })).map((e) => [e.event, e.detail])).toEqual([
      ['company_removed', { managedBy: 'environment' }],
      ['company_added', { baseUrl: 'http://127.0.0.1:2', managedBy: 'environment' }],
    ]);
  });

  it('puts a removal without purge on the timeline', async () => {
    await addCompany(wh, sealer, { key: 'west', baseUrl: 'http://127.0.0.1:4', apiKey: 'west-key-1234567890' });
    await removeCompany(wh, 'west');
    expect((await listEvents(wh, { companyKey: 'west' })).map((e) => e.event)).toEqual([
      'company_removed',
      'company_added',
    ]);
  });

  it('purges every row of a company from every table that has company_key, in batches, and no other company', async () => {
    const tables = companyRowTables(wh);
    expect(tables).toEqual(
      expect.arrayContaining(['individuals', 'sync_runs', 'sync_state', 'push_outbox', 'run_fences']),
    );
    expect(tables).not.toContain('companies');
    // The audit outlives a purge: who removed the company stays on record.
    expect(tables).not.toContain('audit');
    for (const key of ['north', 'south']) {
      await wh.sql`insert into workforce.sync_state (company_key, stream, partition, cursor) values (${key}, 's', 'p', '{}')`;
      for (let i = 0; i < 7; i++)
        await wh.sql`insert into workforce.sync_runs (company_key, stream) values (${key}, ${`s${i}`})`;
      await wh.sql`insert into workforce.run_fences (company_key, job, token) values (${key}, 'j', 1)`;
    }
    const purged = await purgeCompanyRows(wh, 'north', 3);
    expect(purged.sync_runs).toBe(7);
    expect(purged.sync_state).toBe(1);
    for (const name of tables) {
      const [n] =
        await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.${wh.sql(name)} where company_key = 'north'`;
      expect(n!.n, name).toBe(0);
    }
    const [south] = await wh.sql`select count(*)::int as n from workforce.sync_runs where company_key = 'south'`;
    expect(south!.n).toBe(7);
    const { purged: again } = await removeCompany(wh, 'north', { purge: true });
    expect(Object.values(again!).every((n) => n === 0)).toBe(true);
    expect(await listCompanies(wh)).toEqual([]);
  });
});
