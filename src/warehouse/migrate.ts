import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import type postgres from 'postgres';
import { postgresAt } from './socket.ts';
import type { Logger } from '../log.ts';
import { DEFAULT_SCHEMA } from './schema.ts';
import { ensureAccessPolicies } from './access-policies.ts';
import { ensureComments } from './comments.ts';
import { ensureDistribution } from './distribution.ts';
import { dropMaskedViews, ensureMaskedViews } from './masked-views.ts';
import type { PersonalCatalog } from './personal-data/catalog.ts';

/** drizzle/ beside src/: generated migrations plus the hand-written views (the comments follow descriptions.ts). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** drizzle's bookkeeping, one table per warehouse schema so two schemas in one database stay apart. */
export function migrationsTable(schema: string): string {
  return `__drizzle_migrations_${schema}`;
}

/**
 * The migrations name the schema `workforce`; for another schema they are copied with the name rewritten.
 * Only the quoted identifier is rewritten, never text inside COMMENT strings.
 */
function migrationsFor(schema: string): { dir: string; cleanup: () => void } {
  if (schema === DEFAULT_SCHEMA) return { dir: MIGRATIONS_DIR, cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-migrations-'));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.sql'))) {
    const text = readFileSync(join(dir, f), 'utf8');
    writeFileSync(join(dir, f), text.replaceAll(`"${DEFAULT_SCHEMA}"`, `"${schema}"`));
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface MigrateOptions {
  logger?: Logger;
  /** What is personal: the analyst schema's views mask it. Without it they are left as they are. */
  catalog?: PersonalCatalog;
}

/**
 * Applies pending migrations. drizzle's migrator needs a one-connection client; an advisory lock on that
 * connection makes processes that migrate at once go one after another, and the later ones find nothing to do.
 */
export async function migrateWarehouse(url: string, schema: string, o: MigrateOptions = {}): Promise<void> {
  const { logger, catalog } = o;
  const client = postgresAt(url, { max: 1, onnotice: () => {} });
  const { dir, cleanup } = migrationsFor(schema);
  try {
    await client`select pg_advisory_lock(hashtext(${`wfsync-migrate:${schema}`}))`;
    const before = await appliedCount(client, schema);
    if (before < journalLength(dir)) await client.begin((tx) => dropMaskedViews(tx, schema));
    await migrate(drizzle(client), {
      migrationsFolder: dir,
      migrationsSchema: 'drizzle',
      migrationsTable: migrationsTable(schema),
    });
    // The analyst schema's views copy the comments: they are made again with the new ones.
    if ((await ensureComments(client, schema)) > 0) await client.begin((tx) => dropMaskedViews(tx, schema));
    // Data, not a migration: a table a later migration adds with a company_key is covered as it appears.
    await client.begin((tx) => ensureAccessPolicies(tx, schema));
    // On Citus, a table a migration added (with its policy) is distributed as it appears, like the policies;
    // before the analyst schema's views read it.
    const placed = await ensureDistribution(client, schema);
    if (placed.length > 0) logger?.info({ schema, tables: placed.length }, 'warehouse tables distributed (Citus)');
    if (catalog) await client.begin((tx) => ensureMaskedViews(tx, schema, catalog));
    await client`select pg_advisory_unlock(hashtext(${`wfsync-migrate:${schema}`}))`;
    const applied = (await appliedCount(client, schema)) - before;
    // Every command migrates on its way in: only a change to the warehouse is news.
    if (applied > 0) logger?.info({ schema, applied }, 'warehouse migrated');
    else logger?.debug({ schema }, 'warehouse schema up to date');
  } finally {
    cleanup();
    await client.end();
  }
}

/** How many migrations the folder holds. */
function journalLength(dir: string): number {
  return (JSON.parse(readFileSync(join(dir, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] }).entries
    .length;
}

/** How many migrations the warehouse holds (none before its first). */
export async function appliedCount(client: postgres.Sql, schema: string): Promise<number> {
  const table = `drizzle."${migrationsTable(schema)}"`;
  const [exists] = await client<{ t: string | null }[]>`select to_regclass(${table})::text as t`;
  if (!exists?.t) return 0;
  const [row] = await client.unsafe<{ n: number }[]>(`select count(*)::int as n from ${table}`);
  return row!.n;
}
