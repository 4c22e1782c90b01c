import { boolean, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, tz } from './columns.ts';

/**
 * Which Postgres roles of the operator read which companies' rows (`wfsync access`). The row-level security
 * policies of every table with a company_key read this table (../access.ts), so granting a company is a row,
 * not new DDL. Its key leads with the role: a policy looks up the current role's companies once per query.
 */
export function accessTables(s: PgSchema) {
  const accessGrants = s.table(
    'access_grants',
    {
      role: text().notNull(),
      company_key: companyKey(),
      personal: boolean().notNull().default(false),
      granted_at: tz().notNull().defaultNow(),
    },
    (t) => [primaryKey({ columns: [t.role, t.company_key] })],
  );
  return { accessGrants };
}
