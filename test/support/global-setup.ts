import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { migrateWarehouse } from '../../src/warehouse/migrate.ts';
import { DEFAULT_SCHEMA } from '../../src/warehouse/schema.ts';
import { withDatabase } from './citus.ts';
import { startPostgres, startRedis } from './services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    databaseUrl: string;
    /** A database with the warehouse migrated, that freshDatabase({ migrated: true }) copies. */
    migratedTemplate?: string;
  }
}

const MIGRATED_TEMPLATE = 'wfs_migrated';

/**
 * One private Redis and one private Postgres for the whole run, on free ports, and on the Postgres a database
 * with the warehouse migrated once: a copy of it takes a tenth of what migrating a test's database takes.
 */
export default async function setup(project: TestProject) {
  const [redis, server] = await Promise.all([startRedis(), startPostgres()]);
  const admin = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${MIGRATED_TEMPLATE}`);
    await migrateWarehouse(withDatabase(server.url, MIGRATED_TEMPLATE), DEFAULT_SCHEMA);
    // A template may have no session while it is copied.
    await admin.unsafe(`alter database ${MIGRATED_TEMPLATE} allow_connections false`);
  } finally {
    await admin.end();
  }
  project.provide('redisUrl', redis.url);
  project.provide('databaseUrl', server.url);
  project.provide('migratedTemplate', MIGRATED_TEMPLATE);
  return async () => {
    await Promise.allSettled([redis.stop(), server.stop()]);
  };
}
