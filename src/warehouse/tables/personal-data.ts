import { sql } from 'drizzle-orm';
import { bigint, check, index, jsonb, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, tz } from './columns.ts';

/** What a policy does with a personal field: keep it, keep its keyed hash, or store nothing. */
export const PERSONAL_DATA_ACTIONS = ['keep', 'hash', 'block'] as const;
export type PersonalDataAction = (typeof PERSONAL_DATA_ACTIONS)[number];

/** The company key under which the default policy of every company is kept. */
export const DEFAULT_POLICY_KEY = '*';

/** What a field the service adds is, once an operator says: not personal, an employee's, or a patient's. */
export const FIELD_CLASSES = ['not-personal', 'personal', 'patient'] as const;
export type FieldClass = (typeof FIELD_CLASSES)[number];

/** What is stored of a field no column maps and no class names: its values (`keep`), or none until classified. */
export const NEW_FIELD_MODES = ['keep', 'hold'] as const;
export type NewFieldMode = (typeof NEW_FIELD_MODES)[number];

/**
 * Personal-data policies (a field's action per company, or the default), their versions (which pages check and
 * the rewrite of stored rows completes), the people erased (only a keyed hash of their ids) and each erasure; the
 * classes of the fields the service adds, and what is stored of those not classified yet.
 */
export const personalDataTables = (s: PgSchema) => ({
  personalDataPolicies: s.table(
    'personal_data_policies',
    {
      company_key: companyKey(),
      field: text().notNull(),
      action: text().notNull(),
      changed_at: tz().notNull().defaultNow(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.field] }),
      check('personal_data_policies_action', sql`${t.action} in ('keep', 'hash', 'block')`),
    ],
  ),
  personalDataVersions: s.table('personal_data_versions', {
    company_key: text().primaryKey(),
    version: bigint({ mode: 'number' }).notNull().default(0),
    applied_version: bigint({ mode: 'number' }).notNull().default(0),
    changed_at: tz().notNull().defaultNow(),
  }),
  personalDataSuppressions: s.table(
    'personal_data_suppressions',
    {
      company_key: companyKey(),
      person_hash: text().notNull(),
      erasure_id: bigint({ mode: 'number' }),
      suppressed_at: tz().notNull().defaultNow(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.person_hash] })],
  ),
  erasures: s.table(
    'erasures',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      erased_at: tz().notNull().defaultNow(),
      requested_by: text().notNull(),
      cause: text().notNull(),
      counts: jsonb().notNull(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.id] }), index().on(t.company_key, t.erased_at)],
  ),
  fieldClasses: s.table(
    'field_classes',
    {
      company_key: companyKey(),
      field: text().notNull(),
      class: text().notNull(),
      classified_at: tz().notNull().defaultNow(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.field] }),
      check('field_classes_class', sql`${t.class} in ('not-personal', 'personal', 'patient')`),
    ],
  ),
  newFieldModes: s.table(
    'new_field_modes',
    {
      company_key: text().primaryKey(),
      mode: text().notNull(),
      changed_at: tz().notNull().defaultNow(),
    },
    (t) => [check('new_field_modes_mode', sql`${t.mode} in ('keep', 'hold')`)],
  ),
});
