import { date, jsonb, integer, text, timestamp, type PgColumnBuilderBase } from 'drizzle-orm/pg-core';

/**
 * Column builders shared by the warehouse tables. Property keys are the SQL column names (snake_case of the
 * service's names), so rows read with postgres.js and drizzle's $inferSelect types agree.
 *
 * Secondary indexes lead with their own column, never with company_key: a fresh table's statistics make the
 * planner take any index on company_key for a key lookup, and only the primary key should serve one.
 */

export type Columns = Record<string, PgColumnBuilderBase>;

export const tz = () => timestamp({ withTimezone: true, mode: 'date' });
export const day = () => date({ mode: 'string' });
export const companyKey = () => text().notNull();

/** Bookkeeping columns of every synced row. */
export const synced = () => ({
  _synced_at: tz().notNull(),
  _deleted_at: tz(),
  _extra: jsonb(),
});

/** Parent rows also carry the content hash that decides whether a write changed anything. */
export const syncedParent = () => ({ ...synced(), _hash: text().notNull() });

/** Validity range of a history row. */
export const history = () => ({ valid_from: tz().notNull(), valid_to: tz() });

/** Columns of a flattened nested object: `Assignee.ServiceId` → `assignee_service_id`. */
export function prefixed<P extends string, C extends Columns>(
  p: P,
  cols: C,
): { [K in keyof C & string as `${P}${K}`]: C[K] } {
  return Object.fromEntries(Object.entries(cols).map(([k, v]) => [p + k, v])) as never;
}

export const personNames = <P extends string>(p: P) =>
  prefixed(p, { service_id: integer(), employee_number: text(), first_name: text(), last_name: text() });

/**
 * A service date-time: the instant (`x`), and the calendar day and UTC offset the service wrote it with
 * (`x_local_date`, `x_utc_offset`), which the instant alone loses. Days are counted by `x_local_date`.
 */
export const localTime = <N extends string>(n: N) => prefixed(n, { '': tz(), _local_date: day(), _utc_offset: text() });

/**
 * A field the service types as a date that may arrive as a date-time: the day it wrote (`x`), and when it
 * sent a time with an offset, the full value (`x_instant`) and that offset (`x_utc_offset`).
 */
export const localDay = <N extends string>(n: N) => prefixed(n, { '': day(), _instant: tz(), _utc_offset: text() });

export const legalNames = <P extends string = ''>(p: P = '' as P) =>
  prefixed(p, { legal_first_name: text(), legal_middle_name: text(), legal_last_name: text() });
