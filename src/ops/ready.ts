import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { Warehouse } from '../warehouse/connection.ts';
import { MIGRATIONS_DIR, migrationsTable } from '../warehouse/migrate.ts';

export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; error?: string }>;
}

/** The newest migration this code ships (drizzle records its `when` as the applied row's created_at). */
function latestMigration(): number {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as {
    entries: { when: number }[];
  };
  return Math.max(...journal.entries.map((e) => e.when));
}

async function check(fn: () => Promise<void>): Promise<{ ok: boolean; error?: string }> {
  try {
    await fn();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/** Postgres answers with every migration applied, and Redis (when used) answers. */
export async function readiness(wh: Warehouse, redis?: Redis): Promise<Readiness> {
  const checks: Readiness['checks'] = {
    postgres: await check(async () => void (await wh.sql`select 1`)),
    migrations: await check(async () => {
      const [row] = await wh.sql<{ at: string | null }[]>`
        select max(created_at)::text as at from drizzle.${wh.sql(migrationsTable(wh.schema))}`;
      if (!row?.at || Number(row.at) < latestMigration())
        throw new Error('migrations are not all applied: run wfsync migrate');
    }),
  };
  if (redis) {
    checks.redis = await check(async () => {
      const pong = await Promise.race([
        redis.ping(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 2 s')), 2000).unref()),
      ]);
      if (pong !== 'PONG') throw new Error(`answered ${pong}`);
    });
  }
  return { ready: Object.values(checks).every((c) => c.ok), checks };
}
