import { index, integer, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, localTime, personNames, synced, syncedParent, tz } from './columns.ts';

const assignmentColumns = () => ({
  shift_assignment_id: integer().notNull(),
  schedule_id: integer(),
  schedule_name: text(),
  shift_id: integer(),
  shift_name: text(),
  job_title_id: integer(),
  job_title_name: text(),
  ...localTime('start_date_time'),
  ...localTime('end_date_time'),
  type: text(),
  ...personNames('assignee_'),
});

/** Shift assignments, their change records, schedules and their shifts. */
export const schedulingTables = (s: PgSchema) => ({
  shiftAssignments: s.table(
    'shift_assignments',
    {
      company_key: companyKey(),
      ...assignmentColumns(),
      vehicle_name: text(),
      ...localTime('clock_in_date_time'),
      ...localTime('clock_out_date_time'),
      ...syncedParent(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.shift_assignment_id] }),
      index().on(t.start_date_time, t.company_key),
      index().on(t.assignee_service_id, t.company_key),
    ],
  ),
  assignmentChanges: s.table(
    'assignment_changes',
    {
      company_key: companyKey(),
      _key: text().notNull(),
      event_type: text(),
      event_time_stamp: tz(),
      ...assignmentColumns(),
      ...syncedParent(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t._key] }),
      index().on(t.event_time_stamp, t.company_key),
      index().on(t.shift_assignment_id, t.company_key),
    ],
  ),
  schedules: s.table(
    'schedules',
    { company_key: companyKey(), schedule_id: integer().notNull(), schedule_name: text(), ...syncedParent() },
    (t) => [primaryKey({ columns: [t.company_key, t.schedule_id] })],
  ),
  scheduleShifts: s.table(
    'schedule_shifts',
    {
      company_key: companyKey(),
      schedule_id: integer().notNull(),
      shift_id: integer().notNull(),
      shift_name: text(),
      ...synced(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.schedule_id, t.shift_id] })],
  ),
});
