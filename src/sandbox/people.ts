import type { Individual } from '../source/schemas/index.ts';
import { asciiFold, CITIES, FIRST_NAMES, LAST_NAMES, MIDDLE_NAMES, PREFERRED_NAMES, STREETS } from './names.ts';
import { certRecord, requiredCertIds, supervisorName, type CertCore } from './records.ts';
import type { Rng } from './rng.ts';
import type { JobTitleInfo, SandboxStore } from './store.ts';
import { DAY_MS, dateOfDay, dayOf } from './time.ts';

/** Relative weights of job titles in a roster, in JOB_TITLES order: most people are crews. */
const TITLE_WEIGHTS = [25, 28, 8, 4, 5, 8, 4, 4, 3, 3, 5, 1];

const DEPARTMENT_OF: Readonly<Record<string, string>> = {
  Paramedic: 'Operations',
  EMT: 'Operations',
  'Advanced EMT': 'Operations',
  'Field Supervisor': 'Operations',
  'Wheelchair Van Driver': 'Operations',
  'Critical Care Paramedic': 'Clinical Services',
  'Registered Nurse': 'Clinical Services',
  'Medical Director': 'Clinical Services',
  Dispatcher: 'Communications',
  'Fleet Technician': 'Fleet',
  'Billing Specialist': 'Billing',
  'Administrative Assistant': 'Administration',
};

function weightedTitle(store: SandboxStore, rng: Rng): JobTitleInfo {
  const total = TITLE_WEIGHTS.reduce((a, b) => a + b, 0);
  let r = rng.next() * total;
  for (let i = 0; i < store.jobTitles.length; i++) {
    r -= TITLE_WEIGHTS[i] ?? 1;
    if (r < 0) return store.jobTitles[i] as JobTitleInfo;
  }
  return store.jobTitles[0] as JobTitleInfo;
}

function phone(rng: Rng): string {
  return `(${rng.int(200, 989)}) ${rng.int(200, 999)}-${String(rng.int(0, 9999)).padStart(4, '0')}`;
}

export interface NewPerson {
  status: 'Active' | 'LOA' | 'Former';
  hireDay: number | null;
  /** Index used for the person's unique keys; callers pass a counter that never repeats. */
  seq: number;
  title?: JobTitleInfo;
  isSupervisor?: boolean;
}

/** A new individual record with coherent names, keys, reference names and contact data. */
export function makeIndividual(store: SandboxStore, rng: Rng, p: NewPerson): Individual {
  const legalFirst = rng.pick(FIRST_NAMES);
  const preferred = PREFERRED_NAMES[legalFirst];
  const first = preferred && rng.chance(0.5) ? preferred : legalFirst;
  const last = rng.pick(LAST_NAMES);
  const middle = rng.chance(0.4) ? rng.pick(MIDDLE_NAMES) : null;
  const title = p.title ?? weightedTitle(store, rng);
  const isEmployee = rng.chance(0.96) ? 1 : 0;
  const extraTitle = rng.chance(0.15) ? rng.pick(store.jobTitles.filter((t) => t !== title)) : undefined;
  const place = rng.pick(CITIES);
  const locale = rng.chance(0.05) ? store.locales[4] : rng.pick(store.locales.slice(0, 4));
  const folded = asciiFold(first).toLowerCase() || 'user';
  const foldedLast = asciiFold(last).toLowerCase() || 'staff';
  const workStatus = isEmployee
    ? rng.pick(['Full Time', 'Full Time', 'Full Time', 'Part Time', 'Per Diem', 'Seasonal'])
    : 'Volunteer';
  const serviceId = 2_000_001 + p.seq;
  return {
    IndividualId: 70_001 + p.seq * 3,
    ServiceId: serviceId,
    CompanyId: store.companyId,
    FirstName: first,
    MiddleName: middle,
    LastName: last,
    LegalFirstName: rng.chance(0.8) ? legalFirst : null,
    LegalMiddleName: middle,
    LegalLastName: rng.chance(0.8) ? last : null,
    EmployeeNumber: isEmployee || rng.chance(0.5) ? String(100_000 + p.seq) : null,
    UniqueNumber: `UN${String(p.seq + 1).padStart(7, '0')}`,
    LogonId: `${folded.slice(0, 1)}${foldedLast.slice(0, 20)}${p.seq}`,
    DateOfBirth: rng.chance(0.97) ? dateOfDay(dayOf(Date.UTC(1958, 0, 1)) + rng.int(0, 45 * 365)) : null,
    HireDate: p.hireDay === null ? null : dateOfDay(p.hireDay),
    Gender: rng.pick(['M', 'M', 'M', 'F', 'F', 'F', '', null]),
    JobTitleId: title.record.JobTitleId,
    JobTitle: title.record.JobTitleName ?? null,
    AdditionalJobTitles: extraTitle
      ? [{ JobTitleId: extraTitle.record.JobTitleId, JobTitleName: extraTitle.record.JobTitleName ?? null }]
      : [],
    Department: rng.chance(0.95) ? (DEPARTMENT_OF[title.record.JobTitleName ?? ''] ?? null) : null,
    Locale: locale?.record.LocaleName ?? null,
    WorkShift: rng.chance(0.9) ? (rng.pick(store.workShifts).WorkShiftName ?? null) : null,
    IsEmployee: isEmployee,
    IsSupervisor: p.isSupervisor ? 1 : 0,
    WorkStatus: workStatus,
    Status: p.status,
    SupervisorId: null,
    SupervisorName: null,
    PrimaryEmailAddress: `${folded}.${foldedLast}${p.seq}@example.org`,
    HomeAddressLine1: rng.chance(0.95) ? `${rng.int(1, 9999)} ${rng.pick(STREETS)}` : null,
    HomeAddressLine2: rng.chance(0.15) ? `Apt ${rng.int(1, 40)}` : null,
    HomeCity: place.city,
    HomeState: place.state,
    HomeCountry: place.country,
    HomeZipCode: place.zip,
    HomePhoneNumber: rng.chance(0.4) ? phone(rng) : null,
    BusinessPhoneNumber: rng.chance(0.3) ? phone(rng) : null,
    MobilePhoneNumber: rng.chance(0.85) ? phone(rng) : null,
    ExcludeFromVerificationMonitoring: rng.chance(0.05),
  };
}

/** Gives an individual a primary supervisor (an individual with IsSupervisor = 1, never themselves). */
export function withSupervisor(ind: Individual, supervisors: readonly Individual[], rng: Rng): Individual {
  const candidates = supervisors.filter((s) => s.ServiceId !== ind.ServiceId);
  if (candidates.length === 0 || rng.chance(0.1)) return ind;
  const sup = rng.pick(candidates);
  return { ...ind, SupervisorId: sup.IndividualId, SupervisorName: supervisorName(sup) };
}

const UPDATERS = ['Renée Dubois', 'System Import', 'Kwame Okafor', 'Self Service', null] as const;

/** Today's credentials of an individual: the required ones mostly present, some expired, unmaintained or deleted. */
export function makeCertsFor(store: SandboxStore, rng: Rng, ind: Individual, fresh = false): void {
  const required = requiredCertIds(store, ind);
  const extras = rng.sample(
    store.certifications.map((c) => c.record.CertificationId).filter((id) => !required.has(id)),
    rng.int(0, 2),
  );
  for (const id of [...required, ...extras]) {
    if (required.has(id) && rng.chance(0.07)) continue;
    if (!fresh && rng.chance(0.03))
      store.putCert(certRecord(store, makeCore(store, rng, ind, id, { deleted: true }), ind, required));
    store.putCert(certRecord(store, makeCore(store, rng, ind, id, { fresh }), ind, required));
  }
}

export function makeCore(
  store: SandboxStore,
  rng: Rng,
  ind: Individual,
  certificationId: number,
  o: { deleted?: boolean; fresh?: boolean },
): CertCore {
  const info = store.certification(certificationId);
  const today = dayOf(store.nowMs);
  const years = info?.years ?? null;
  const expired = !o.fresh && rng.chance(0.08);
  const expDay =
    years === null ? null : expired ? today - rng.int(1, 200) : today + rng.int(o.fresh ? years * 300 : 1, years * 365);
  const actDay = expDay === null ? today - rng.int(30, 3000) : expDay - (years ?? 1) * 365;
  const updDay = o.fresh ? today : Math.min(today, actDay + rng.int(0, 400), today - rng.int(0, 30));
  const id = ++store.next.cert;
  return {
    IndividualCertificationId: 900_000 + id,
    CertificationId: certificationId,
    CertificationNumber: rng.chance(0.95)
      ? `${(info?.record.CertificationName ?? 'C').slice(0, 3).toUpperCase()}-${rng.int(100000, 999999)}`
      : null,
    State: ind.HomeCountry === 'US' && rng.chance(0.8) ? (ind.HomeState ?? null) : null,
    Country: rng.chance(0.9) ? (ind.HomeCountry ?? null) : null,
    ActivationDate: dateOfDay(actDay),
    ExpirationDate: expDay === null ? null : dateOfDay(expDay),
    Reference: rng.chance(0.8)
      ? null
      : rng.pick(['Copy on file', 'Verified with issuer\r\nCard scanned 2nd page missing', 'Renewal class booked']),
    UpdateDate: dateOfDay(Math.max(updDay, actDay)),
    UpdateBy: rng.pick(UPDATERS),
    IsMaintained: rng.chance(0.96),
    IsDeleted: o.deleted === true,
    IssuingBody: rng.chance(0.85) ? (info?.issuer ?? null) : null,
    IsNonDriver: rng.chance(0.05),
  };
}

/** The day `n` days before the clock's day. */
export function daysAgo(store: SandboxStore, n: number): number {
  return Math.floor(store.nowMs / DAY_MS) - n;
}
