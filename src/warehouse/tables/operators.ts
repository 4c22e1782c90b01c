import { sql } from 'drizzle-orm';
import { bigint, check, index, text, type PgSchema } from 'drizzle-orm/pg-core';
import { tz } from './columns.ts';

/**
 * Who acts on the sync, and what they did: the audit trail of every change (../audit.ts), the dashboard's
 * sessions (../sessions.ts), sign-ins through the identity provider under way, and the named API tokens
 * (../api-tokens.ts). Sessions and tokens are kept by a hash: nothing here can be used to sign in.
 */
export function operatorTables(s: PgSchema) {
  const audit = s.table(
    'audit',
    {
      id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
      at: tz().notNull().defaultNow(),
      actor: text().notNull(),
      action: text().notNull(),
      company_key: text(),
      target: text(),
      outcome: text().notNull(),
      reason: text(),
    },
    (t) => [index().on(t.at), check('audit_outcome', sql`${t.outcome} in ('started', 'done', 'refused', 'failed')`)],
  );
  const sessions = s.table(
    'sessions',
    {
      session_hash: text().primaryKey(),
      actor: text().notNull(),
      role: text().notNull(),
      signed_in_at: tz().notNull().defaultNow(),
      used_at: tz().notNull().defaultNow(),
    },
    (t) => [index().on(t.used_at), check('sessions_role', sql`${t.role} in ('viewer', 'operator', 'admin')`)],
  );
  const signIns = s.table('sign_ins', {
    state_hash: text().primaryKey(),
    nonce: text().notNull(),
    code_verifier: text().notNull(),
    started_at: tz().notNull().defaultNow(),
  });
  const apiTokens = s.table(
    'api_tokens',
    {
      name: text().primaryKey(),
      token_hash: text().notNull().unique(),
      scopes: text().array().notNull(),
      companies: text().array().notNull().default(sql`'{}'`),
      created_at: tz().notNull().defaultNow(),
      created_by: text().notNull(),
      last_used_at: tz(),
    },
    (t) => [
      check(
        'api_tokens_scopes',
        sql`cardinality(${t.scopes}) > 0 and ${t.scopes} <@ array['push', 'read', 'admin']::text[]`,
      ),
    ],
  );
  return { audit, sessions, signIns, apiTokens };
}
