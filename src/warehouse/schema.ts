import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  date,
  index,
  integer,
  jsonb,
  numeric,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  type PgColumnBuilderBase,
} from 'drizzle-orm/pg-core';
import { fencingTables } from './tables/fencing.ts';

/**
 * The warehouse tables. Property keys are the SQL column names (snake_case of the service's names), so rows
 * read with postgres.js and drizzle's $inferSelect types agree. `warehouseTables(name)` builds the same tables
 * in another schema; drizzle-kit generates migrations from the default instance exported at the bottom.
 */

export const DEFAULT_SCHEMA = 'workforce';

type Columns = Record<string, PgColumnBuilderBase>;

const tz = () => timestamp({ withTimezone: true, mode: 'date' });
const day = () => date({ mode: 'string' });
const companyKey = () => text().notNull();

/** Bookkeeping columns of every synced row. */
const synced = () => ({
  _synced_at: tz().notNull(),
  _deleted_at: tz(),
  _extra: jsonb(),
});

/** Parent rows also carry the content hash that decides whether a write changed anything. */
const syncedParent = () => ({ ...synced(), _hash: text().notNull() });

/** Columns of a flattened nested object: `Assignee.ServiceId` → `assignee_service_id`. */
function prefixed<P extends string, C extends Columns>(p: P, cols: C): { [K in keyof C & string as `${P}${K}`]: C[K] } {
  return Object.fromEntries(Object.entries(cols).map(([k, v]) => [p + k, v])) as never;
}

const personNames = <P extends string>(p: P) =>
  prefixed(p, { service_id: integer(), employee_number: text(), first_name: text(), last_name: text() });

const legalNames = <P extends string = ''>(p: P = '' as P) =>
  prefixed(p, { legal_first_name: text(), legal_middle_name: text(), legal_last_name: text() });

const individualColumns = () => ({
  company_key: companyKey(),
  individual_id: integer(),
  service_id: integer().notNull(),
  company_id: integer(),
  first_name: text(),
  middle_name: text(),
  last_name: text(),
  ...legalNames(),
  employee_number: text(),
  unique_number: text(),
  logon_id: text(),
  date_of_birth: day(),
  hire_date: day(),
  gender: text(),
  job_title_id: integer(),
  job_title: text(),
  department: text(),
  locale: text(),
  work_shift: text(),
  is_employee: integer(),
  is_supervisor: integer(),
  work_status: text(),
  status: text(),
  supervisor_id: integer(),
  supervisor_name: text(),
  primary_email_address: text(),
  home_address_line1: text(),
  home_address_line2: text(),
  home_city: text(),
  home_state: text(),
  home_country: text(),
  home_zip_code: text(),
  home_phone_number: text(),
  business_phone_number: text(),
  mobile_phone_number: text(),
  exclude_from_verification_monitoring: boolean(),
});

const certificationColumns = () => ({
  company_key: companyKey(),
  individual_certification_id: integer().notNull(),
  service_id: integer(),
  first_name: text(),
  last_name: text(),
  ...legalNames(),
  unique_identifier: text(),
  business_unit_id: text(),
  job_title_id: integer(),
  job_title: text(),
  additional_job_titles: jsonb(),
  certification_id: integer(),
  certification_name: text(),
  certification_number: text(),
  state: text(),
  country: text(),
  activation_date: day(),
  expiration_date: day(),
  reference: text(),
  update_date: day(),
  update_by: text(),
  is_maintained: boolean(),
  is_deleted: boolean(),
  issuing_body: text(),
  is_primary: boolean(),
  is_non_driver: boolean(),
});

const history = () => ({ valid_from: tz().notNull(), valid_to: tz() });

const assignmentColumns = () => ({
  shift_assignment_id: integer().notNull(),
  schedule_id: integer(),
  schedule_name: text(),
  shift_id: integer(),
  shift_name: text(),
  job_title_id: integer(),
  job_title_name: text(),
  start_date_time: tz(),
  end_date_time: tz(),
  type: text(),
  ...personNames('assignee_'),
});

const timeOffPerson = <P extends string>(p: P) => ({ ...personNames(p), ...prefixed(p, { unique_identifier: text() }) });

const answerColumns = () => ({
  company_key: companyKey(),
  response_id: integer().notNull(),
  question_id: integer().notNull(),
  question_type: text(),
  question_text: text(),
  question_alias: text(),
  page_number: integer(),
  section_name: text(),
  answer_value: jsonb(),
  answer_value_matches_type: boolean(),
  ...synced(),
});

const responseColumns = () => ({
  company_key: companyKey(),
  response_id: integer().notNull(),
  ...personNames('submitted_by_'),
  start_date: tz(),
  ...personNames('assigned_to_'),
  status: text(),
  attached_to_type: text(),
});

/**
 * Secondary indexes lead with their own column, never with company_key: a fresh table's statistics make the
 * planner take any index on company_key for a key lookup, and only the primary key should serve one.
 */
export function warehouseTables(schemaName: string) {
  const s = pgSchema(schemaName);
  const reference = <T extends string, I extends string, L extends string>(name: T, id: I, label: L) =>
    s.table(
      name,
      {
        company_key: companyKey(),
        ...prefixed(id, { '': integer().notNull() }),
        ...prefixed(label, { '': text() }),
        ...syncedParent(),
      },
      (t) => [primaryKey({ columns: [t.company_key, t[id as keyof typeof t] as never] })],
    );

  const individuals = s.table('individuals', { ...individualColumns(), ...syncedParent() }, (t) => [
    primaryKey({ columns: [t.company_key, t.service_id] }),
    index().on(t.employee_number, t.company_key),
  ]);
  const individualsHistory = s.table(
    'individuals_history',
    { ...individualColumns(), _extra: jsonb(), _hash: text().notNull(), ...history() },
    (t) => [primaryKey({ columns: [t.company_key, t.service_id, t.valid_from] })],
  );
  const individualJobTitles = s.table(
    'individual_job_titles',
    { company_key: companyKey(), service_id: integer().notNull(), job_title_id: integer().notNull(), job_title_name: text(), ...synced() },
    (t) => [primaryKey({ columns: [t.company_key, t.service_id, t.job_title_id] })],
  );
  const supervisors = s.table(
    'supervisors',
    {
      company_key: companyKey(),
      service_id: integer().notNull(),
      individual_id: integer(),
      first_name: text(),
      middle_name: text(),
      last_name: text(),
      is_employee: integer(),
      is_supervisor: integer(),
      status: text(),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.service_id] })],
  );

  const individualCertifications = s.table(
    'individual_certifications',
    { ...certificationColumns(), ...syncedParent() },
    (t) => [
      primaryKey({ columns: [t.company_key, t.individual_certification_id] }),
      index().on(t.service_id, t.company_key),
      index().on(t.expiration_date, t.company_key),
    ],
  );
  const individualCertificationsHistory = s.table(
    'individual_certifications_history',
    { ...certificationColumns(), _extra: jsonb(), _hash: text().notNull(), ...history() },
    (t) => [
      primaryKey({ columns: [t.company_key, t.individual_certification_id, t.valid_from] }),
      index('individual_certifications_history_service_idx').on(t.service_id, t.company_key, t.valid_from),
    ],
  );
  const pendingCertifications = s.table(
    'pending_certifications',
    {
      company_key: companyKey(),
      individual_certification_id: integer().notNull(),
      service_id: integer(),
      first_name: text(),
      last_name: text(),
      ...legalNames(),
      job_title_id: integer(),
      job_title: text(),
      additional_job_titles: jsonb(),
      certification_id: integer(),
      certification_name: text(),
      certification_number: text(),
      state: text(),
      country: text(),
      activation_date: day(),
      expiration_date: day(),
      reference: text(),
      update_date: day(),
      is_maintained: boolean(),
      is_non_driver: boolean(),
      verification_status: text(),
      issuing_body_failure_reason: jsonb(),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.individual_certification_id] })],
  );
  const requiredCertificationStatus = s.table(
    'required_certification_status',
    {
      company_key: companyKey(),
      employment_service_id: integer().notNull(),
      employment_unique_identifier: text(),
      employment_employee_number: text(),
      employment_first_name: text(),
      employment_last_name: text(),
      ...legalNames('employment_'),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.employment_service_id] })],
  );
  const requiredCertificationRequirements = s.table(
    'required_certification_requirements',
    {
      company_key: companyKey(),
      employment_service_id: integer().notNull(),
      _key: text().notNull(),
      job_title_job_title_id: integer(),
      job_title_job_title_name: text(),
      locale_locale_id: integer(),
      locale_locale_name: text(),
      locale_business_unit_id: text(),
      requirements_met: boolean(),
      requirement: text(),
      requirement_status: text(),
      fulfilling_certification_certification_name: text(),
      fulfilling_certification_certification_number: text(),
      fulfilling_certification_activation_date: day(),
      fulfilling_certification_expiration_date: day(),
      fulfilling_certification_is_non_driver: boolean(),
      ...synced(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.employment_service_id, t._key] }),
      index('required_certification_requirements_job_title_idx').on(t.job_title_job_title_id, t.company_key),
    ],
  );

  const shiftAssignments = s.table(
    'shift_assignments',
    {
      company_key: companyKey(),
      ...assignmentColumns(),
      vehicle_name: text(),
      clock_in_date_time: tz(),
      clock_out_date_time: tz(),
      ...syncedParent(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.shift_assignment_id] }),
      index().on(t.start_date_time, t.company_key),
      index().on(t.assignee_service_id, t.company_key),
    ],
  );
  const assignmentChanges = s.table(
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
  );
  const schedules = s.table(
    'schedules',
    { company_key: companyKey(), schedule_id: integer().notNull(), schedule_name: text(), ...syncedParent() },
    (t) => [primaryKey({ columns: [t.company_key, t.schedule_id] })],
  );
  const scheduleShifts = s.table(
    'schedule_shifts',
    { company_key: companyKey(), schedule_id: integer().notNull(), shift_id: integer().notNull(), shift_name: text(), ...synced() },
    (t) => [primaryKey({ columns: [t.company_key, t.schedule_id, t.shift_id] })],
  );

  const timeOffRequests = s.table(
    'time_off_requests',
    {
      company_key: companyKey(),
      _key: text().notNull(),
      ...timeOffPerson('employee_'),
      start_date_time: tz(),
      end_date_time: tz(),
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
  );
  const timeOffApprovedHours = s.table(
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
  );

  const individualCourses = s.table(
    'individual_courses',
    {
      company_key: companyKey(),
      individual_course_id: text().notNull(),
      course_name: text(),
      course_description: text(),
      credit: numeric(),
      start_date: day(),
      end_date: day(),
      first_name: text(),
      middle_name: text(),
      last_name: text(),
      individual_id: integer(),
      employee_number: text(),
      department: text(),
      locale: text(),
      job_title: text(),
      author_instructor: text(),
      status: text(),
      course_id: integer(),
      exam_start_date: day(),
      exam_end_date: day(),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.individual_course_id] }), index().on(t.start_date, t.company_key)],
  );

  const forms = s.table(
    'forms',
    { company_key: companyKey(), form_id: integer().notNull(), form_title: text(), ...syncedParent() },
    (t) => [primaryKey({ columns: [t.company_key, t.form_id] })],
  );
  const formResponses = s.table(
    'form_responses',
    {
      ...responseColumns(),
      form_id: integer(),
      ...personNames('related_individual_'),
      related_employee_health_event_health_event_id: integer(),
      related_employee_health_event_health_event_type: text(),
      related_employee_health_event_event_date_time: tz(),
      ...personNames('related_employee_health_event_related_individual_'),
      related_quality_improvement_incident_incident_id: integer(),
      related_quality_improvement_incident_incident_type: text(),
      related_quality_improvement_incident_incident_date_time: tz(),
      related_shift_shift_name: text(),
      related_shift_shift_date: tz(),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.response_id] }), index().on(t.form_id, t.company_key)],
  );
  const formResponseAnswers = s.table('form_response_answers', answerColumns(), (t) => [
    primaryKey({ columns: [t.company_key, t.response_id, t.question_id] }),
  ]);
  const runLogForms = s.table(
    'run_log_forms',
    {
      company_key: companyKey(),
      form_id: integer().notNull(),
      form_type: text(),
      archived: boolean(),
      insert_date: tz(),
      update_date: tz(),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.form_id] })],
  );
  const runLogFormResponses = s.table(
    'run_log_form_responses',
    {
      ...responseColumns(),
      run_log_type_id: integer(),
      run_log_type_name: text(),
      run_log_form_type: text(),
      related_run_run_id: text(),
      related_run_run_type: text(),
      related_run_run_category: text(),
      related_run_run_date_time: tz(),
      ...personNames('related_run_started_by_'),
      related_run_locale_locale_name: text(),
      related_run_locale_business_id: text(),
      related_run_patient_contact: boolean(),
      related_run_patient_age: text(),
      related_run_transport_completed: boolean(),
      related_run_not_completed_reasons: text(),
      related_run_not_completed_details: text(),
      related_run_priority: text(),
      related_run_priority_notes: text(),
      related_run_priority_complete: boolean(),
      related_run_priority_complete_notes: text(),
      related_run_future_discussion: boolean(),
      related_run_future_discussion_notes: text(),
      related_run_future_discussion_complete: boolean(),
      related_run_purpose_of_run: text(),
      related_run_requesting_agency_or_facility: text(),
      related_run_destination_gps_location: text(),
      related_run_mile_post_or_major_roadway: text(),
      related_run_scene_cross_street_or_directions: text(),
      related_run_incident_address_street_address1: text(),
      related_run_incident_address_street_address2: text(),
      related_run_incident_address_city: text(),
      related_run_incident_address_state: text(),
      related_run_incident_address_zip_code: text(),
      related_run_incident_address_country: text(),
      related_run_timeframe_of_run: text(),
      related_run_communications_center: text(),
      related_run_patient_care_report_number: text(),
      related_run_matched_rules: jsonb(),
      ...syncedParent(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t.response_id] }),
      index('run_log_form_responses_partition_idx').on(t.run_log_type_id, t.run_log_form_type, t.company_key),
    ],
  );
  const runLogFormResponseAnswers = s.table('run_log_form_response_answers', answerColumns(), (t) => [
    primaryKey({ columns: [t.company_key, t.response_id, t.question_id] }),
  ]);
  const runLogCrew = s.table(
    'run_log_crew',
    {
      company_key: companyKey(),
      response_id: integer().notNull(),
      _ord: integer().notNull(),
      crew_role: text(),
      service_id: integer(),
      employee_number: text(),
      first_name: text(),
      last_name: text(),
      ...synced(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.response_id, t._ord] })],
  );
  const formAudit = s.table(
    'form_audit',
    {
      company_key: companyKey(),
      _key: text().notNull(),
      response_id: integer(),
      run_id: text(),
      item_id: integer(),
      answer_id: integer(),
      answer_text: text(),
      other_text: text(),
      answer_date: tz(),
      item_text: text(),
      page_number: integer(),
      section_number: integer(),
      order_number: integer(),
      audit_individual_unique_identifier: text(),
      audit_individual_first_name: text(),
      audit_individual_last_name: text(),
      insert_date: tz(),
      ...syncedParent(),
    },
    (t) => [
      primaryKey({ columns: [t.company_key, t._key] }),
      index().on(t.response_id, t.company_key),
      index().on(t.insert_date, t.company_key),
    ],
  );

  const certifications = reference('certifications', 'certification_id', 'certification_name');
  const workStatuses = reference('work_statuses', 'work_status_id', 'work_status_name');
  const departments = reference('departments', 'department_id', 'department_name');
  const workShifts = reference('work_shifts', 'work_shift_id', 'work_shift_name');
  const jobTitles = reference('job_titles', 'job_title_id', 'job_title_name');
  const locales = reference('locales', 'locale_id', 'locale_name');

  const syncState = s.table(
    'sync_state',
    {
      company_key: companyKey(),
      stream: text().notNull(),
      partition: text().notNull(),
      cursor: jsonb().notNull(),
      updated_at: tz().notNull().defaultNow(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.stream, t.partition] })],
  );
  const syncRuns = s.table(
    'sync_runs',
    {
      id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      stream: text().notNull(),
      started_at: tz().notNull().defaultNow(),
      finished_at: tz(),
      outcome: text(),
      requests: integer().notNull().default(0),
      rows: integer().notNull().default(0),
      rejects: integer().notNull().default(0),
      error: text(),
      details: jsonb(),
    },
    (t) => [index().on(t.company_key, t.stream, t.started_at)],
  );
  const syncRejects = s.table(
    'sync_rejects',
    {
      id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      stream: text().notNull(),
      raw: jsonb(),
      reason: text().notNull(),
      seen_at: tz().notNull().defaultNow(),
      run_id: bigint({ mode: 'number' }),
    },
    (t) => [index().on(t.company_key, t.stream, t.seen_at)],
  );
  const pushOutbox = s.table(
    'push_outbox',
    {
      id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
      company_key: companyKey(),
      kind: text().notNull(),
      payload: jsonb().notNull(),
      sealed: text(),
      status: text().notNull().default('pending'),
      attempts: integer().notNull().default(0),
      error: text(),
      created_at: tz().notNull().defaultNow(),
      updated_at: tz().notNull().defaultNow(),
    },
    (t) => [
      index().on(t.status, t.company_key, t.id),
      // The outbox must never hold an SSN in plain text, whatever the caller puts in the payload.
      check(
        'push_outbox_payload_without_ssn',
        sql`not jsonb_path_exists(${t.payload}, 'lax $.**.keyvalue() ? (@.key like_regex "^ssn$" flag "i")', '{}', true)`,
      ),
    ],
  );

  return {
    individuals,
    individualsHistory,
    individualJobTitles,
    supervisors,
    individualCertifications,
    individualCertificationsHistory,
    pendingCertifications,
    requiredCertificationStatus,
    requiredCertificationRequirements,
    shiftAssignments,
    assignmentChanges,
    schedules,
    scheduleShifts,
    timeOffRequests,
    timeOffApprovedHours,
    individualCourses,
    forms,
    formResponses,
    formResponseAnswers,
    runLogForms,
    runLogFormResponses,
    runLogFormResponseAnswers,
    runLogCrew,
    formAudit,
    certifications,
    workStatuses,
    departments,
    workShifts,
    jobTitles,
    locales,
    syncState,
    syncRuns,
    syncRejects,
    pushOutbox,
    ...fencingTables(s),
  };
}

export type WarehouseTables = ReturnType<typeof warehouseTables>;

export const workforce = pgSchema(DEFAULT_SCHEMA);
const tables = warehouseTables(DEFAULT_SCHEMA);

// drizzle-kit reads the exported tables of this module to generate the migrations.
export const {
  individuals,
  individualsHistory,
  individualJobTitles,
  supervisors,
  individualCertifications,
  individualCertificationsHistory,
  pendingCertifications,
  requiredCertificationStatus,
  requiredCertificationRequirements,
  shiftAssignments,
  assignmentChanges,
  schedules,
  scheduleShifts,
  timeOffRequests,
  timeOffApprovedHours,
  individualCourses,
  forms,
  formResponses,
  formResponseAnswers,
  runLogForms,
  runLogFormResponses,
  runLogFormResponseAnswers,
  runLogCrew,
  formAudit,
  certifications,
  workStatuses,
  departments,
  workShifts,
  jobTitles,
  locales,
  syncState,
  syncRuns,
  syncRejects,
  pushOutbox,
  runFences,
} = tables;
