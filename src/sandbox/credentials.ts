import type {
  EmployeeRequiredCredentialStatus,
  Individual,
  IndividualCertification,
  PendingCertification,
} from '../source/schemas/index.ts';
import { CREDENTIAL_FIELD_NAMES } from '../source/schemas/certification.ts';
import type { PendingState, SandboxStore } from './store.ts';
import { dateOnly } from './time.ts';

type Requirement = NonNullable<EmployeeRequiredCredentialStatus['CredentialRequirements']>[number];
type RequiredCert = NonNullable<Requirement['Requirements']>[number];

/** Credentials are listed for active employees and those on leave (service-spec.md, certification list). */
export function holdsListedCredentials(ind: Individual | undefined): boolean {
  return ind !== undefined && (ind.Status === 'Active' || ind.Status === 'LOA');
}

/** Item of the pending list: the credential's fields plus the verification provider's outcome. */
export function pendingItem(c: IndividualCertification, state: PendingState): PendingCertification {
  const fields = Object.fromEntries(CREDENTIAL_FIELD_NAMES.map((f) => [f, c[f] ?? null]));
  return {
    ...fields,
    IndividualCertificationId: c.IndividualCertificationId,
    AdditionalJobTitles: c.AdditionalJobTitles ?? [],
    VerificationStatus: state.VerificationStatus,
    IssuingBodyFailureReason: state.IssuingBodyFailureReason,
  } as PendingCertification;
}

/**
 * How one required certification stands: the holder's undeleted credential of that certification with the
 * latest expiration fulfils it; none is Missing, an unmaintained one NotMaintained, a lapsed one Expired.
 */
function requirementOf(
  store: SandboxStore,
  certificationId: number,
  held: readonly IndividualCertification[],
  today: string,
): RequiredCert {
  const name = store.certification(certificationId)?.record.CertificationName ?? null;
  const candidates = held.filter((c) => c.CertificationId === certificationId && !c.IsDeleted);
  if (candidates.length === 0)
    return { Requirement: name, RequirementStatus: 'Missing', FulfillingCertification: null };
  const best = candidates.reduce((a, b) => ((b.ExpirationDate ?? '9999') > (a.ExpirationDate ?? '9999') ? b : a));
  const status = !best.IsMaintained
    ? 'NotMaintained'
    : best.ExpirationDate != null && best.ExpirationDate < today
      ? 'Expired'
      : 'Current';
  const driver = store.certification(certificationId)?.driver === true;
  return {
    Requirement: name,
    RequirementStatus: status,
    FulfillingCertification: {
      CertificationName: best.CertificationName ?? null,
      CertificationNumber: best.CertificationNumber ?? null,
      ActivationDate: best.ActivationDate ?? null,
      ExpirationDate: best.ExpirationDate ?? null,
      IsNonDriver: driver ? (best.IsNonDriver ?? false) : null,
    },
  };
}

function entry(
  jobTitle: Requirement['JobTitle'],
  locale: Requirement['Locale'],
  requirements: RequiredCert[],
): Requirement {
  // service-spec.md: "RequirementsMet is true exactly when no requirement ... is expired or missing".
  const met = requirements.every((r) => r.RequirementStatus !== 'Expired' && r.RequirementStatus !== 'Missing');
  return { JobTitle: jobTitle, Locale: locale, RequirementsMet: met, Requirements: requirements };
}

/**
 * One entry per job title the employee holds, plus one per job title for the requirements the employee's
 * locale adds (the only entries that carry Locale, as the spec returns it only for locale-specific ones).
 */
export function requiredStatusOf(store: SandboxStore, ind: Individual): EmployeeRequiredCredentialStatus {
  const today = dateOnly(store.nowMs);
  const held = store.certsOf(ind.ServiceId);
  const titles = [
    { JobTitleId: ind.JobTitleId ?? null, JobTitleName: ind.JobTitle ?? null },
    ...(ind.AdditionalJobTitles ?? []),
  ];
  const locale = store.localeByName(ind.Locale);
  const entries: Requirement[] = [];
  for (const t of titles) {
    const info = store.jobTitleById(t.JobTitleId);
    if (!info) continue;
    entries.push(
      entry(
        t,
        null,
        info.requires.map((id) => requirementOf(store, id, held, today)),
      ),
    );
    if (locale && locale.requires.length > 0) {
      entries.push(
        entry(
          t,
          {
            LocaleId: locale.record.LocaleId,
            LocaleName: locale.record.LocaleName ?? null,
            BusinessUnitId: locale.businessUnitId,
          },
          locale.requires.map((id) => requirementOf(store, id, held, today)),
        ),
      );
    }
  }
  return {
    Employment: {
      ServiceId: ind.ServiceId,
      UniqueIdentifier: ind.UniqueNumber ?? null,
      EmployeeNumber: ind.EmployeeNumber ?? null,
      FirstName: ind.FirstName ?? null,
      LastName: ind.LastName ?? null,
      LegalFirstName: ind.LegalFirstName ?? null,
      LegalMiddleName: ind.LegalMiddleName ?? null,
      LegalLastName: ind.LegalLastName ?? null,
    },
    CredentialRequirements: entries,
  };
}
