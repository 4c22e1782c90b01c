import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrationsTable } from '../../src/warehouse/migrate.ts';
import { DEFAULT_SCHEMA } from '../../src/warehouse/schema.ts';

/** Applies the migrations up to and including `tag` (the default schema): a warehouse as an earlier release left it. */
export async function migrateUpTo(url: string, tag: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-migrations-'));
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    cpSync(MIGRATIONS_DIR, dir, { recursive: true });
    const journalFile = join(dir, 'meta', '_journal.json');
    const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: { tag: string }[] };
    const last = journal.entries.findIndex((e) => e.tag === tag);
    if (last < 0) throw new Error(`no migration ${tag}`);
    writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, last + 1) }));
    await migrate(drizzle(client), {
      migrationsFolder: dir,
      migrationsSchema: 'drizzle',
      migrationsTable: migrationsTable(DEFAULT_SCHEMA),
    });
  } finally {
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  }
}
