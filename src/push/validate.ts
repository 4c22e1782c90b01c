import { z } from 'zod';
import { INDIVIDUAL_READ_ONLY, INDIVIDUAL_STATUSES, type VerificationSubmissionItem } from '../source/schemas/index.ts';
import type { PushKind } from '../warehouse/tables/push.ts';

/**
 * What HR may push, as zod schemas (the OpenAPI document is generated from them), and the rules of
 * service-spec.md checked before anything is stored. One function per kind turns a raw item into an accepted
 * change or the list of its bad fields with their reasons.
 */

const text = z.string();
const date = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/,
    'must be a date, yyyy-MM-dd',
  )
  .refine(
    (v) =>
      !Number.isNaN(Date.parse(v.slice(0, 10))) && new Date(v.slice(0, 10)).toISOString().startsWith(v.slice(0, 10)),
    'is not a calendar date',
  );
// An enum, not a union of literals: the OpenAPI document then says `type: integer, enum: [0, 1]`, and a nullable
// flag stays typed (a union gains a bare `nullable` member that generated clients read as unknown).
const flag = z.enum({ no: 0, yes: 1 }, { message: 'must be 0 or 1' });

const common = {
  changeId: z
    .string()
    .min(1, 'must not be empty')
    .max(200, 'at most 200 characters')
    .optional()
    .describe('Your id of this change: sending the same changeId again is the same change.'),
  company: z.string().min(1).optional().describe('The company key, where several companies are configured.'),
};

const individualFields = {
  ServiceId: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Names an existing individual; otherwise EmployeeNumber or UniqueNumber does.'),
  FirstName: text.min(1, 'must not be empty'),
  MiddleName: text.nullable(),
  LastName: text.min(1, 'must not be empty'),
  EmployeeNumber: text.min(1, 'must not be empty'),
  UniqueNumber: text
    .min(1, 'must not be empty')
    .describe("The individual's unique identifier (GetByUniqueIdentifier)."),
  SSN: text.regex(/^\d{9}$/, 'must be exactly 9 digits, no dashes'),
  LogonId: text.regex(/^[A-Za-z0-9]{1,30}$/, 'must be alphanumeric, at most 30 characters'),
  DateOfBirth: date,
  HireDate: date,
  Gender: z.enum(['M', 'F', ''], { message: 'must be M, F or blank' }),
  JobTitle: text,
  Department: text,
  Locale: text,
  WorkShift: text,
  IsEmployee: flag,
  IsSupervisor: flag,
  WorkStatus: text,
  Status: z.enum(INDIVIDUAL_STATUSES, { message: 'must be one of Active, LOA, Former' }),
  SupervisorId: z.number().int(),
  PrimaryEmailAddress: z.email({ message: 'must be a valid e-mail address' }),
  HomeAddressLine1: text,
  HomeAddressLine2: text.nullable(),
  HomeCity: text,
  HomeState: text,
  HomeCountry: text,
  HomeZipCode: text,
  HomePhoneNumber: text.nullable(),
  BusinessPhoneNumber: text.nullable(),
  MobilePhoneNumber: text.nullable(),
  SendWelcomeLetter: z.boolean(),
  ExcludeFromVerificationMonitoring: z.boolean(),
};

const NOT_NULL = new Set([
  'ServiceId',
  'FirstName',
  'LastName',
  'Status',
  'PrimaryEmailAddress',
  'EmployeeNumber',
  'UniqueNumber',
  'SSN',
  'LogonId',
  'SendWelcomeLetter',
  'ExcludeFromVerificationMonitoring',
  'IsSupervisor',
]);

/** An individual to insert or update (an upsert by EmployeeNumber, UniqueNumber or ServiceId). */
export const IndividualChange = z.strictObject({
  ...common,
  // null clears a field, except the ones the service requires and the keys.
  ...Object.fromEntries(
    Object.entries(individualFields).map(([k, v]) => [k, NOT_NULL.has(k) ? v.optional() : v.nullable().optional()]),
  ),
} as { [K in keyof typeof common]: (typeof common)[K] } & {
  [K in keyof typeof individualFields]: z.ZodOptional<(typeof individualFields)[K]>;
});
export type IndividualChange = z.output<typeof IndividualChange>;

const REQUIRED_ON_INSERT = ['FirstName', 'LastName', 'Status', 'PrimaryEmailAddress'] as const;

/** A credential to insert (holder + CertificationId + CertificationNumber) or update (IndividualCertificationId). */
export const CertificationChange = z.strictObject({
  ...common,
  IndividualCertificationId: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Names the credential to update; absent for an insert.'),
  ServiceId: z.number().int().positive().optional().describe("The holder's ServiceId."),
  EmployeeNumber: text
    .min(1)
    .optional()
    .describe("The holder's EmployeeNumber, when the ServiceId is not known (yet)."),
  UniqueIdentifier: text.min(1).optional().describe("The holder's unique identifier."),
  CertificationId: z.number().int().positive().optional(),
  CertificationNumber: text.min(1, 'must not be empty').optional(),
  Reference: text.nullable().optional(),
  State: text.nullable().optional(),
  Country: text.nullable().optional(),
  ActivationDate: date.nullable().optional(),
  ExpirationDate: date.nullable().optional(),
});
export type CertificationChange = z.output<typeof CertificationChange>;

/** A verification result, sent in a ValidateSubmission batch. */
export const VerificationChange = z.strictObject({
  ...common,
  RequestId: text.min(1, 'must not be empty'),
  IndividualCertificationId: z
    .union([text.regex(/^\d+$/, 'must be a credential id'), z.number().int().positive()])
    .transform(String),
  ECardID: text.nullable().optional(),
  IsVerified: z.boolean({ message: 'must be true or false' }),
  ErrorList: z.array(text).nullable().optional(),
  ECardImage: text.nullable().optional(),
  IssueDate: date.nullable().optional(),
  ExpirationDate: date.nullable().optional(),
});
export type VerificationChange = z.output<typeof VerificationChange>;

/** The service's body of one verification result (the intake fields less ours). */
export type VerificationItem = z.output<typeof VerificationSubmissionItem>;

/** Fields the service generates or derives: refused by name, so nobody believes they were set. */
export const READ_ONLY: Record<PushKind, readonly string[]> = {
  individual: [...INDIVIDUAL_READ_ONLY, 'Supervisor'],
  certification: [
    'FirstName',
    'LastName',
    'LegalFirstName',
    'LegalMiddleName',
    'LegalLastName',
    'CertificationName',
    'JobTitleId',
    'JobTitle',
    'AdditionalJobTitles',
    'UpdateDate',
    'UpdateBy',
    'IsMaintained',
    'IsDeleted',
    'IsPrimary',
    'IsNonDriver',
    'BusinessUnitId',
    'IssuingBody',
  ],
  verification: [],
};

export type Fields = Record<string, string>;

/** A change ready for the outbox: the SSN apart from the payload, which is stored as it is. */
export interface Accepted {
  kind: PushKind;
  changeId?: string;
  company?: string;
  entityKey: string;
  holderKey?: string;
  payload: Record<string, unknown>;
  ssn?: string;
}

export type Checked = { ok: true; change: Accepted } | { ok: false; changeId?: string; fields: Fields };

export interface CompanyRules {
  /** The company uses single sign-on: LogonId may be left out. */
  singleSignOn?: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function issuesOf(error: z.ZodError, raw: Record<string, unknown>): Fields {
  const out: Fields = {};
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) out[k] = 'unknown field';
      continue;
    }
    const name = issue.path.map(String).join('.') || 'body';
    if (out[name]) continue;
    const missing = issue.path.length === 1 && raw[String(issue.path[0])] === undefined;
    out[name] = missing ? 'is required' : issue.message;
  }
  return out;
}

/** Read-only fields named, then the schema's own complaints; a read-only field is never "unknown". */
function parse<T extends z.ZodType>(kind: PushKind, schema: T, raw: unknown): { data?: z.output<T>; fields: Fields } {
  if (!isObject(raw)) return { fields: { body: 'each change must be a JSON object' } };
  const fields: Fields = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (READ_ONLY[kind].includes(k)) fields[k] = `${k} is read only: the service sets it, so it cannot be pushed`;
    else rest[k] = v;
  }
  const parsed = schema.safeParse(rest);
  if (!parsed.success) Object.assign(fields, issuesOf(parsed.error, rest));
  return Object.keys(fields).length > 0 || !parsed.success ? { fields } : { data: parsed.data, fields };
}

function without<T extends Record<string, unknown>>(o: T, ...keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k) && v !== undefined) out[k] = v;
  return out;
}

const changeIdOf = (raw: unknown) => (isObject(raw) && typeof raw.changeId === 'string' ? raw.changeId : undefined);

/** The entity key of an individual: the keys a lost insert can be found by, then ServiceId. */
export function individualKey(p: {
  EmployeeNumber?: string | null;
  UniqueNumber?: string | null;
  ServiceId?: number | null;
}): string | undefined {
  if (p.EmployeeNumber) return `en:${p.EmployeeNumber}`;
  if (p.UniqueNumber) return `un:${p.UniqueNumber}`;
  if (p.ServiceId) return `sid:${p.ServiceId}`;
  return undefined;
}

export function checkIndividual(raw: unknown, rules: CompanyRules = {}): Checked {
  const { data, fields } = parse('individual', IndividualChange, raw);
  if (!data) return { ok: false, changeId: changeIdOf(raw), fields };
  if (!data.ServiceId) {
    // Without ServiceId the change may become an Insert: everything an insert needs, and a key to find it by.
    for (const f of REQUIRED_ON_INSERT) if (data[f] === undefined) fields[f] = `${f} is required`;
    if (!data.LogonId && !rules.singleSignOn)
      fields.LogonId = 'LogonId is required (the company does not use single sign-on)';
    if (!data.EmployeeNumber && !data.UniqueNumber) {
      fields.EmployeeNumber =
        'EmployeeNumber or UniqueNumber is required: it is how an insert whose answer was lost is found again (or send ServiceId to update)';
    }
  }
  if (Object.keys(fields).length > 0) return { ok: false, changeId: data.changeId, fields };
  return {
    ok: true,
    change: {
      kind: 'individual',
      changeId: data.changeId,
      company: data.company,
      entityKey: individualKey(data)!,
      payload: without(data, 'changeId', 'company', 'SSN'),
      ssn: data.SSN,
    },
  };
}

export function checkCertification(raw: unknown): Checked {
  const { data, fields } = parse('certification', CertificationChange, raw);
  if (!data) return { ok: false, changeId: changeIdOf(raw), fields };
  const holderKey = individualKey({
    EmployeeNumber: data.EmployeeNumber,
    UniqueNumber: data.UniqueIdentifier,
    ServiceId: data.ServiceId,
  });
  if (!data.IndividualCertificationId) {
    if (!holderKey) fields.ServiceId = 'the holder is required: ServiceId, EmployeeNumber or UniqueIdentifier';
    if (!data.CertificationId) fields.CertificationId = 'CertificationId is required';
    if (!data.CertificationNumber) {
      fields.CertificationNumber =
        'CertificationNumber is required: with CertificationId it is how an insert whose answer was lost is found again';
    }
  }
  if (Object.keys(fields).length > 0) return { ok: false, changeId: data.changeId, fields };
  const entityKey = data.IndividualCertificationId
    ? `ic:${data.IndividualCertificationId}`
    : `${holderKey}/c:${data.CertificationId}/${data.CertificationNumber}`;
  return {
    ok: true,
    change: {
      kind: 'certification',
      changeId: data.changeId,
      company: data.company,
      entityKey,
      holderKey: data.IndividualCertificationId ? undefined : holderKey,
      payload: without(data, 'changeId', 'company'),
    },
  };
}

export function checkVerification(raw: unknown): Checked {
  const { data, fields } = parse('verification', VerificationChange, raw);
  if (!data) return { ok: false, changeId: changeIdOf(raw), fields };
  return {
    ok: true,
    change: {
      kind: 'verification',
      changeId: data.changeId,
      company: data.company,
      entityKey: `vr:${data.RequestId}`,
      payload: without(data, 'changeId', 'company'),
    },
  };
}

export const checkers: Record<PushKind, (raw: unknown, rules?: CompanyRules) => Checked> = {
  individual: checkIndividual,
  certification: checkCertification,
  verification: checkVerification,
};
