import { index, integer, numeric, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, localTime, personNames, prefixed, synced, syncedParent, tz } from './columns.ts';

const timeOffPerson = <P extends string>(p: P) => ({
  ...personNames(p),
  ...prefixed(p, { unique_identifier: text() }),
});

/** Time-off requests and the hours approved for each. */
export const timeOffTables = (s: PgSchema) => ({
  timeOffRequests: s.table(
    'time_off_requests',
    {
      company_key: companyKey(),
      _key: text().notNull(),
      ...timeOffPerson('employee_'),
      ...localTime('start_date_time'),
      ...localTime('end_date_time'),
      requested_leave_policy: text(),
      requested_leave_type: text(),
      requested_date_time: tz(),
      status: text(),
      ...timeOffPerson('reviewed_by_'),
      reviewed_date_time: tz(),
      requested_hours: numeric(),
      ...syncedParent(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t._key] }),
      index().on(t.start_date_time, t.company_key),
      index().on(t.employee_service_id, t.company_key),
    ],
  ),
  timeOffApprovedHours: s.table(
    'time_off_approved_hours',
    {
      company_key: companyKey(),
      time_off_request_key: text().notNull(),
      _ord: integer().notNull(),
      approved_leave_policy: text(),
      approved_leave_type: text(),
      approved_hours: numeric(),
      ...synced(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.time_off_request_key, t._ord] })],
  ),
});
