import { boolean, check, integer, text, type PgSchema } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { tz } from './columns.ts';

/**
 * The companies the sync serves: one row per company key, kept by `wfsync companies` and the ops server, or
 * mirrored from WFS_COMPANIES / WFS_API_KEY at start-up (`managed_by = 'environment'`). The API key is stored
 * sealed (AES-256-GCM under WFS_SECRET_KEY, ../secret.ts), never in clear.
 */
export function companyTables(s: PgSchema) {
  const companies = s.table(
    'companies',
    {
      company_key: text().primaryKey(),
      base_url: text().notNull(),
      api_key_sealed: text().notNull(),
      form_ids: integer().array().notNull().default(sql`'{}'`),
      run_type_ids: integer().array().notNull().default(sql`'{}'`),
      rate_limit: text().notNull().default('100/60s'),
      paused: boolean().notNull().default(false),
      streams_off: text().array().notNull().default(sql`'{}'`),
      managed_by: text().notNull().default('operator'),
      created_at: tz().notNull().defaultNow(),
      updated_at: tz().notNull().defaultNow(),
    },
    (t) => [
      check('companies_managed_by', sql`${t.managed_by} in ('environment', 'operator')`),
      // A key in clear would not have the sealed format: the table refuses it.
      check('companies_api_key_sealed', sql`${t.api_key_sealed} like 'v1.%'`),
    ],
  );
  return { companies };
}
