import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import postgres from 'postgres';
import { migrationsTable } from '../../src/warehouse/migrate.ts';
import { DEFAULT_SCHEMA } from '../../src/warehouse/schema.ts';
import { migrateUpTo } from './migrations.ts';

/**
 * A warehouse as a release left it, stored as JSON: every row of every table of the default schema, the hashes
 * of the migrations it had applied, and the sandbox it was synced from (seed, size, clock). Rows are kept as
 * Postgres writes them to JSON (to_jsonb), so they go back as they were.
 */
export interface WarehouseFixture {
  /** The git ref of the release that wrote it, and its package version. */
  release: { ref: string; version: string };
  sandbox: { seed: number; size: 'tiny'; now: string };
  companyKey: string;
  /** The last migration the release had, and the hashes of every migration it applied, in order. */
  lastMigration: string;
  migrationHashes: string[];
  tables: Record<string, Record<string, unknown>[]>;
}

/** The fixture kept in test/fixtures (gzipped JSON). */
export function loadFixture(path: string): WarehouseFixture {
  return JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as WarehouseFixture;
}

/** Every row of every table of the default schema, each table in its key order, and the migrations applied. */
export async function dumpWarehouse(url: string): Promise<Pick<WarehouseFixture, 'migrationHashes' | 'tables'>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const names = await sql<{ name: string }[]>`
      select table_name as name from information_schema.tables
      where table_schema = ${DEFAULT_SCHEMA} and table_type = 'BASE TABLE' order by table_name`;
    const tables: WarehouseFixture['tables'] = {};
    for (const { name } of names) {
      const [r] = await sql<{ rows: Record<string, unknown>[] }[]>`
        select coalesce(jsonb_agg(to_jsonb(t) order by to_jsonb(t)::text), '[]'::jsonb) as rows from ${sql(DEFAULT_SCHEMA)}.${sql(name)} t`;
      tables[name] = r!.rows;
    }
    const hashes = await sql<
      { hash: string }[]
    >`select hash from drizzle.${sql(migrationsTable(DEFAULT_SCHEMA))} order by id`;
    return { migrationHashes: hashes.map((h) => h.hash), tables };
  } finally {
    await sql.end();
  }
}

/**
 * Builds the fixture's warehouse in an empty database: the migrations the release had (checked against the
 * hashes it applied: an edited migration fails here), then its rows, with identity sequences moved past them.
 */
export async function restoreWarehouse(url: string, fixture: WarehouseFixture): Promise<void> {
  await migrateUpTo(url, fixture.lastMigration);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const hashes = await sql<
      { hash: string }[]
    >`select hash from drizzle.${sql(migrationsTable(DEFAULT_SCHEMA))} order by id`;
    if (JSON.stringify(hashes.map((h) => h.hash)) !== JSON.stringify(fixture.migrationHashes)) {
      throw new Error(`the migrations up to ${fixture.lastMigration} are not those ${fixture.release.ref} applied`);
    }
    await sql.begin(async (tx) => {
      for (const [name, rows] of Object.entries(fixture.tables)) {
        if (rows.length === 0) continue;
        const table = tx`${tx(DEFAULT_SCHEMA)}.${tx(name)}`;
        await tx`insert into ${table} overriding system value
          select * from jsonb_populate_recordset(null::${table}, ${tx.json(rows as never)}::jsonb)`;
      }
      const identities = await tx<{ table: string; column: string }[]>`
        select table_name as table, column_name as column from information_schema.columns
        where table_schema = ${DEFAULT_SCHEMA} and is_identity = 'YES'`;
      for (const { table, column } of identities) {
        await tx`select setval(pg_get_serial_sequence(${`"${DEFAULT_SCHEMA}"."${table}"`}, ${column}), max(${tx(column)}))
          from ${tx(DEFAULT_SCHEMA)}.${tx(table)} having max(${tx(column)}) is not null`;
      }
    });
  } finally {
    await sql.end();
  }
}
