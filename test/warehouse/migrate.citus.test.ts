import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableInfo } from '../../src/warehouse/catalog.ts';
import { cells, openingHistoryFrom, valuesStatement } from '../../src/warehouse/citus-writes.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync } from '../support/processes.ts';

/**
 * `wfsync migrate` on a fresh database of a Citus cluster (a coordinator and two workers): where each table goes,
 * and the form a page's writes take there. Runs under `npm run test:citus` alone.
 */

const S = 'workforce';

let url: string;
let admin: postgres.Sql;

beforeAll(async () => {
  url = await freshDatabase({ empty: true });
  admin = postgres(url, { max: 1, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  await admin?.end();
});

describe('wfsync migrate on a Citus coordinator', () => {
  it('leaves no table with a company_key outside Citus: distributed by it beside companies, or copied to every node', {
    timeout: 300_000,
  }, async () => {
    for (let run = 0; run < 2; run++) {
      const migrated = await runWfsync(['migrate'], { DATABASE_URL: url, LOG_LEVEL: 'warn' });
      expect(migrated.code, migrated.stderr).toBe(0);
    }
    const tables = await admin<{ table: string; kind: string | null; beside: boolean }[]>`
      select c.relname as table, p.partmethod::text || p.repmodel::text as kind,
             p.colocationid = (select colocationid from pg_dist_partition where logicalrelid = ${`${S}.companies`}::regclass) as beside
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      left join pg_dist_partition p on p.logicalrelid = c.oid
      where n.nspname = ${S} and c.relkind = 'r'
        and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'company_key')
      order by 1`;
    expect(tables.length).toBeGreaterThan(40);
    expect(tables.filter((t) => t.kind === null)).toEqual([]);
    expect(tables.filter((t) => t.kind !== 'hs' || !t.beside).map((t) => [t.table, t.kind])).toEqual([
      ['access_grants', 'nt'],
      ['audit', 'nt'],
      ['personal_data_versions', 'nt'],
      ['push_models', 'nt'],
    ]);
  });

  it('makes personal_data_versions, which every page reads with the defaults, a reference table where it was distributed', {
    timeout: 300_000,
  }, async () => {
    const table = `${S}.personal_data_versions`;
    await admin`select undistribute_table(${table})`;
    await admin`select create_distributed_table(${table}, 'company_key', colocate_with => ${`${S}.companies`})`;
    const migrated = await runWfsync(['migrate'], { DATABASE_URL: url, LOG_LEVEL: 'warn' });
    expect(migrated.code, migrated.stderr).toBe(0);
    const [row] = await admin<{ kind: string }[]>`
      select partmethod::text || repmodel::text as kind from pg_dist_partition where logicalrelid = ${table}::regclass`;
    expect(row?.kind).toBe('nt');
  });
});

describe('a page write on the cluster', () => {
  // A plan of one task is a router query: it runs on the company's shard, on the page's one connection, with no
  // two-phase commit; an INSERT … SELECT of unnested arrays would be pulled through the coordinator instead.
  const plan = async (statement: string, params: (string | null)[]) =>
    (await admin.unsafe(`explain (costs off) ${statement}`, params)).map((r) => r['QUERY PLAN'] as string).join('\n');

  it("inserts and upserts a page's rows, and opens their history, as router queries of the company's shard", async () => {
    const table = tableInfo('individual_certifications');
    const rows = [1, 2].map((id) => ({
      ...table.blank(),
      company_key: 'a',
      individual_certification_id: id,
      _synced_at: new Date(),
      _hash: `h${id}`,
    }));
    for (const upsert of [false, true]) {
      const text = await plan(valuesStatement(S, table, rows.length, upsert), cells(rows, table));
      expect(text).toMatch(/Task Count: 1\b/);
      expect(text).not.toMatch(/INSERT \.\.\. SELECT/);
    }
    const history = await plan(openingHistoryFrom(S, table, tableInfo('individual_certifications_history')), [
      'a',
      new Date().toISOString(),
      '{1,2}',
    ]);
    expect(history).toMatch(/Task Count: 1\b/);
    expect(history).not.toMatch(/pull to coordinator|repartition/);
  });
});
