import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  jsonb,
  primaryKey,
  text,
  uniqueIndex,
  type PgSchema,
} from 'drizzle-orm/pg-core';
import { companyKey, tz } from './columns.ts';

/** States of a pushed change (see src/push/outbox.ts). */
export const PUSH_STATES = ['queued', 'sending', 'in_doubt', 'applied', 'refused', 'failed'] as const;
export type PushState = (typeof PUSH_STATES)[number];
/** States a change does not leave. */
export const FINAL_STATES: readonly PushState[] = ['applied', 'refused', 'failed'];
export const OPEN_STATES: readonly PushState[] = ['queued', 'sending', 'in_doubt'];
export const PUSH_KINDS = ['individual', 'certification', 'verification'] as const;
export type PushKind = (typeof PUSH_KINDS)[number];

/**
 * The push outbox: the source of truth for every change an HR system sent. The queue only carries work;
 * a change's state, attempts, refusal and the service's ids live here.
 */
export const pushTables = (s: PgSchema) => ({
  pushOutbox: s.table(
    'push_outbox',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      kind: text().notNull(),
      /** The caller's id of the change (or one made at intake): a resend with the same id is the same change. */
      change_id: text().notNull(),
      /** The entity the change applies to: `en:` EmployeeNumber, `un:` UniqueNumber, `sid:` ServiceId, `ic:` credential id... */
      entity_key: text().notNull(),
      /** Order of the change among its entity's changes. */
      seq: integer().notNull(),
      /** A credential's holder (an individual's entity key): the credential waits for that individual's pending changes. */
      holder_key: text(),
      /** The change as sent, without SSN. */
      payload: jsonb().notNull(),
      /** The SSN, AES-256-GCM encrypted; erased once the change is applied or refused. */
      sealed: text(),
      status: text().notNull().default('queued'),
      attempts: integer().notNull().default(0),
      /** The last error, or the service's message for a refusal. */
      error: text(),
      /** The refusal's fields and their reasons. */
      fields: jsonb(),
      individual_id: integer(),
      service_id: integer(),
      individual_certification_id: integer(),
      /** A change merged into a later one of the same entity: its outcome is that change's. */
      coalesced_into: bigint({ mode: 'number' }),
      next_attempt_at: tz().notNull().defaultNow(),
      created_at: tz().notNull().defaultNow(),
      updated_at: tz().notNull().defaultNow(),
      applied_at: tz(),
      /** Webhook delivery of the final state. */
      notified_at: tz(),
      notify_attempts: integer().notNull().default(0),
      notify_next_at: tz(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.id] }),
      index().on(t.status, t.company_key, t.id),
      uniqueIndex().on(t.company_key, t.change_id),
      index().on(t.company_key, t.entity_key, t.seq),
      index().on(t.notify_next_at).where(sql`${t.notified_at} is null and ${t.notify_next_at} is not null`),
      // The outbox must never hold an SSN in plain text, whatever the caller puts in the payload.
      check(
        'push_outbox_payload_without_ssn',
        sql`not jsonb_path_exists(${t.payload}, 'lax $.**.keyvalue() ? (@.key like_regex "^ssn$" flag "i")', '{}', true)`,
      ),
    ],
  ),
});

/** What a push model sets: individuals or credentials. */
export const PUSH_MODEL_KINDS = ['individuals', 'certifications'] as const;
export type PushModelKind = (typeof PUSH_MODEL_KINDS)[number];
/** How a model run ended. */
export const PUSH_MODEL_OUTCOMES = ['ok', 'failed'] as const;
export type PushModelOutcome = (typeof PUSH_MODEL_OUTCOMES)[number];

/**
 * Push models: an operator's SQL query of the desired state of individuals or credentials, diffed against the
 * warehouse on a cron; each run's counts are kept in push_model_runs.
 */
export const pushModelTables = (s: PgSchema) => ({
  pushModels: s.table(
    'push_models',
    {
      name: text().primaryKey(),
      company_key: companyKey(),
      kind: text().notNull(),
      query: text().notNull(),
      key_field: text().notNull(),
      /** The query's columns as service fields, in the query's order (checked when the model was added). */
      service_fields: text().array().notNull(),
      cron: text(),
      max_changes: integer().notNull().default(100),
      paused: boolean().notNull().default(false),
      created_at: tz().notNull().defaultNow(),
      updated_at: tz().notNull().defaultNow(),
    },
    (t) => [check('push_models_kind', sql`${t.kind} in ('individuals', 'certifications')`)],
  ),
  pushModelRuns: s.table(
    'push_model_runs',
    {
      id: bigint({ mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
      model_name: text().notNull(),
      company_key: companyKey(),
      started_at: tz().notNull().defaultNow(),
      finished_at: tz(),
      outcome: text(),
      rows_read: integer().notNull().default(0),
      unchanged: integer().notNull().default(0),
      changed: integer().notNull().default(0),
      queued: integer().notNull().default(0),
      refused: integer().notNull().default(0),
      over_cap: boolean().notNull().default(false),
      error: text(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.id] }), index().on(t.model_name, t.started_at)],
  ),
});
