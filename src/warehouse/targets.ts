import type { EndpointName } from '../source/endpoints.ts';

/**
 * Where each resource's items land: data, not code. The generic mapper (rows.ts) flattens an item into the
 * target table's columns; nested lists named under `children` go to child tables keyed by their parent.
 */

/** A field path (`Employee.ServiceId`), or alternatives of which the first non-null one counts. */
export type KeyField = string | readonly string[];

export interface ChildTarget {
  /** Dotted path of the nested list in the item (`RelatedRun.Crew`). */
  readonly path: string;
  /** A list inside each element whose elements become the rows (one row per element × inner element). */
  readonly each?: string;
  readonly table: string;
  /** Columns holding the parent's key, in the order of the parent's `key`; default: the same names. */
  readonly parentColumns?: readonly string[];
  /** The child's own key columns after company_key and the parent columns (`_ord` = position in the list). */
  readonly key: readonly string[];
  /** Fields hashed into the child's `_key` column when `key` names `_key`. */
  readonly keyFields?: readonly KeyField[];
}

export interface Target {
  readonly resource: string;
  readonly table: string;
  /** Key columns after company_key. */
  readonly key: readonly string[];
  /** Fields hashed into `_key` when the service gives the record no id. */
  readonly keyFields?: readonly KeyField[];
  readonly children?: readonly ChildTarget[];
  /** `*_history` table keeping every version of a row (valid_from / valid_to). */
  readonly history?: string;
  /** A boolean field that marks the item deleted at the source. */
  readonly deletedFlag?: string;
  /** Envelope fields copied into every item of the page (the form id of a form response list). */
  readonly envelopeFields?: readonly string[];
  /** Another target filled from the envelope in the same transaction (forms from FormId/FormTitle). */
  readonly envelopeTarget?: { readonly target: string; readonly fields: readonly string[] };
  /** Query parameters of a stream partition → the column that holds them. */
  readonly partitionColumns?: Readonly<Record<string, string>>;
  /** Explicit per-resource override of the item before the generic mapping; none is needed today. */
  readonly prepare?: (item: Record<string, unknown>) => Record<string, unknown>;
}

const jobTitles = { path: 'AdditionalJobTitles', table: 'individual_job_titles', key: ['job_title_id'] } as const;
const answers = (table: string): ChildTarget => ({ path: 'Answers', table, key: ['question_id'] });

const byId = (resource: string, table: string, id: string): Target => ({ resource, table, key: [id] });

export const targets = {
  individuals: {
    resource: 'individuals',
    table: 'individuals',
    key: ['service_id'],
    children: [jobTitles],
    history: 'individuals_history',
  },
  supervisors: byId('supervisors', 'supervisors', 'service_id'),
  individualCertifications: {
    resource: 'individualCertifications',
    table: 'individual_certifications',
    key: ['individual_certification_id'],
    history: 'individual_certifications_history',
    deletedFlag: 'IsDeleted',
  },
  pendingCertifications: byId('pendingCertifications', 'pending_certifications', 'individual_certification_id'),
  requiredCertificationStatus: {
    resource: 'requiredCertificationStatus',
    table: 'required_certification_status',
    key: ['employment_service_id'],
    children: [
      {
        path: 'CredentialRequirements',
        each: 'Requirements',
        table: 'required_certification_requirements',
        key: ['_key'],
        keyFields: ['JobTitle.JobTitleId', 'Locale.LocaleId', 'Requirement'],
      },
    ],
  },
  shiftAssignments: byId('shiftAssignments', 'shift_assignments', 'shift_assignment_id'),
  assignmentChanges: {
    resource: 'assignmentChanges',
    table: 'assignment_changes',
    key: ['_key'],
    keyFields: ['ShiftAssignmentId', 'EventType', 'EventTimeStamp'],
  },
  schedules: {
    resource: 'schedules',
    table: 'schedules',
    key: ['schedule_id'],
    children: [{ path: 'Shifts', table: 'schedule_shifts', key: ['shift_id'] }],
  },
  timeOffRequests: {
    resource: 'timeOffRequests',
    table: 'time_off_requests',
    key: ['_key'],
    keyFields: [
      ['Employee.ServiceId', 'Employee.EmployeeNumber'],
      'StartDateTime',
      'EndDateTime',
      'RequestedLeaveType',
      'RequestedDateTime',
    ],
    children: [
      { path: 'ApprovedHours', table: 'time_off_approved_hours', parentColumns: ['time_off_request_key'], key: ['_ord'] },
    ],
  },
  individualCourses: byId('individualCourses', 'individual_courses', 'individual_course_id'),
  runLogForms: byId('runLogForms', 'run_log_forms', 'form_id'),
  formAudit: {
    resource: 'formAudit',
    table: 'form_audit',
    key: ['_key'],
    keyFields: ['ResponseId', 'ItemId', 'AnswerId', 'InsertDate', 'RunId'],
  },
  forms: byId('forms', 'forms', 'form_id'),
  formResponses: {
    resource: 'formResponses',
    table: 'form_responses',
    key: ['response_id'],
    children: [answers('form_response_answers')],
    envelopeFields: ['FormId'],
    envelopeTarget: { target: 'forms', fields: ['FormId', 'FormTitle'] },
    partitionColumns: { FormId: 'form_id' },
  },
  runLogFormResponses: {
    resource: 'runLogFormResponses',
    table: 'run_log_form_responses',
    key: ['response_id'],
    children: [
      answers('run_log_form_response_answers'),
      { path: 'RelatedRun.Crew', table: 'run_log_crew', key: ['_ord'] },
    ],
    envelopeFields: ['RunLogTypeId', 'RunLogTypeName', 'RunLogFormType'],
    partitionColumns: { RunTypeId: 'run_log_type_id', FormType: 'run_log_form_type' },
  },
  certifications: byId('certifications', 'certifications', 'certification_id'),
  workStatuses: byId('workStatuses', 'work_statuses', 'work_status_id'),
  departments: byId('departments', 'departments', 'department_id'),
  workShifts: byId('workShifts', 'work_shifts', 'work_shift_id'),
  jobTitles: byId('jobTitles', 'job_titles', 'job_title_id'),
  locales: byId('locales', 'locales', 'locale_id'),
} as const satisfies Record<string, Target>;

export type TargetName = keyof typeof targets;

/** Every synced resource of the endpoint catalog has a target (compile-time check). */
export type SyncedEndpoint = Extract<EndpointName, TargetName>;

export function targetByName(name: string): Target {
  const t = (targets as Record<string, Target>)[name];
  if (!t) throw new Error(`no warehouse target named "${name}"`);
  return t;
}
