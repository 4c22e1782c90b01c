import type { Individual, IndividualCertification, TimeOffRequest } from '../source/schemas/index.ts';
import type { Assignee, SandboxStore } from './store.ts';

/**
 * Builders for records that repeat another record's data (a credential carries its holder's names and job
 * titles; an assignee is a person reference). Every builder writes the keys in one order, so all records of
 * a kind share one shape, which keeps a million of them compact in memory.
 */

/** The person reference used by assignees, form submitters and related individuals (same four fields). */
export function personRef(store: SandboxStore, ind: Individual): Assignee {
  let ref = store.assignees.get(ind.ServiceId);
  if (!ref) {
    ref = {
      ServiceId: ind.ServiceId,
      EmployeeNumber: ind.EmployeeNumber ?? null,
      FirstName: ind.FirstName ?? null,
      LastName: ind.LastName ?? null,
    };
    store.assignees.set(ind.ServiceId, ref);
  }
  return ref;
}

export function timeOffEmployee(ind: Individual): TimeOffRequest['Employee'] {
  return {
    ServiceId: ind.ServiceId,
    FirstName: ind.FirstName ?? null,
    LastName: ind.LastName ?? null,
    UniqueIdentifier: ind.UniqueNumber ?? null,
    EmployeeNumber: ind.EmployeeNumber ?? null,
  };
}

/** "Last, First", as SupervisorName shows the primary supervisor. */
export function supervisorName(sup: Individual | undefined): string | null {
  return sup ? `${sup.LastName ?? ''}, ${sup.FirstName ?? ''}` : null;
}

/** CertificationIds an individual's job titles and locale require. */
export function requiredCertIds(store: SandboxStore, ind: Individual): Set<number> {
  const ids = new Set<number>();
  const titles = [ind.JobTitleId, ...(ind.AdditionalJobTitles ?? []).map((t) => t.JobTitleId)];
  for (const id of titles) for (const c of store.jobTitleById(id)?.requires ?? []) ids.add(c);
  for (const c of store.localeByName(ind.Locale)?.requires ?? []) ids.add(c);
  return ids;
}

/** The credential-specific part of an IndividualCertification. */
export interface CertCore {
  IndividualCertificationId: number;
  CertificationId: number;
  CertificationNumber: string | null;
  State: string | null;
  Country: string | null;
  ActivationDate: string | null;
  ExpirationDate: string | null;
  Reference: string | null;
  UpdateDate: string | null;
  UpdateBy: string | null;
  IsMaintained: boolean;
  IsDeleted: boolean;
  IssuingBody: string | null;
  /** Kept for every credential, shown only for driver's license types. */
  IsNonDriver: boolean;
}

export function coreOf(c: IndividualCertification): CertCore {
  return {
    IndividualCertificationId: c.IndividualCertificationId,
    CertificationId: c.CertificationId ?? 0,
    CertificationNumber: c.CertificationNumber ?? null,
    State: c.State ?? null,
    Country: c.Country ?? null,
    ActivationDate: c.ActivationDate ?? null,
    ExpirationDate: c.ExpirationDate ?? null,
    Reference: c.Reference ?? null,
    UpdateDate: c.UpdateDate ?? null,
    UpdateBy: c.UpdateBy ?? null,
    IsMaintained: c.IsMaintained ?? true,
    IsDeleted: c.IsDeleted ?? false,
    IssuingBody: c.IssuingBody ?? null,
    IsNonDriver: c.IsNonDriver ?? false,
  };
}

/** A full v2.0 credential: its own fields plus its holder's current names, job titles and business unit. */
export function certRecord(
  store: SandboxStore,
  core: CertCore,
  ind: Individual,
  required?: Set<number>,
): IndividualCertification {
  const info = store.certification(core.CertificationId);
  const req = required ?? requiredCertIds(store, ind);
  return {
    IndividualCertificationId: core.IndividualCertificationId,
    ServiceId: ind.ServiceId,
    FirstName: ind.FirstName ?? null,
    LastName: ind.LastName ?? null,
    LegalFirstName: ind.LegalFirstName ?? null,
    LegalMiddleName: ind.LegalMiddleName ?? null,
    LegalLastName: ind.LegalLastName ?? null,
    UniqueIdentifier: ind.UniqueNumber ?? null,
    BusinessUnitId: store.localeByName(ind.Locale)?.businessUnitId ?? null,
    JobTitleId: ind.JobTitleId ?? null,
    JobTitle: ind.JobTitle ?? null,
    AdditionalJobTitles: ind.AdditionalJobTitles ?? [],
    CertificationId: core.CertificationId,
    CertificationName: info?.record.CertificationName ?? null,
    CertificationNumber: core.CertificationNumber,
    State: core.State,
    Country: core.Country,
    ActivationDate: core.ActivationDate,
    ExpirationDate: core.ExpirationDate,
    Reference: core.Reference,
    UpdateDate: core.UpdateDate,
    UpdateBy: core.UpdateBy,
    IsMaintained: core.IsMaintained,
    IsDeleted: core.IsDeleted,
    IssuingBody: core.IssuingBody,
    IsPrimary: req.has(core.CertificationId),
    // The spec returns IsNonDriver only for driver's license types; elsewhere it is absent, i.e. null.
    IsNonDriver: info?.driver ? core.IsNonDriver : null,
  };
}

/** Re-derives an individual's credentials after the individual changed (names, job titles, locale). */
export function refreshCertsOf(store: SandboxStore, ind: Individual): void {
  const required = requiredCertIds(store, ind);
  for (const c of store.certsOf(ind.ServiceId)) store.putCert(certRecord(store, coreOf(c), ind, required));
}

/** SupervisorName is derived, so the people a renamed supervisor supervises show the new name. */
export function refreshSupervised(store: SandboxStore, sup: Individual): void {
  const name = sup.IsSupervisor === 1 ? supervisorName(sup) : null;
  for (const i of [...store.individuals.values()]) {
    if (i.SupervisorId !== sup.IndividualId || i.SupervisorName === name) continue;
    store.putIndividual(
      sup.IsSupervisor === 1 ? { ...i, SupervisorName: name } : { ...i, SupervisorId: null, SupervisorName: null },
    );
  }
}
