import { z } from 'zod';
import type { Lane } from '../ratelimit/types.ts';
import * as s from './schemas/index.ts';

/**
 * The one description of the service's endpoints (service-spec.md, "Endpoints").
 * The sandbox serves from it, the client calls from it, the sync catalog names its entries.
 */

export type ParamType = 'int' | 'string' | 'bool' | 'date' | 'datetime' | 'enum' | 'csv';

export interface QueryParam {
  readonly name: string;
  readonly type: ParamType;
  readonly required?: boolean;
  readonly default?: string | number | boolean;
  /** Allowed values of an `enum` param, or of each item of a `csv` param. */
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
}

export type Scope = 'individuals' | 'certifications';

export type Resend = 'blind' | 'check-first';

/** How a response carries its items. */
export type Response =
  /** Paged envelope; the item count is under `ResultCount` or, for the form lists, `Results`. */
  | { readonly kind: 'envelope'; readonly countField: 'ResultCount' | 'Results'; readonly extras?: readonly string[] }
  /** A plain array, unpaged. */
  | { readonly kind: 'array' }
  /** An array, or a single object: the spec does not say which (reference lists). */
  | { readonly kind: 'array-or-object' }
  /** One item (by-key lookups and writes). */
  | { readonly kind: 'one' }
  /** A JSON boolean. */
  | { readonly kind: 'boolean' }
  /** Nothing to read (201 Created with no body shown). */
  | { readonly kind: 'empty' };

export interface Endpoint<Item extends z.ZodType = z.ZodType, Q extends readonly QueryParam[] = readonly QueryParam[]> {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly query: Q;
  readonly response: Response;
  readonly item: Item;
  readonly body?: z.ZodType;
  /** Success status of a write. */
  readonly status?: 200 | 201;
  readonly scope?: Scope;
  /** Resources with an earlier representation served when `api-version` is absent. */
  readonly earlier?: 'individual' | 'certification';
  /**
   * Whether a request whose answer was lost may be sent again as it is. `blind`: a repeat changes nothing (reads;
   * an Update replaces the sent fields). `check-first`: a repeat may act twice (an Insert), so whoever sends it
   * must look first whether the lost attempt was applied. Default: `blind` for GET, `check-first` for POST.
   */
  readonly resend?: Resend;
  /** The limiter lane a request takes unless the caller names one: writes go in the push lane. */
  readonly lane?: Lane;
  /** A date range the service refuses when longer than `days` (the course list's 31 days). */
  readonly maxRange?: { readonly start: string; readonly end: string; readonly days: number };
}

export const PAGE_LIMIT_MAX = 200;

/** Offset and Limit follow the same rules everywhere. */
export const PAGE_PARAMS = [
  { name: 'Offset', type: 'int', default: 0, min: 0 },
  { name: 'Limit', type: 'int', default: PAGE_LIMIT_MAX, min: 1, max: PAGE_LIMIT_MAX },
] as const satisfies readonly QueryParam[];

const STATUSES = s.INDIVIDUAL_STATUSES;
const employeeFilters = [
  { name: 'ServiceId', type: 'int' },
  { name: 'UniqueIdentifier', type: 'string' },
  { name: 'EmployeeNumber', type: 'string' },
] as const satisfies readonly QueryParam[];

const envelope = { kind: 'envelope', countField: 'ResultCount' } as const;

function endpoint<const Item extends z.ZodType, const Q extends readonly QueryParam[]>(
  e: Endpoint<Item, Q>,
): Endpoint<Item, Q> {
  return e;
}

const referenceList = <Item extends z.ZodType>(name: string, path: string, item: Item) =>
  endpoint({ name, method: 'GET', path, query: [], response: { kind: 'array-or-object' }, item });

export const endpoints = {
  individuals: endpoint({
    name: 'individuals',
    method: 'GET',
    path: '/Individual/GetList',
    query: [{ name: 'ExcludeStatuses', type: 'csv', values: STATUSES }],
    response: { kind: 'array' },
    item: s.Individual,
    scope: 'individuals',
    earlier: 'individual',
  }),
  supervisors: endpoint({
    name: 'supervisors',
    method: 'GET',
    path: '/Individual/GetSupervisorList',
    query: [],
    response: { kind: 'array' },
    item: s.Supervisor,
    scope: 'individuals',
  }),
  individualByServiceId: endpoint({
    name: 'individualByServiceId',
    method: 'GET',
    path: '/Individual/GetByServiceId',
    query: [{ name: 'serviceId', type: 'int', required: true }],
    response: { kind: 'one' },
    item: s.Individual,
    scope: 'individuals',
    earlier: 'individual',
  }),
  individualByUniqueIdentifier: endpoint({
    name: 'individualByUniqueIdentifier',
    method: 'GET',
    path: '/Individual/GetByUniqueIdentifier',
    query: [{ name: 'uniqueIdentifier', type: 'string', required: true }],
    response: { kind: 'one' },
    item: s.Individual,
    scope: 'individuals',
    earlier: 'individual',
  }),
  individualByEmployeeNumber: endpoint({
    name: 'individualByEmployeeNumber',
    method: 'GET',
    path: '/Individual/GetByEmployeeNumber',
    query: [{ name: 'employeeNumber', type: 'string', required: true }],
    response: { kind: 'one' },
    item: s.Individual,
    scope: 'individuals',
    earlier: 'individual',
  }),
  individualExists: endpoint({
    name: 'individualExists',
    method: 'GET',
    path: '/Individual/Exists',
    query: [{ name: 'uniqueIdentifier', type: 'string', required: true }],
    response: { kind: 'boolean' },
    item: z.boolean(),
    scope: 'individuals',
  }),
  individualInsert: endpoint({
    name: 'individualInsert',
    method: 'POST',
    path: '/Individual/Insert',
    query: [],
    response: { kind: 'one' },
    item: s.Individual,
    body: s.IndividualInsert,
    status: 201,
    resend: 'check-first',
    lane: 'push',
    scope: 'individuals',
    earlier: 'individual',
  }),
  individualUpdate: endpoint({
    name: 'individualUpdate',
    method: 'POST',
    path: '/Individual/Update',
    query: [],
    response: { kind: 'one' },
    item: s.Individual,
    body: s.IndividualUpdate,
    status: 200,
    resend: 'blind',
    lane: 'push',
    scope: 'individuals',
    earlier: 'individual',
  }),
  individualCertifications: endpoint({
    name: 'individualCertifications',
    method: 'GET',
    path: '/IndividualCertification/GetIndividualCertificationList',
    query: [
      { name: 'primaryOnly', type: 'bool' },
      { name: 'updatedSince', type: 'date' },
      ...employeeFilters,
      { name: 'IncludeDeleted', type: 'bool', default: false },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.IndividualCertification,
    scope: 'certifications',
    earlier: 'certification',
  }),
  pendingCertifications: endpoint({
    name: 'pendingCertifications',
    method: 'GET',
    path: '/IndividualCertification/GetIndividualCertificationPendingList',
    query: [...PAGE_PARAMS],
    response: envelope,
    item: s.PendingCertification,
    scope: 'certifications',
  }),
  certificationInsert: endpoint({
    name: 'certificationInsert',
    method: 'POST',
    path: '/IndividualCertification/Insert',
    query: [],
    response: { kind: 'one' },
    item: s.IndividualCertification,
    body: s.IndividualCertificationInsert,
    status: 200,
    resend: 'check-first',
    lane: 'push',
    scope: 'certifications',
  }),
  certificationUpdate: endpoint({
    name: 'certificationUpdate',
    method: 'POST',
    path: '/IndividualCertification/Update',
    query: [],
    response: { kind: 'one' },
    item: s.IndividualCertification,
    body: s.IndividualCertificationUpdate,
    status: 200,
    resend: 'blind',
    lane: 'push',
    scope: 'certifications',
  }),
  requiredCertificationStatus: endpoint({
    name: 'requiredCertificationStatus',
    method: 'GET',
    path: '/IndividualCertification/GetRequiredCertificationStatus',
    query: [...employeeFilters, ...PAGE_PARAMS],
    response: envelope,
    item: s.EmployeeRequiredCredentialStatus,
    scope: 'certifications',
  }),
  validateSubmission: endpoint({
    name: 'validateSubmission',
    method: 'POST',
    path: '/IndividualCertification/ValidateSubmission',
    query: [],
    response: { kind: 'empty' },
    item: z.unknown(),
    body: z.array(s.VerificationSubmissionItem).min(1, 'at least one verification result is required'),
    status: 201,
    // Each result carries its RequestId, and the service keeps one result per RequestId.
    resend: 'blind',
    lane: 'push',
    scope: 'certifications',
  }),
  shiftAssignments: endpoint({
    name: 'shiftAssignments',
    method: 'GET',
    path: '/ShiftAssignment/GetList',
    query: [
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      { name: 'OnlyShiftAssignment', type: 'bool', default: false },
      { name: 'OnlyRideAlong', type: 'bool', default: false },
      { name: 'OnlyOpenShifts', type: 'bool', default: false },
      { name: 'OnlyFilledShifts', type: 'bool', default: false },
      { name: 'OnlyClockedInShifts', type: 'bool', default: false },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.ShiftAssignment,
  }),
  assignmentChanges: endpoint({
    name: 'assignmentChanges',
    method: 'GET',
    path: '/ShiftAssignment/GetAssignmentChanges',
    query: [
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.AssignmentChange,
  }),
  schedules: endpoint({
    name: 'schedules',
    method: 'GET',
    path: '/Schedule/GetList',
    query: [],
    response: { kind: 'array' },
    item: s.Schedule,
  }),
  timeOffRequests: endpoint({
    name: 'timeOffRequests',
    method: 'GET',
    path: '/TimeOffRequest/GetList',
    query: [
      { name: 'StartDateTime', type: 'datetime', required: true },
      { name: 'EndDateTime', type: 'datetime', required: true },
      { name: 'ServiceId', type: 'int' },
      { name: 'EmployeeNumber', type: 'string' },
      { name: 'UniqueNumber', type: 'string' },
      { name: 'RequestStatus', type: 'csv', values: s.TIME_OFF_STATUSES },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.TimeOffRequest,
  }),
  individualCourses: endpoint({
    name: 'individualCourses',
    method: 'GET',
    path: '/IndividualCourse/GetList',
    query: [
      { name: 'startDate', type: 'date', required: true },
      { name: 'endDate', type: 'date', required: true },
      { name: 'statusOption', type: 'int', required: true, min: 0, max: 3 },
      { name: 'individualId', type: 'int', default: 0 },
    ],
    response: { kind: 'array' },
    item: s.IndividualCourse,
    maxRange: { start: 'startDate', end: 'endDate', days: 31 },
  }),
  runLogForms: endpoint({
    name: 'runLogForms',
    method: 'GET',
    path: '/RunLogForm/GetList',
    query: [],
    response: { kind: 'array' },
    item: s.RunLogForm,
  }),
  formAudit: endpoint({
    name: 'formAudit',
    method: 'GET',
    path: '/RunLog/GetFormAuditList',
    query: [
      { name: 'FormId', type: 'int' },
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.FormAudit,
  }),
  formResponses: endpoint({
    name: 'formResponses',
    method: 'GET',
    path: '/FormResponse/GetList',
    query: [
      { name: 'FormId', type: 'int', required: true },
      { name: 'StartDate', type: 'date', required: true },
      { name: 'EndDate', type: 'date', required: true },
      { name: 'UpdatedSince', type: 'date' },
      ...PAGE_PARAMS,
    ],
    response: { kind: 'envelope', countField: 'Results', extras: ['FormId', 'FormTitle'] },
    item: s.FormResponse,
  }),
  runLogFormResponses: endpoint({
    name: 'runLogFormResponses',
    method: 'GET',
    path: '/RunLogFormResponse/GetList',
    query: [
      { name: 'RunTypeId', type: 'int', required: true },
      { name: 'FormType', type: 'enum', required: true, values: s.RUN_LOG_FORM_TYPES },
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      { name: 'UpdatedSince', type: 'datetime' },
      ...PAGE_PARAMS,
    ],
    response: {
      kind: 'envelope',
      countField: 'Results',
      extras: ['RunLogTypeId', 'RunLogTypeName', 'RunLogFormType'],
    },
    item: s.RunLogFormResponse,
  }),
  certifications: referenceList('certifications', '/Certification/GetCertificationList', s.Certification),
  workStatuses: referenceList('workStatuses', '/WorkStatus/GetList', s.WorkStatus),
  departments: referenceList('departments', '/Department/GetList', s.Department),
  workShifts: referenceList('workShifts', '/WorkShift/GetList', s.WorkShift),
  jobTitles: referenceList('jobTitles', '/JobTitle/GetList', s.JobTitle),
  locales: referenceList('locales', '/Locale/GetList', s.Locale),
} as const;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export type ItemOf<E extends Endpoint> = z.output<E['item']>;

/** The spec's API version, sent as `api-version` on every request. */
export const API_VERSION = '2.0';
export const AUTH_HEADER = 'Authorization-Token';

type ValueOf<T extends ParamType> = T extends 'int'
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'date' | 'datetime'
      ? string | Date
      : T extends 'csv'
        ? string | readonly string[]
        : string;

type PageParamName = (typeof PAGE_PARAMS)[number]['name'];

/** The typed query of an endpoint (page controls excluded: the client drives them). */
export type QueryOf<E extends Endpoint> = {
  [P in E['query'][number] as P extends { required: true } ? P['name'] : never]: ValueOf<P['type']>;
} & {
  [P in E['query'][number] as P extends { required: true } ? never : Exclude<P['name'], PageParamName>]?: ValueOf<
    P['type']
  >;
};

/** How a request to `e` may be repeated after its answer was lost (see Endpoint.resend). */
export function resendOf(e: Endpoint): Resend {
  return e.resend ?? (e.method === 'GET' ? 'blind' : 'check-first');
}

export function isPaged(e: Endpoint): boolean {
  return e.response.kind === 'envelope';
}

export function endpointByPath(method: string, path: string): Endpoint | undefined {
  const lower = path.toLowerCase();
  return Object.values(endpoints).find((e) => e.method === method && e.path.toLowerCase() === lower);
}
