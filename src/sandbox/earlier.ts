import type { Individual, IndividualCertification } from '../source/schemas/index.ts';
import type { SandboxStore } from './store.ts';

/**
 * The earlier representations (service-spec.md, "Earlier individual representation" and the certification's
 * earlier field list), served when `api-version` is absent.
 *
 * Status keeps the names `Active`, `LOA`, `Former`: the spec documents the field with those values and only its
 * examples show a number (30) whose mapping to the names is not given. Password is never returned (null).
 */

const PHONE_TYPES = [
  ['HomePhoneNumber', 'HOME1'],
  ['BusinessPhoneNumber', 'BUSINESS1'],
  ['MobilePhoneNumber', 'MOBILE1'],
] as const;

function earlierIndividual(store: SandboxStore, ind: Individual): object {
  const idOf = <T>(
    items: readonly T[],
    name: string | null | undefined,
    get: (t: T) => [number, string | null | undefined],
  ) => {
    for (const t of items) {
      const [id, n] = get(t);
      if (n === name) return id;
    }
    return null;
  };
  const base = ind.ServiceId * 10;
  const phones = PHONE_TYPES.flatMap(([field, type], k) =>
    ind[field]
      ? [{ PhoneId: base + k + 1, PhoneType: type, Number: ind[field] ?? null, Country: ind.HomeCountry ?? null }]
      : [],
  );
  const addresses = ind.HomeAddressLine1
    ? [
        {
          AddressId: base + 1,
          AddressType: 'HOME1',
          AddressLine1: ind.HomeAddressLine1,
          AddressLine2: ind.HomeAddressLine2 ?? null,
          City: ind.HomeCity ?? null,
          State: ind.HomeState ?? null,
          Country: ind.HomeCountry ?? null,
          ZipCode: ind.HomeZipCode ?? null,
        },
      ]
    : [];
  const emails = ind.PrimaryEmailAddress
    ? [{ EmailId: base + 1, EmailType: 'PERSONAL1', EmailAddress: ind.PrimaryEmailAddress, AlertFormat: 1 }]
    : [];
  return {
    IndividualId: ind.IndividualId,
    ServiceId: ind.ServiceId,
    FirstName: ind.FirstName ?? null,
    MiddleName: ind.MiddleName ?? null,
    LastName: ind.LastName ?? null,
    EmployeeNumber: ind.EmployeeNumber ?? null,
    UniqueNumber: ind.UniqueNumber ?? null,
    LogonId: ind.LogonId ?? null,
    Password: null,
    DateOfBirth: ind.DateOfBirth ?? null,
    Gender: ind.Gender ?? null,
    JobTitleId: ind.JobTitleId ?? null,
    JobTitle: ind.JobTitle ?? null,
    DepartmentId: idOf(store.departments, ind.Department, (d) => [d.DepartmentId, d.DepartmentName]),
    Department: ind.Department ?? null,
    LocaleId: idOf(store.locales, ind.Locale, (l) => [l.record.LocaleId, l.record.LocaleName]),
    Locale: ind.Locale ?? null,
    WorkShiftId: idOf(store.workShifts, ind.WorkShift, (w) => [w.WorkShiftId, w.WorkShiftName]),
    WorkShift: ind.WorkShift ?? null,
    CompanyId: ind.CompanyId ?? store.companyId,
    IsEmployee: ind.IsEmployee ?? null,
    WorkStatusId: idOf(store.workStatuses, ind.WorkStatus, (w) => [w.WorkStatusId, w.WorkStatusName]),
    WorkStatus: ind.WorkStatus ?? null,
    SupervisorId: ind.SupervisorId ?? null,
    Status: ind.Status ?? null,
    HireDate: ind.HireDate ?? null,
    PhoneNumbers: phones,
    Addresses: addresses,
    EmailAddresses: emails,
  };
}

function earlierCertification(c: IndividualCertification): object {
  return {
    IndividualCertificationId: c.IndividualCertificationId,
    ServiceId: c.ServiceId ?? null,
    FirstName: c.FirstName ?? null,
    LastName: c.LastName ?? null,
    CertificationId: c.CertificationId ?? null,
    CertificationName: c.CertificationName ?? null,
    CertificationNumber: c.CertificationNumber ?? null,
    State: c.State ?? null,
    Country: c.Country ?? null,
    ActivationDate: c.ActivationDate ?? null,
    ExpirationDate: c.ExpirationDate ?? null,
    UpdateDate: c.UpdateDate ?? null,
  };
}

const cache = new WeakMap<object, object>();

/** Records are immutable, so each earlier shape is built once per record object. */
export function earlier(store: SandboxStore, kind: 'individual' | 'certification', record: object): object {
  let out = cache.get(record);
  if (!out) {
    out =
      kind === 'individual'
        ? earlierIndividual(store, record as Individual)
        : earlierCertification(record as IndividualCertification);
    cache.set(record, out);
  }
  return out;
}
