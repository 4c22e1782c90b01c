import { createHash } from 'node:crypto';
import type { z } from 'zod';
import type { EndpointName } from '../resources/index.ts';
import {
  INDIVIDUAL_READ_ONLY,
  IndividualCertificationInsert,
  IndividualCertificationUpdate,
  IndividualInsert,
  IndividualUpdate,
  VerificationSubmissionItem,
  type Individual,
} from '../source/schemas/index.ts';
import { refuse } from './queries.ts';
import { certRecord, coreOf, refreshCertsOf, refreshSupervised, supervisorName, type CertCore } from './records.ts';
import type { Outcome, WriteEndpoint } from './service.ts';
import type { SandboxStore } from './store.ts';
import { dateOnly } from './time.ts';

/**
 * The write side: POST bodies checked as service-spec.md says, refused with 400 and one message per field.
 * The sandbox company does not use single sign-on, so LogonId is required.
 */

type Fields = Record<string, string>;

function invalid(fields: Fields) {
  return refuse(400, 'invalid_parameters', `The request is invalid: ${Object.keys(fields).join(', ')}.`, fields);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Zod issues as field → message; a missing value reads "X is required" rather than a type error. */
function fieldsOf(error: z.ZodError, body: Record<string, unknown>, prefix = ''): Fields {
  const out: Fields = {};
  for (const issue of error.issues) {
    const key = issue.path.map(String).join('.') || 'body';
    const name = prefix + key;
    if (out[name]) continue;
    const value = issue.path.length === 1 ? body[String(issue.path[0])] : undefined;
    out[name] =
      issue.path.length === 1 && (value === undefined || value === null) ? `${key} is required` : issue.message;
  }
  return out;
}

const dateOf = (v: string | null | undefined) => (v ? v.slice(0, 10) : null);

function ssnHash(ssn: string): string {
  return createHash('sha256').update(ssn).digest('hex');
}

type IndividualBody = z.output<typeof IndividualInsert>;

/** Checks that need the store: uniqueness, reference names, supervisor. Runs on raw bodies too. */
function crossCheck(
  store: SandboxStore,
  body: Partial<Record<keyof IndividualBody, unknown>>,
  self: number | undefined,
): Fields {
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const p = {
    LogonId: text(body.LogonId),
    EmployeeNumber: text(body.EmployeeNumber),
    UniqueNumber: text(body.UniqueNumber),
    JobTitle: text(body.JobTitle),
    Department: text(body.Department),
    Locale: text(body.Locale),
    WorkShift: text(body.WorkShift),
    WorkStatus: text(body.WorkStatus),
    SupervisorId: typeof body.SupervisorId === 'number' ? body.SupervisorId : undefined,
  };
  const fields: Fields = {};
  const taken = (owner: number | undefined) => owner !== undefined && owner !== self;
  if (!p.LogonId) fields.LogonId = 'LogonId is required (single sign-on is not used by this company)';
  else if (taken(store.byLogonId.get(p.LogonId.toLowerCase())))
    fields.LogonId = `LogonId ${p.LogonId} is already used in this company`;
  if (p.EmployeeNumber && taken(store.byEmployeeNumber.get(p.EmployeeNumber)))
    fields.EmployeeNumber = `EmployeeNumber ${p.EmployeeNumber} is already used in this company`;
  if (p.UniqueNumber && taken(store.byUniqueNumber.get(p.UniqueNumber)))
    fields.UniqueNumber = `UniqueNumber ${p.UniqueNumber} is already used in this company`;
  if (p.JobTitle && !store.jobTitleByName(p.JobTitle)) fields.JobTitle = `Unknown job title: ${p.JobTitle}`;
  if (p.Department && !store.departments.some((d) => d.DepartmentName === p.Department))
    fields.Department = `Unknown department: ${p.Department}`;
  if (p.Locale && !store.localeByName(p.Locale)) fields.Locale = `Unknown locale: ${p.Locale}`;
  if (p.WorkShift && !store.workShifts.some((w) => w.WorkShiftName === p.WorkShift))
    fields.WorkShift = `Unknown work shift: ${p.WorkShift}`;
  if (p.WorkStatus && !store.workStatuses.some((w) => w.WorkStatusName === p.WorkStatus))
    fields.WorkStatus = `Unknown work status: ${p.WorkStatus}`;
  if (p.SupervisorId != null && !supervisorById(store, p.SupervisorId))
    fields.SupervisorId = `No supervisor with IndividualId ${p.SupervisorId}`;
  return fields;
}

function supervisorById(store: SandboxStore, individualId: number): Individual | undefined {
  for (const i of store.individuals.values()) if (i.IndividualId === individualId && i.IsSupervisor === 1) return i;
  return undefined;
}

/** The body without the read-only fields, which the service ignores when they are sent. */
function writable(body: Record<string, unknown>, keep: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const ignored = new Set<string>([...INDIVIDUAL_READ_ONLY, 'ServiceId', 'Supervisor']);
  for (const k of keep) ignored.delete(k);
  for (const [k, v] of Object.entries(body)) if (!ignored.has(k)) out[k] = v;
  return out;
}

function individualFrom(
  store: SandboxStore,
  p: IndividualBody,
  base: Pick<
    Individual,
    | 'IndividualId'
    | 'ServiceId'
    | 'LegalFirstName'
    | 'LegalMiddleName'
    | 'LegalLastName'
    | 'AdditionalJobTitles'
    | 'IsSupervisor'
    | 'ExcludeFromVerificationMonitoring'
  >,
): Individual {
  const title = p.JobTitle ? store.jobTitleByName(p.JobTitle) : undefined;
  const sup = p.SupervisorId != null ? supervisorById(store, p.SupervisorId) : undefined;
  return {
    IndividualId: base.IndividualId,
    ServiceId: base.ServiceId,
    CompanyId: store.companyId,
    FirstName: p.FirstName,
    MiddleName: p.MiddleName ?? null,
    LastName: p.LastName,
    LegalFirstName: base.LegalFirstName ?? null,
    LegalMiddleName: base.LegalMiddleName ?? null,
    LegalLastName: base.LegalLastName ?? null,
    EmployeeNumber: p.EmployeeNumber ?? null,
    UniqueNumber: p.UniqueNumber ?? null,
    LogonId: p.LogonId ?? null,
    DateOfBirth: dateOf(p.DateOfBirth),
    HireDate: dateOf(p.HireDate),
    Gender: p.Gender ?? null,
    JobTitleId: title?.record.JobTitleId ?? null,
    JobTitle: title?.record.JobTitleName ?? null,
    AdditionalJobTitles: base.AdditionalJobTitles ?? [],
    Department: p.Department ?? null,
    Locale: p.Locale ?? null,
    WorkShift: p.WorkShift ?? null,
    IsEmployee: p.IsEmployee ?? null,
    IsSupervisor: p.IsSupervisor ?? base.IsSupervisor ?? 0,
    WorkStatus: p.WorkStatus ?? null,
    Status: p.Status,
    SupervisorId: sup ? sup.IndividualId : null,
    SupervisorName: supervisorName(sup),
    PrimaryEmailAddress: p.PrimaryEmailAddress,
    HomeAddressLine1: p.HomeAddressLine1 ?? null,
    HomeAddressLine2: p.HomeAddressLine2 ?? null,
    HomeCity: p.HomeCity ?? null,
    HomeState: p.HomeState ?? null,
    HomeCountry: p.HomeCountry ?? null,
    HomeZipCode: p.HomeZipCode ?? null,
    HomePhoneNumber: p.HomePhoneNumber ?? null,
    BusinessPhoneNumber: p.BusinessPhoneNumber ?? null,
    MobilePhoneNumber: p.MobilePhoneNumber ?? null,
    ExcludeFromVerificationMonitoring:
      p.ExcludeFromVerificationMonitoring ?? base.ExcludeFromVerificationMonitoring ?? false,
  };
}

function insertIndividual(store: SandboxStore, body: unknown): Outcome<object | null> {
  if (!isObject(body)) return refuse(400, 'invalid_request', 'The body must be an Individual object.');
  const parsed = IndividualInsert.safeParse(writable(body, []));
  if (!parsed.success) return invalid({ ...crossCheck(store, body, undefined), ...fieldsOf(parsed.error, body) });
  const cross = crossCheck(store, parsed.data, undefined);
  if (Object.keys(cross).length > 0) return invalid(cross);
  const seq = store.next.individual++;
  const ind = individualFrom(store, parsed.data, {
    IndividualId: 70_001 + seq * 3,
    ServiceId: 2_000_001 + seq,
    LegalFirstName: null,
    LegalMiddleName: null,
    LegalLastName: null,
    AdditionalJobTitles: [],
    IsSupervisor: 0,
    ExcludeFromVerificationMonitoring: false,
  });
  store.putIndividual(ind);
  if (parsed.data.SSN) store.ssnHashes.set(ind.ServiceId, ssnHash(parsed.data.SSN));
  record(store, 'individualInsert', ind);
  store.bump();
  return { ok: true, value: ind };
}

/**
 * service-spec.md: "the body replaces the sent fields, so the reliable workflow is to fetch ..., change the
 * needed fields and post the result". The sandbox therefore takes the body as the new individual: a writable
 * field left out becomes null, except IsSupervisor and ExcludeFromVerificationMonitoring ("on update an omitted
 * value keeps the existing value") and SSN, which is never returned and so cannot be posted back.
 */
function updateIndividual(store: SandboxStore, body: unknown): Outcome<object | null> {
  if (!isObject(body)) return refuse(400, 'invalid_request', 'The body must be an Individual object.');
  const parsed = IndividualUpdate.safeParse(writable(body, ['ServiceId']));
  if (!parsed.success) {
    const fields = fieldsOf(parsed.error, body);
    if (fields.ServiceId) return invalid(fields);
  }
  const serviceId = Number(body.ServiceId);
  const old = store.individual(serviceId);
  if (!old) return refuse(404, 'not_found', `No individual with ServiceId ${String(body.ServiceId)}.`);
  if (!parsed.success) return invalid({ ...crossCheck(store, body, serviceId), ...fieldsOf(parsed.error, body) });
  const cross = crossCheck(store, parsed.data, serviceId);
  if (Object.keys(cross).length > 0) return invalid(cross);
  const ind = individualFrom(store, parsed.data, old);
  store.putIndividual(ind);
  if (parsed.data.SSN) store.ssnHashes.set(serviceId, ssnHash(parsed.data.SSN));
  refreshCertsOf(store, ind);
  refreshSupervised(store, ind);
  record(store, 'individualUpdate', ind);
  store.bump();
  return { ok: true, value: ind };
}

function insertCertification(store: SandboxStore, body: unknown): Outcome<object | null> {
  if (!isObject(body)) return refuse(400, 'invalid_request', 'The body must be an IndividualCertification object.');
  const parsed = IndividualCertificationInsert.safeParse(body);
  if (!parsed.success) return invalid(fieldsOf(parsed.error, body));
  const p = parsed.data;
  const ind = store.individual(p.ServiceId);
  const fields: Fields = {};
  if (!ind) fields.ServiceId = `No individual with ServiceId ${p.ServiceId}`;
  if (!store.certification(p.CertificationId))
    fields.CertificationId = `No certification with CertificationId ${p.CertificationId}`;
  if (!ind || Object.keys(fields).length > 0) return invalid(fields);
  const core: CertCore = {
    IndividualCertificationId: 900_000 + ++store.next.cert,
    CertificationId: p.CertificationId,
    CertificationNumber: p.CertificationNumber ?? null,
    State: null,
    Country: null,
    ActivationDate: dateOf(p.ActivationDate),
    ExpirationDate: dateOf(p.ExpirationDate),
    Reference: p.Reference ?? null,
    UpdateDate: dateOnly(store.nowMs),
    UpdateBy: 'API',
    IsMaintained: true,
    IsDeleted: false,
    IssuingBody: null,
    IsNonDriver: false,
  };
  const cert = certRecord(store, core, ind);
  store.putCert(cert);
  // A credential entered from outside awaits verification like any other new one.
  store.pending.set(cert.IndividualCertificationId, { VerificationStatus: 'Pending', IssuingBodyFailureReason: null });
  record(store, 'certificationInsert', cert);
  store.bump();
  return { ok: true, value: cert };
}

/** Update carries the earlier representation's fields; the ones sent replace the stored values. */
function updateCertification(store: SandboxStore, body: unknown): Outcome<object | null> {
  if (!isObject(body)) return refuse(400, 'invalid_request', 'The body must be an IndividualCertification object.');
  const parsed = IndividualCertificationUpdate.safeParse(body);
  if (!parsed.success) return invalid(fieldsOf(parsed.error, body));
  const p = parsed.data;
  const old = store.certs.get(p.IndividualCertificationId);
  if (!old)
    return refuse(
      404,
      'not_found',
      `No individual certification with IndividualCertificationId ${p.IndividualCertificationId}.`,
    );
  const ind = store.individual(old.ServiceId ?? 0);
  const fields: Fields = {};
  if (p.ServiceId != null && p.ServiceId !== old.ServiceId)
    fields.ServiceId = `ServiceId ${p.ServiceId} does not hold this certification`;
  if (p.UniqueIdentifier != null && p.UniqueIdentifier !== old.UniqueIdentifier)
    fields.UniqueIdentifier = `UniqueIdentifier ${p.UniqueIdentifier} does not hold this certification`;
  if (p.CertificationId != null && !store.certification(p.CertificationId))
    fields.CertificationId = `No certification with CertificationId ${p.CertificationId}`;
  if (!ind || Object.keys(fields).length > 0) return invalid(fields);
  const core = coreOf(old);
  const sent = (k: string) => Object.hasOwn(body, k);
  const next: CertCore = {
    ...core,
    CertificationId: p.CertificationId ?? core.CertificationId,
    CertificationNumber: sent('CertificationNumber') ? (p.CertificationNumber ?? null) : core.CertificationNumber,
    State: sent('State') ? (p.State ?? null) : core.State,
    Country: sent('Country') ? (p.Country ?? null) : core.Country,
    ActivationDate: sent('ActivationDate') ? dateOf(p.ActivationDate) : core.ActivationDate,
    ExpirationDate: sent('ExpirationDate') ? dateOf(p.ExpirationDate) : core.ExpirationDate,
    Reference:
      sent('Reference') && (typeof body.Reference === 'string' || body.Reference === null)
        ? (body.Reference as string | null)
        : core.Reference,
    UpdateDate: dateOnly(store.nowMs),
    UpdateBy: 'API',
  };
  const cert = certRecord(store, next, ind);
  store.putCert(cert);
  record(store, 'certificationUpdate', cert);
  store.bump();
  return { ok: true, value: cert };
}

/**
 * Verification results. A verified credential leaves the pending list (it no longer awaits verification);
 * one that failed stays on it with VerificationStatus `Not Verified` and the ErrorList as failure reasons.
 * A result whose RequestId was applied before is not applied again; the batch is still answered 201, since the
 * spec shows no other answer, so a resend after a lost answer is harmless.
 */
function validateSubmission(store: SandboxStore, body: unknown): Outcome<object | null> {
  if (!Array.isArray(body) || body.length === 0)
    return refuse(400, 'invalid_request', 'The body must be a non-empty array of verification results.');
  const fields: Fields = {};
  const items: z.output<typeof VerificationSubmissionItem>[] = [];
  body.forEach((raw, i) => {
    if (!isObject(raw)) {
      fields[`[${i}]`] = 'each item must be an object';
      return;
    }
    const parsed = VerificationSubmissionItem.safeParse(raw);
    if (!parsed.success) {
      Object.assign(fields, fieldsOf(parsed.error, raw, `[${i}].`));
      return;
    }
    if (!store.certs.has(Number(parsed.data.IndividualCertificationId)))
      fields[`[${i}].IndividualCertificationId`] =
        `No individual certification with IndividualCertificationId ${parsed.data.IndividualCertificationId}`;
    items.push(parsed.data);
  });
  if (Object.keys(fields).length > 0) return invalid(fields);
  for (const item of items) {
    const id = Number(item.IndividualCertificationId);
    if (item.RequestId != null && store.requestIds.has(item.RequestId)) {
      store.duplicateRequestIds += 1;
      continue;
    }
    if (item.RequestId != null) store.requestIds.add(item.RequestId);
    const { ECardImage, ...kept } = item;
    record(store, 'validateSubmission', { ...kept, HasECardImage: Boolean(ECardImage) });
    if (item.IsVerified) store.pending.delete(id);
    else store.pending.set(id, { VerificationStatus: 'Not Verified', IssuingBodyFailureReason: item.ErrorList ?? [] });
  }
  store.bump();
  return { ok: true, value: null };
}

/** Keeps what a write applied, for `/_sandbox/truth/<write endpoint>` and the stats. */
function record(store: SandboxStore, endpoint: WriteEndpoint, value: object): void {
  store.applied[endpoint].push({ AppliedAt: new Date(store.nowMs).toISOString(), ...value });
}

const writers: Partial<Record<EndpointName, (store: SandboxStore, body: unknown) => Outcome<object | null>>> = {
  individualInsert: insertIndividual,
  individualUpdate: updateIndividual,
  certificationInsert: insertCertification,
  certificationUpdate: updateCertification,
  validateSubmission,
};

export function runWrite(store: SandboxStore, endpoint: EndpointName, body: unknown): Outcome<object | null> {
  const writer = writers[endpoint];
  if (!writer) return refuse(404, 'not_found', `${endpoint} is not a write endpoint.`);
  return writer(store, body);
}
