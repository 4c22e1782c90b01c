import { allTableInfos } from './catalog.ts';
import { DEFAULT_SCHEMA } from './schema.ts';

/**
 * What every table, view and column means, for analysts reading `\d+` or a BI tool's catalog. Every migrate
 * writes them where the warehouse's COMMENTs differ (comments.ts), and a test checks that the database ends up
 * with a comment on every table, view and column.
 */

export const TABLE_DOCS: Record<string, string> = {
  companies:
    'The companies the sync serves: added with wfsync companies or the ops server, or mirrored from WFS_COMPANIES / WFS_API_KEY (managed_by environment). Running processes read it again within WFS_COMPANIES_REFRESH_SECONDS.',
  run_fences:
    'One row per company and job: the fence token, raised each time a run of the job takes its lock. Pages of a run whose token is not the latest are refused.',
  individuals: 'Individuals (employees and others) of the company, latest version (GET /Individual/GetList).',
  individuals_history:
    'Every version of each individual row: valid_from is when this content was first synced, valid_to when it was replaced or deleted (null while current).',
  individual_job_titles:
    "An individual's additional job titles (Individual.AdditionalJobTitles), one row per job title.",
  supervisors: 'Individuals who are supervisors (GET /Individual/GetSupervisorList).',
  individual_certifications:
    'Credentials held by individuals, latest version (GET /IndividualCertification/GetIndividualCertificationList).',
  individual_certifications_history:
    'Every version of each credential row: valid_from is when this content was first synced, valid_to when it was replaced or deleted (null while current).',
  pending_certifications:
    'Credentials awaiting verification, with the verification provider outcome (GetIndividualCertificationPendingList).',
  required_certification_status:
    'Employees whose required credentials the service reports (GetRequiredCertificationStatus), one row per employee.',
  required_certification_requirements:
    'Required credentials per employee, job title, locale and requirement, with their status and the credential fulfilling them.',
  shift_assignments:
    'Shift assignments (GET /ShiftAssignment/GetList); an assignment without assignee is an open shift.',
  assignment_changes:
    'Assignment change records (Created, Assigned, Unassigned, Deleted) from GET /ShiftAssignment/GetAssignmentChanges.',
  schedules: 'Schedules (GET /Schedule/GetList).',
  schedule_shifts: 'Shifts of each schedule (Schedule.Shifts).',
  time_off_requests: 'Time off requests (GET /TimeOffRequest/GetList).',
  time_off_approved_hours:
    'Hours approved for a time off request, per approved policy and leave type (TimeOffRequest.ApprovedHours).',
  individual_courses: 'Course attempts and course submissions of individuals (GET /IndividualCourse/GetList).',
  forms: 'Forms whose responses are synced, as named by the form response list (FormId, FormTitle).',
  form_responses: 'Responses to generic forms (GET /FormResponse/GetList).',
  form_response_answers: 'Answers of generic form responses, one row per question answered.',
  run_log_forms: 'Run-log forms (GET /RunLogForm/GetList).',
  run_log_form_responses:
    'Run-log form responses attached to runs (GET /RunLogFormResponse/GetList); RelatedRun flattened into related_run_* columns.',
  run_log_form_response_answers: 'Answers of run-log form responses, one row per question answered.',
  run_log_crew: 'Crew members of the run of a run-log form response (RelatedRun.Crew).',
  form_audit: 'Answer audit history of forms (GET /RunLog/GetFormAuditList), one row per audited answer.',
  certifications: 'Reference list of certifications (credential types).',
  work_statuses: 'Reference list of work statuses.',
  departments: 'Reference list of departments.',
  work_shifts: 'Reference list of work shifts.',
  job_titles: 'Reference list of job titles.',
  locales: 'Reference list of locales (business units).',
  sync_state: 'Checkpoint of each stream partition, written in the same transaction as the page it completes.',
  sync_runs: 'One row per stream run: when, outcome, counts and error.',
  sync_rejects:
    'Records that failed their schema, one row per record and reason however often read, with the raw payload (SSN removed); the stream went on.',
  events:
    "Each company's timeline: what happened to the company and its streams (added, paused, a stream failing or recovering, a field the service added, a re-sync), one row per event.",
  access_grants:
    "Which of the operator's Postgres roles read which companies' rows (wfsync access); the row-level security policy of every table with a company_key reads it.",
  schema_changes:
    "Fields the service sends that no column maps yet (kept in each row's _extra), one row per company, stream and JSON path: when first and last seen, how many records carried it, its JSON type and a masked example, and when it stopped coming.",
  personal_data_policies:
    "What is stored of each personal field of the service, per company or as the default (company_key '*'): keep, hash (HMAC-SHA-256 hex under the warehouse's personal-data key) or block (never stored). A field without a row is kept.",
  personal_data_versions:
    "One row per company (and '*' for the default): raised with each policy change or erasure; pages written under an older version are refused, and the stored rows are rewritten up to applied_version.",
  personal_data_suppressions:
    'People erased on request or by retention: a keyed hash of their ServiceId or EmployeeNumber, never the value. Later syncs store their records with every personal field blocked.',
  erasures:
    'One row per erasure of a person (wfsync erase, the API, or retention): when, who asked and the rows rewritten per table; no personal data.',
  field_classes:
    "What each field the service added is, per company or as the default (company_key '*'): not-personal, personal (an employee's) or patient (a patient's or health data). A company's own row wins over the default's; a field no column maps and no class names is unclassified. personal and patient put the field under the personal-data policies.",
  new_field_modes:
    "Per company, or as the default (company_key '*'): keep stores the values of unclassified fields in _extra; hold stores none until the field is classified (its name, type and counts stay in schema_changes).",
  resync_requests:
    'Re-syncs of one stream an operator asked for (wfsync resync, the API, the dashboard): when asked, started and finished, and the outcome.',
  usage_daily:
    'Requests sent to the service per company, stream and UTC day, added to as each run ends; kept when the runs are pruned.',
  audit:
    'Every change an operator, an API token or the housekeeping made, from the CLI, a page or the API (wfsync audit): when, who, what, to which company and with what outcome; never a personal value.',
  sessions:
    "Dashboard sessions, shared by every ops server of the warehouse: a hash of the session cookie's id, who signed in, their role, and when; a row deleted is a session ended everywhere.",
  sign_ins:
    'Sign-ins through the identity provider under way: each waits for its callback for ten minutes at most, and is deleted when it comes (a replayed callback finds nothing).',
  api_tokens:
    'Named API tokens (wfsync tokens): the scopes and companies each may act on; the token itself is stored only as a hash. A token deleted is refused at once by every server.',
  push_outbox:
    'Changes queued for pushing to the service (individuals, credentials, verification results) and their status.',
  push_models:
    "Push models: an operator's SQL query of the desired state of individuals or credentials, diffed by key against the warehouse and pushed on a cron (wfsync push model).",
  push_model_runs:
    'One row per run of a push model: rows the query read, how many were unchanged, changed, queued or refused, and whether the run stopped over its cap.',
};

/** Column meanings by name, wherever the name occurs. */
const FIELD_DOCS: Record<string, string> = {
  company_key: 'Key of the company account this row was synced from; part of every key.',
  _synced_at: 'When this row was last written by a sync.',
  _deleted_at:
    'When the row was found deleted at the source (a flag, a Deleted change, or missing from a complete read); null while the source still has it.',
  _extra:
    'Every field of the source record that no column maps, with its original nesting (so fields the service adds are kept).',
  _hash:
    'Hash of the row content (and its child rows), excluding bookkeeping columns; a new history version is written only when it changes.',
  _key: 'Key of a record the service gives no id: sha-256 (hex, first 32) of the fields that identify it.',
  _ord: 'Position of the element in its list in the source record.',
  valid_from: 'Start of the period in which this version was the current one (when it was first synced).',
  valid_to: 'End of the period in which this version was current; null while it is current.',
  individual_id: 'IndividualId: the service id of the person, the same in every linked company.',
  service_id: "ServiceId: the service's unique numeric person identifier.",
  company_id: 'CompanyId of the individual.',
  first_name: 'First name.',
  middle_name: 'Middle name.',
  last_name: 'Last name.',
  legal_first_name: 'Legal first name (read only at the service).',
  legal_middle_name: 'Legal middle name (read only at the service).',
  legal_last_name: 'Legal last name (read only at the service).',
  employee_number: 'Employee number, unique within the company.',
  unique_number: 'Unique number, unique within the company and its linked companies.',
  unique_identifier: 'Unique identifier of the person within the organization.',
  logon_id: 'Logon id.',
  date_of_birth: 'Date of birth.',
  hire_date: 'Hire date.',
  gender: 'Gender: M, F or blank.',
  job_title_id: 'Id of the job title.',
  job_title: 'Job title name.',
  job_title_name: 'Job title name.',
  department: 'Department name.',
  locale: 'Locale name.',
  work_shift: 'Work shift name.',
  is_employee: '1 when an employee, 0 when not.',
  is_supervisor: '1 when a supervisor, 0 when not.',
  work_status: 'Work status name.',
  supervisor_id: 'IndividualId of the primary supervisor.',
  supervisor_name: 'Last/first name of the primary supervisor (sent by the service as Supervisor or SupervisorName).',
  primary_email_address: 'Primary e-mail address.',
  home_address_line1: 'Home address, line 1.',
  home_address_line2: 'Home address, line 2.',
  home_city: 'Home city.',
  home_state: 'Home state.',
  home_country: 'Home country.',
  home_zip_code: 'Home ZIP code.',
  home_phone_number: 'Home phone number.',
  business_phone_number: 'Business phone number.',
  mobile_phone_number: 'Mobile phone number.',
  exclude_from_verification_monitoring: 'True when the individual is excluded from verification monitoring.',
  individual_certification_id: 'IndividualCertificationId: id of the credential at the service.',
  business_unit_id: 'Business unit id, customer-provided.',
  additional_job_titles:
    'Additional job titles of the individual (JobTitleId, JobTitleName), as sent with the credential.',
  certification_id: 'Id of the certification (credential type).',
  certification_name: 'Name of the certification (credential type).',
  certification_number: 'Number of the credential.',
  state: 'State the credential relates to.',
  country: 'Country the credential relates to.',
  activation_date: 'Date from which the credential is valid.',
  expiration_date: 'Date on which the credential expires.',
  reference: 'Short note on the credential.',
  update_date: 'Last update at the service.',
  update_by: 'Name of the person who last updated the credential.',
  is_maintained: 'True when the credential is marked maintained.',
  is_deleted: 'True when the service reports the credential deleted (IsDeleted).',
  issuing_body: 'Issuing body of the credential.',
  is_primary: 'True when the credential is required by the business unit and job title combination.',
  is_non_driver: "Non-driver flag, only for driver's license type credentials.",
  verification_status: 'Status reported by the verification provider.',
  issuing_body_failure_reason: 'Failure reasons reported for the issuing body (JSON list of strings).',
  locale_id: 'Id of the locale.',
  locale_name: 'Locale (business unit) name.',
  requirements_met: 'True when no required credential of this job title (and locale) is expired or missing.',
  requirement: 'Human-readable description of the required credential or credential type.',
  requirement_status: 'Status of the requirement: Missing, Current, Expired or NotMaintained.',
  shift_assignment_id: 'ShiftAssignmentId: id of the shift assignment.',
  schedule_id: 'Id of the schedule.',
  schedule_name: 'Name of the schedule.',
  shift_id: 'Id of the shift.',
  shift_name: 'Name of the shift.',
  start_date_time: 'Start date-time.',
  end_date_time: 'End date-time.',
  type: 'Assignment type: Shift Assignment or Ride Along.',
  vehicle_name: 'Vehicle assigned; null when none.',
  clock_in_date_time: 'When the assignee clocked in; null until then.',
  clock_out_date_time: 'When the assignee clocked out; null until then or when not clocked in.',
  event_type: 'Change: Created, Assigned, Unassigned or Deleted.',
  event_time_stamp: 'When the change happened.',
  requested_leave_policy: 'Leave policy requested.',
  requested_leave_type: 'Leave type requested.',
  requested_date_time: 'When the time off was requested.',
  reviewed_date_time: 'When the request was reviewed.',
  requested_hours: 'Hours requested.',
  time_off_request_key: 'The _key of the time off request.',
  approved_leave_policy: 'Leave policy the hours were approved under.',
  approved_leave_type: 'Leave type the hours were approved under.',
  approved_hours: 'Hours approved.',
  individual_course_id: 'IndividualCourseId: id of the course record.',
  course_name: 'Course name.',
  course_description: 'Course description.',
  credit: 'Credit of the course.',
  start_date: 'Start date.',
  end_date: 'End date.',
  author_instructor: 'Author or instructor (comma-delimited when several).',
  course_id: 'Id of the course.',
  exam_start_date: 'Exam start date, for a course with an exam.',
  exam_end_date: 'Exam end date, for a course with an exam.',
  form_id: 'Id of the form.',
  form_title: 'Title of the form.',
  form_type: 'Run-log form type (Debrief, Utilization, ChartReview).',
  archived: 'True when the form is archived.',
  insert_date: 'When the record was inserted at the service.',
  response_id: 'ResponseId: id of the form response.',
  attached_to_type:
    'What the response is attached to (IndividualRecord, QualityImprovement, EducationRecord, EmployeeHealth, FormsOnly, RunLog).',
  question_id: 'Id of the question.',
  question_type: 'Question type (Textbox, Number, Yes/No, Checkboxes, ...); decides the shape of answer_value.',
  question_text: 'Label of the question shown to users.',
  question_alias: 'Optional identifier of the question.',
  page_number: 'Page number of the question in the form.',
  section_name: 'Section of the form.',
  answer_value: 'The answer as sent (JSON; its shape depends on question_type).',
  answer_value_matches_type:
    'True when answer_value has the shape its question_type promises; otherwise it is kept raw.',
  run_log_type_id: 'Run-log type id of the partition the response was read for.',
  run_log_type_name: 'Run-log type name.',
  run_log_form_type: 'Run-log form type: Debrief, Utilization or ChartReview.',
  crew_role: 'Role of the crew member on the run.',
  item_id: 'Id of the form item (question).',
  answer_id: 'Id of the answer; -1 means no response.',
  answer_text: 'Answer text.',
  other_text: 'Text of the Other option.',
  answer_date: 'Answer of a date-time question.',
  item_text: 'Text of the form item (question).',
  section_number: 'Section number.',
  order_number: 'Order of the item in its section.',
  work_status_id: 'Id of the work status.',
  work_status_name: 'Name of the work status.',
  department_id: 'Id of the department.',
  department_name: 'Name of the department.',
  work_shift_id: 'Id of the work shift.',
  work_shift_name: 'Name of the work shift.',
  stream: 'Stream name (see the stream catalog).',
  partition: 'Partition of the stream (form, run type × form type), or - when it has one.',
  cursor: 'Where the stream partition reached (JSON, its shape depends on the stream).',
  updated_at: 'When the row was last changed.',
  id: 'Generated id.',
  finished_at: 'When the run finished; null while running.',
  requests: 'Requests made to the service.',
  rows: 'Records received.',
  rejects: 'Records that failed their schema.',
  error: 'Error message, when failed.',
  details: 'Other figures of the run (JSON).',
  raw: 'Raw record as received (JSON, SSN removed).',
  seen_at: 'When a read last refused the record.',
  record_key:
    "The refused record's key as its row has it (a JSON list of the key values), or payload: and a hash of the payload when it gives no key.",
  first_seen_at: 'When a read first refused the record.',
  times_seen: 'How many pages refused the record for this reason.',
  field_path:
    "Path of the field: a field of the record by its name, as it sits in the row's _extra (read it with _extra->>'Name'); a field of the elements of a list stored as child rows after the list's path (Answers.Comment: the child rows' _extra->>'Comment').",
  json_type: 'JSON type of the field when first seen: string, number, boolean, object, array or null.',
  example: 'A value the field had, with every string masked (letters as x, digits as 9) so no personal value is kept.',
  field_first_seen_at: 'When a read first returned a record with the field.',
  field_last_seen_at: 'When a read last returned a record with the field.',
  records_seen: 'Records read with the field, over every read.',
  reads_without: 'Complete reads in a row whose records all lacked the field (three and it is gone).',
  gone_at:
    'When the field was found gone: absent from every record of three complete reads in a row; null while it comes.',
  resolved_at: 'When the record was next written (it passed); null while it is still refused.',
  payload: 'The change to push (JSON); never holds an SSN in plain text (a CHECK constraint refuses it).',
  sealed: 'Sensitive fields of the change (such as SSN), encrypted with the secret key; never plain text.',
  attempts: 'Push attempts so far.',
  change_id:
    "The caller's id of the change (or one made at intake); unique per company, so a resend is the same change.",
  entity_key:
    'The entity the change applies to (en:EmployeeNumber, un:UniqueNumber, sid:ServiceId, ic:IndividualCertificationId, a holder and certification, or vr:RequestId).',
  seq: "Order of the change among its entity's changes.",
  holder_key: "For a credential: its holder's entity key; the credential waits for that individual's pending changes.",
  fields: "The service's (or intake's) reasons per field for a refusal (JSON).",
  coalesced_into: 'Id of the later change of the same entity this one was merged into; its outcome is that change.',
  next_attempt_at: 'When the change may be tried again.',
  applied_at: 'When the service applied the change.',
  notified_at: 'When the webhook acknowledged the final state.',
  notify_attempts: 'Webhook deliveries tried for the final state.',
  notify_next_at: 'When the next webhook delivery is due (null: none due).',
  happened_at: 'When the event happened.',
  personal:
    'Whether the role also reads the personal columns (names, e-mail, phones, address, birth date, ...); false: only the other columns.',
  granted_at: 'When the role was granted this company.',
  changed_at: 'When this was last changed.',
  class:
    "not-personal (readable with the rest of the row), personal (an employee's data) or patient (a patient's or health data): both under the personal-data policies.",
  classified_at: 'When the field was given this class.',
  mode: 'keep (the values of unclassified fields are stored in _extra) or hold (none is stored until classified).',
  version: 'Raised by one with each policy change or erasure for the company.',
  applied_version:
    'The version up to which the stored rows have been rewritten; below version while a rewrite is under way or was interrupted.',
  person_hash:
    "HMAC-SHA-256 hex under the personal-data key of the erased person's id (service_id:N or employee_number:X): recognizes their records, reveals nothing.",
  erasure_id: 'The erasure (erasures.id) that put the person on the list.',
  suppressed_at: 'When the person was put on the list.',
  erased_at: 'When the erasure ran.',
  requested_by: 'Who asked: the operator or API caller, or retention.',
  cause: 'Why: request (wfsync erase or the API) or retention (WFS_KEEP_FORMER_PERSONAL_DAYS).',
  counts: 'Rows rewritten per table (JSON); no personal data.',
  via: 'Where the re-sync was asked for: cli, api or dashboard.',
  requested_at: 'When the re-sync was asked for.',
  day: 'The UTC day.',
  runs: 'Runs that ended that day.',
  event:
    'What happened (see EVENTS in src/warehouse/events.ts): company_added, stream_failing, field_appeared, resync_requested, ...',
  query: "The model's SQL query of the desired state; its columns are named by the service's fields.",
  key_field:
    'The service field a model row is matched by: EmployeeNumber, UniqueNumber, ServiceId or IndividualCertificationId.',
  service_fields: "The model query's columns as service fields, checked when the model was added.",
  cron: 'When the model runs (a cron expression, UTC); null: only when run by hand.',
  max_changes: 'Most rows a run may change: a run with more differing rows queues nothing and fails.',
  model_name: 'Name of the push model the run belongs to.',
  rows_read: "Rows the model's query returned.",
  unchanged: 'Rows equal to the warehouse on every field the model names.',
  changed: 'Rows that differ from the warehouse (or whose key it lacks).',
  queued: 'Changes put in the push outbox by the run.',
  refused: 'Changed rows push validation refused (not queued).',
  over_cap: 'True when more rows differed than max_changes: nothing was queued.',
  detail:
    'What else the event says (JSON): the error of a failing stream, the JSON path of a new field, ...; never a personal value.',
};

/** Nested objects flattened into prefixed columns: prefix → what the object is. */
const PREFIX_DOCS: Record<string, string> = {
  assignee_: 'Assignee (null for an open shift)',
  employee_: 'Employee who requested the time off',
  reviewed_by_: 'Reviewer of the request',
  employment_: 'Employee (Employment)',
  job_title_: 'Job title requiring the credentials (JobTitle)',
  locale_: 'Locale the requirement is specific to (Locale)',
  fulfilling_certification_: 'Credential fulfilling the requirement (FulfillingCertification; null when Missing)',
  submitted_by_: 'Original submitter (SubmittedBy)',
  assigned_to_: 'Current assignee of the response (AssignedTo)',
  related_individual_: 'Individual the response relates to (RelatedIndividual)',
  related_employee_health_event_: 'Employee health event the response is attached to (RelatedEmployeeHealthEvent)',
  related_employee_health_event_related_individual_: 'Individual of the employee health event',
  related_quality_improvement_incident_:
    'Quality improvement incident the response is attached to (RelatedQualityImprovementIncident)',
  related_shift_: 'Shift the response relates to (RelatedShift)',
  related_run_: 'Run the response is attached to (RelatedRun)',
  related_run_started_by_: 'Creator of the run (RelatedRun.StartedBy)',
  related_run_locale_: 'Locale of the run (RelatedRun.Locale)',
  related_run_incident_address_: 'Incident address of the run (RelatedRun.IncidentAddress)',
  audit_individual_: 'Person who made the audited change (AuditIndividual, sent as InsertBy)',
};

/** Flattened fields whose own names say little without a word more. */
const NESTED_FIELD_DOCS: Record<string, string> = {
  health_event_id: 'id',
  health_event_type: 'type',
  event_date_time: 'date-time',
  incident_id: 'id',
  incident_type: 'type',
  incident_date_time: 'date-time',
  shift_date: 'date',
  run_id: 'id',
  run_type: 'type',
  run_category: 'category',
  run_date_time: 'date-time',
  patient_contact: 'patient contact',
  patient_age: 'patient age (NotSpecified, Neonatal, Pediatric, Adult)',
  transport_completed: 'transport completed (null when not specified)',
  not_completed_reasons: 'reasons not completed',
  not_completed_details: 'details of why not completed',
  priority: 'priority',
  priority_notes: 'priority notes',
  priority_complete: 'priority complete',
  priority_complete_notes: 'priority complete notes',
  future_discussion: 'future discussion',
  future_discussion_notes: 'future discussion notes',
  future_discussion_complete: 'future discussion complete',
  purpose_of_run: 'purpose of the run',
  requesting_agency_or_facility: 'requesting agency or facility',
  destination_gps_location: 'destination GPS location',
  mile_post_or_major_roadway: 'mile post or major roadway',
  scene_cross_street_or_directions: 'scene cross street or directions',
  timeframe_of_run: 'timeframe of the run',
  communications_center: 'communications center',
  patient_care_report_number: 'patient care report number',
  matched_rules: 'matched rules (JSON list of strings)',
  street_address1: 'street address, line 1',
  street_address2: 'street address, line 2',
  city: 'city',
  zip_code: 'ZIP code',
  business_id: 'business id',
  job_title_id: 'job title id',
  job_title_name: 'job title name',
  locale_id: 'locale id',
  locale_name: 'locale name',
  business_unit_id: 'business unit id',
};

const VIEW_DOCS: Record<string, { doc: string; columns: Record<string, string> }> = {
  v_credentials_expiring: {
    doc: 'Credentials (not deleted) expiring within the next 90 days, bucketed by 30/60/90 days.',
    columns: {
      days_left: 'Days from today until the expiration date.',
      bucket: 'Expires within 30, 60 or 90 days (the smallest that applies).',
    },
  },
  v_requirements_not_met: {
    doc: 'Employees not meeting the credential requirements of a job title (and locale): one row per requirement that is not current, with its status.',
    columns: {},
  },
  v_open_shifts: {
    doc: "Open shifts (no employee assigned) by schedule and day, told by the assignee's ServiceId alone so that every role counts the same; a ride-along seat is not a shift to fill. The day is the local date the service gave for the shift start.",
    columns: {
      day: 'Day of the shift start, as the service wrote it (start_date_time_local_date).',
      open_shifts: 'Number of open shift assignments.',
      shift_names: 'Names of the open shifts, comma-separated.',
    },
  },
  v_shifts_without_current_credential: {
    doc: "Shifts worked (clocked in) by an employee who had no current credential for a requirement of the shift's job title that day. A credential counts when the version known at clock-in (individual_certifications_history; the earliest version stands for all time before it) was active and not expired on the shift date.",
    columns: {
      shift_date: 'Day of the shift start, as the service wrote it (start_date_time_local_date).',
      reason: 'Missing (no matching credential), Expired, or NotYetActive (activation after the shift date).',
      credential_id: 'IndividualCertificationId of the closest matching credential, if any.',
      credential_activation_date: 'Activation date of the closest matching credential.',
      credential_expiration_date: 'Expiration date of the closest matching credential.',
    },
  },
  v_approved_leave_hours: {
    doc: 'Approved leave hours by approved policy and month of the request start, by the local date the service gave.',
    columns: {
      month: 'First day of the month of the request start.',
      hours: 'Sum of approved hours.',
      requests: 'Number of approved requests.',
    },
  },
  v_headcount_daily: {
    doc: "People by day, department, job title, status and employee or not, from individuals_history: a version counts on each day it was current at the day's end (days of the session time zone), from the day it was first synced; days before the first sync are not known. Only groups with someone in them.",
    columns: {
      day: 'The day (session time zone) at whose end the people are counted.',
      department: 'Department of the people counted.',
      job_title: 'Job title of the people counted.',
      status: 'Status of the people counted (Active, LOA, Former).',
      is_employee: 'True for employees, false for others (volunteers, contractors).',
      headcount: 'Number of individuals in the group at the end of the day.',
    },
  },
  v_hires_and_exits_monthly: {
    doc: "Hires (by the service's hire date) and exits (a version of individuals_history saying Former after one that did not, in the month it was synced) by department and month. A person first synced as Former left before the history began and is not counted.",
    columns: {
      month: 'First day of the month.',
      department: "Department of the person: today's for hires, at the exit for exits.",
      hires: 'Individuals whose hire date falls in the month.',
      exits: 'Individuals who became Former in the month.',
    },
  },
  v_hours_weekly: {
    doc: 'Per person and week (Monday first, by the local date the service gave for the shift start): shifts, scheduled hours (start to end of the assigned shifts) against worked hours (clock-in to clock-out), and overtime past 40 worked hours.',
    columns: {
      employee_number: 'Employee number of the assignee.',
      first_name: 'First name of the assignee.',
      last_name: 'Last name of the assignee.',
      week: 'Monday of the week of the shift start, as the service wrote it (start_date_time_local_date).',
      shifts: 'Shift assignments of the person in the week.',
      scheduled_hours: 'Hours from start to end of the assigned shifts.',
      worked_hours: 'Hours from clock-in to clock-out of the shifts with both.',
      overtime_hours: 'Worked hours past 40 in the week.',
    },
  },
  v_credential_compliance: {
    doc: 'Per department and job title, the share of required credentials (required_certification_requirements of the people the required-status list names) that are current: today, and at the end of each of the last 12 months. A requirement is current on a day when a credential of the person named as the requirement or its fulfilling credential, in the version known that day (individual_certifications_history; the earliest version stands for all time before it), was active and not expired.',
    columns: {
      period: 'today (as of the current date) or month (as of the last day of a month).',
      as_of: 'The day the requirements are judged on.',
      department: "Department of the people (today's).",
      required: 'Requirements of the people of the department and job title.',
      current: 'Of those, the requirements met by a current credential.',
      share_current: 'current / required.',
    },
  },
  v_time_off_monthly: {
    doc: 'Time off per leave type and month of the request start (by the local date the service gave): requests and hours requested (by requested leave type), approved requests and hours approved (by approved leave type).',
    columns: {
      month: 'First day of the month of the request start.',
      leave_type: 'Leave type: requested for the requested figures, approved for the approved ones.',
      requests: 'Requests of the leave type.',
      requested_hours: 'Hours requested.',
      approved_requests: 'Approved requests with hours of the leave type.',
      approved_hours: 'Hours approved.',
    },
  },
  v_course_completion: {
    doc: 'Course attempts, completions (status Passed or Approved) and the share completed, per course and month of the course start.',
    columns: {
      month: 'First day of the month of the course start.',
      attempts: 'Course records started in the month.',
      completions: 'Of those, the ones passed or approved.',
      share_completed: 'completions / attempts.',
    },
  },
  v_form_answers: {
    doc: 'Answers of form and run-log form responses, one row per answer, with typed columns by question type.',
    columns: {
      form_kind: 'form (generic form response) or run_log (run-log form response).',
      answer_text:
        'Text answers (Textbox, Comments Box, Name, Custom Dropdown, Service Dropdown List) and the selected value of Dropdown List / Radio Buttons.',
      answer_number: 'Number answers.',
      answer_boolean: 'Yes/No and True/False answers.',
      answer_timestamp: 'Date/Time answers.',
      answer_json: 'Structured answers (lists and objects: checkboxes, matrices, address, documents, signature).',
    },
  },
};

/** An example query per analyst view, shown under the view in docs/warehouse.md. */
export const VIEW_EXAMPLES: Record<string, string> = {
  v_headcount_daily: `-- Employees on each of the last 30 days, by department
select day, department, sum(headcount) as people
from workforce.v_headcount_daily
where is_employee and status <> 'Former' and day > current_date - 30
group by day, department order by day, department;`,
  v_hires_and_exits_monthly: `-- Net change per department this year
select department, sum(hires) as hires, sum(exits) as exits, sum(hires) - sum(exits) as net
from workforce.v_hires_and_exits_monthly
where month >= date_trunc('year', current_date)
group by department order by net;`,
  v_hours_weekly: `-- Who worked overtime last week
select employee_number, first_name, last_name, scheduled_hours, worked_hours, overtime_hours
from workforce.v_hours_weekly
where week = date_trunc('week', current_date - 7)::date and overtime_hours > 0
order by overtime_hours desc;`,
  v_credential_compliance: `-- Departments and job titles below 95% compliant today
select department, job_title_name, required, current, share_current
from workforce.v_credential_compliance
where period = 'today' and share_current < 0.95
order by share_current;`,
  v_time_off_monthly: `-- Hours approved against requested per leave type, last 12 months
select leave_type, sum(requested_hours) as requested, sum(approved_hours) as approved
from workforce.v_time_off_monthly
where month > current_date - interval '12 months'
group by leave_type order by requested desc;`,
  v_course_completion: `-- Courses least often completed this year
select course_name, sum(attempts) as attempts, sum(completions) as completions,
       round(sum(completions)::numeric / sum(attempts), 3) as share
from workforce.v_course_completion
where month >= date_trunc('year', current_date)
group by course_name order by share;`,
};

/** The columns the mapper derives from a date or date-time's text, by suffix (see tables/columns.ts). */
const COMPANION_DOCS: Record<string, (base: string) => string> = {
  _local_date: (base) =>
    `Calendar day of ${base} as the service wrote it, in its local time (the date part of the text it sent); views count days by it.`,
  _utc_offset: (base) => `UTC offset the service wrote ${base} with (+HH:MM, Z as +00:00); null when it sent none.`,
  _instant: (base) =>
    `Full value of ${base} when the service sent a date-time with an offset rather than a bare date; null otherwise.`,
};

function companionDoc(column: string): string | undefined {
  for (const [suffix, doc] of Object.entries(COMPANION_DOCS)) {
    if (!column.endsWith(suffix)) continue;
    const base = column.slice(0, -suffix.length);
    if (FIELD_DOCS[base] || prefixedDoc(base)) return doc(base);
  }
  return undefined;
}

/**
 * Column names whose meaning differs from table to table ("run" is a sync run in sync_rejects, an EMS run in
 * form_audit): FIELD_DOCS names none of them, and each such column's doc is keyed `table.column` below.
 */
export const PER_TABLE_NAMES: ReadonlySet<string> = new Set([
  'run_id',
  'status',
  'outcome',
  'reason',
  'kind',
  'created_at',
  'started_at',
  'role',
  'field',
  'action',
  'name',
  'paused',
  'actor',
]);

/** Columns by table: those of PER_TABLE_NAMES, and those whose table says more than FIELD_DOCS does. */
export const TABLE_COLUMN_DOCS: Record<string, string> = {
  'individuals.status': 'Status of the individual at the service: Active, LOA or Former.',
  'individuals_history.status': 'Status of the individual at the service: Active, LOA or Former.',
  'supervisors.status': 'Status of the supervisor at the service: Active, LOA or Former.',
  'time_off_requests.status': 'Status of the request at the service: Pending, Approved, Denied or Canceled.',
  'individual_courses.status': 'Status of the completed course, as the service reports it.',
  'form_responses.status': "Status of the response, one of the form's own statuses (each company defines them).",
  'run_log_form_responses.status':
    "Status of the response, one of the form's own statuses (each company defines them).",
  'form_audit.run_id': 'RunId: id of the EMS run the answered form belongs to; null for a generic form.',
  'sync_rejects.run_id': 'The sync run (sync_runs.id) whose read last refused the record.',
  'sync_rejects.reason': 'Why the record was rejected.',
  'sync_runs.started_at': 'When the run started.',
  'sync_runs.outcome':
    'Outcome of the run: ok, failed, or interrupted (its process stopped first; recorded by the next process that opens the warehouse); null while running.',
  'resync_requests.started_at': "When the re-sync's run started; null while it waits.",
  'resync_requests.outcome':
    "Outcome of the re-sync's run: ok, failed, interrupted (its process stopped first) or off (the stream was turned off for the company); null until it ends.",
  'push_outbox.kind':
    'Kind of change: individual, certification (credential insert or update) or verification (result).',
  'push_outbox.status':
    'Where the change stands: queued, sending, in_doubt (sent and its answer lost: looked up before any resend), applied, refused (by validation or the service; fields says why) or failed (given up; error says why).',
  'push_outbox.created_at': 'When the change was queued.',
  'push_models.name': 'Name of the push model, unique.',
  'push_models.kind': 'What the model sets: individuals or certifications (credentials).',
  'push_models.paused': 'True while the model is paused: its cron does not run it.',
  'push_models.created_at': 'When the model was added.',
  'push_model_runs.started_at': 'When the model run started.',
  'push_model_runs.outcome':
    'Outcome of the model run: ok, or failed (more rows differed than max_changes, or its query failed: nothing queued); null while running.',
  'access_grants.role': "A Postgres role of the operator (by name) that reads this company's rows.",
  'personal_data_policies.field':
    'A personal field of the service, by its name (PrimaryEmailAddress, DateOfBirth, ...; see PERSONAL_FIELDS in src/source/schemas/personal.ts).',
  'personal_data_policies.action':
    'keep (stored as sent), hash (HMAC-SHA-256 hex under the personal-data key: equal values stay equal) or block (never stored).',
  'events.actor':
    "Who made the change (the audit's actor: oidc:<e-mail or subject>, token:<name>, cli:<user> or system); null for what the sync itself saw.",
  'run_fences.company_key': 'The company the job runs for.',
  'run_fences.job': 'The scheduled job (jobs/), e.g. shift-assignments.',
  'run_fences.token': "Raised by one each time a run takes the job's lock; the run's pages carry the value it got.",
  'run_fences.holder': 'The queue job id of the run that took the latest token.',
  'run_fences.taken_at': 'When the latest token was taken.',
  'companies.company_key': 'Key of the company account: the company_key of every row synced from it.',
  'companies.base_url': 'Base URL of the service for this company.',
  'companies.api_key_sealed':
    "The company's API key, encrypted with the secret key (AES-256-GCM under WFS_SECRET_KEY); never plain text.",
  'companies.form_ids': 'Generic form ids whose responses are synced.',
  'companies.run_type_ids': 'Run-log type ids whose form responses are synced.',
  'companies.rate_limit': "The API key's budget: requests per period, such as 100/60s.",
  'companies.paused': 'True while the company is paused: no run starts, and runs under way stop after their page.',
  'companies.managed_by':
    'environment (mirrored from WFS_COMPANIES or WFS_API_KEY at start-up; change it there) or operator (wfsync companies, the ops server).',
  'companies.created_at': 'When the company was added.',
  'companies.updated_at': 'When the company was last changed (paused, resumed, key rotated, mirrored).',
  'companies.streams_off':
    'Streams the company does not want in the warehouse (wfsync companies streams KEY --off): no request is sent for them and no run is scheduled; a stream others read is off only with them.',
  'audit.at': 'When the change was asked for.',
  'audit.actor':
    'Who: oidc:<e-mail or subject> (signed in through the identity provider), token:<name> (an API token, or the dashboard token), cli:<operating-system user>, or system (the housekeeping).',
  'audit.action':
    "What, in the CLI's words (see AUDIT_ACTIONS in src/warehouse/audit.ts): companies add, personal-data set, erase, access grant, resync, push, tokens create, sign-in, ...",
  'audit.company_key': 'The company the change was to; null for what concerns no one company (a token, a sign-in).',
  'audit.target':
    'What in the company: a stream, a role, a field list, a ServiceId, a token, change ids; never a personal value.',
  'audit.outcome':
    'started (no outcome recorded yet, or the process ended first), done, refused (the reason says why) or failed (an unexpected error; the log has it).',
  'audit.reason': 'Why it was refused or failed; null when done.',
  'sessions.session_hash': "SHA-256 (base64url) of the session cookie's random id: the cookie cannot be made from it.",
  'sessions.actor': 'Who signed in: oidc:<e-mail or subject>, or token:dashboard (WFS_DASHBOARD_TOKEN).',
  'sessions.role':
    'viewer (reads every page), operator (also runs, re-syncs, pauses and resumes, retries pushes, runs push models) or admin (everything).',
  'sessions.signed_in_at': 'When the session began; it ends WFS_SESSION_MAX_HOURS after.',
  'sessions.used_at': 'When the session was last used (to the minute); it ends WFS_SESSION_IDLE_MINUTES after.',
  'sign_ins.state_hash': 'SHA-256 (base64url) of the state sent to the identity provider.',
  'sign_ins.nonce': 'The nonce the ID token must carry.',
  'sign_ins.code_verifier': 'The PKCE code verifier the authorization code is redeemed with.',
  'sign_ins.started_at': 'When the sign-in was sent to the identity provider.',
  'api_tokens.name': "The token's name, as the audit's actor token:<name> gives it.",
  'api_tokens.token_hash': 'SHA-256 (base64url) of the token: it cannot be read back.',
  'api_tokens.scopes':
    'What it may do: push (push and dry-run changes), read (push status, timelines, usage and events), admin (companies, personal data, erasures, access, the audit).',
  'api_tokens.companies': 'The companies it may act on; empty: every company.',
  'api_tokens.created_at': 'When the token was made.',
  'api_tokens.created_by': 'Who made it (an audit actor).',
  'api_tokens.last_used_at': 'When a request last used it (to the minute); null: never.',
  'field_classes.field':
    'A field the service sends that no column maps, by its path as schema_changes.field_path names it (BadgeNumber; a field of a list stored as child rows after the list, Answers.Comment).',
};

/** A column's doc: by table and column first; by its bare name only for a name that means one thing everywhere. */
export function columnDoc(table: string, column: string, sqlType: string): string {
  const doc =
    TABLE_COLUMN_DOCS[`${table}.${column}`] ||
    (PER_TABLE_NAMES.has(column) ? undefined : FIELD_DOCS[column] || prefixedDoc(column) || companionDoc(column));
  if (!doc) throw new Error(`no description for ${table}.${column}`);
  return sqlType === 'timestamp with time zone'
    ? `${doc} An instant: the source's UTC offset is normalized away.`
    : doc;
}

function prefixedDoc(column: string): string | undefined {
  const prefix = Object.keys(PREFIX_DOCS)
    .filter((p) => column.startsWith(p))
    .sort((a, b) => b.length - a.length)[0];
  if (!prefix) return undefined;
  const rest = column.slice(prefix.length);
  const field = NESTED_FIELD_DOCS[rest] ?? FIELD_DOCS[rest]?.replace(/\.$/, '').replace(/^./, (c) => c.toLowerCase());
  return field ? `${PREFIX_DOCS[prefix]}: ${field}.` : undefined;
}

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** What a table or view says of itself, and of each of its columns (by name). */
export interface RelationDocs {
  name: string;
  kind: 'table' | 'view';
  doc: string;
  columns: Map<string, string>;
}

/** The docs of every table of the schema (views: see viewDocs). */
export function tableDocs(only?: readonly string[]): RelationDocs[] {
  return allTableInfos()
    .filter((t) => !only || only.includes(t.name))
    .map((t) => {
      const doc = TABLE_DOCS[t.name];
      if (!doc) throw new Error(`no description for table ${t.name}`);
      const columns = new Map(t.columns.map((c) => [c.name, columnDoc(t.name, c.name, c.sqlType)]));
      return { name: t.name, kind: 'table', doc, columns };
    });
}

/** The docs of the views, given their columns (name → SQL type) as the database reports them. */
export function viewDocs(views: Record<string, Record<string, string>>): RelationDocs[] {
  return Object.entries(views).map(([name, types]) => {
    const v = VIEW_DOCS[name];
    if (!v) throw new Error(`no description for view ${name}`);
    const columns = new Map(Object.entries(types).map(([c, type]) => [c, v.columns[c] ?? columnDoc(name, c, type)]));
    return { name, kind: 'view', doc: v.doc, columns };
  });
}

/** The COMMENT statement of a table or view (`column` undefined) or of one of its columns. */
export function commentStatement(
  schema: string,
  r: Pick<RelationDocs, 'name' | 'kind'>,
  column: string | undefined,
  doc: string,
): string {
  const relation = `"${schema}"."${r.name}"`;
  return column === undefined
    ? `COMMENT ON ${r.kind === 'view' ? 'VIEW' : 'TABLE'} ${relation} IS ${literal(doc)};`
    : `COMMENT ON COLUMN ${relation}."${column}" IS ${literal(doc)};`;
}

const statementsOf = (schema: string, docs: readonly RelationDocs[]) =>
  docs.flatMap((r) => [
    commentStatement(schema, r, undefined, r.doc),
    ...[...r.columns].map(([c, doc]) => commentStatement(schema, r, c, doc)),
  ]);

/** COMMENT statements for every table and column of the schema (views: see viewCommentStatements). */
export function tableCommentStatements(schema = DEFAULT_SCHEMA, only?: readonly string[]): string[] {
  return statementsOf(schema, tableDocs(only));
}

/** COMMENT statements for the views, given their columns (name → SQL type) as the database reports them. */
export function viewCommentStatements(
  views: Record<string, Record<string, string>>,
  schema = DEFAULT_SCHEMA,
): string[] {
  return statementsOf(schema, viewDocs(views));
}

export const VIEW_NAMES = Object.keys(VIEW_DOCS);
