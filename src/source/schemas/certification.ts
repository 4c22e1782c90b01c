import { z } from 'zod';
import { bool, int, isoDate, opt, record, str, JobTitleRef } from './common.ts';

/** Fields a credential carries in the certification list and in the pending list alike. */
const credentialFields = {
  IndividualCertificationId: int,
  ServiceId: opt(int),
  FirstName: opt(str),
  LastName: opt(str),
  LegalFirstName: opt(str),
  LegalMiddleName: opt(str),
  LegalLastName: opt(str),
  JobTitleId: opt(int),
  JobTitle: opt(str),
  AdditionalJobTitles: opt(z.array(JobTitleRef)),
  CertificationId: opt(int),
  CertificationName: opt(str),
  CertificationNumber: opt(str),
  State: opt(str),
  Country: opt(str),
  ActivationDate: opt(isoDate),
  ExpirationDate: opt(isoDate),
  Reference: opt(str),
  UpdateDate: opt(isoDate),
  IsMaintained: opt(bool),
  IsNonDriver: opt(bool),
};

/** Names of the fields a credential carries in both lists. */
export const CREDENTIAL_FIELD_NAMES = Object.keys(credentialFields) as (keyof typeof credentialFields)[];

/** IndividualCertification, v2.0 (latest version of a credential). */
export const IndividualCertification = record({
  ...credentialFields,
  UniqueIdentifier: opt(str),
  BusinessUnitId: opt(str),
  UpdateBy: opt(str),
  IsDeleted: opt(bool),
  IssuingBody: opt(str),
  IsPrimary: opt(bool),
});
export type IndividualCertification = z.output<typeof IndividualCertification>;

/** Item of the pending list: the credential fields plus the verification provider's outcome. */
export const PendingCertification = record({
  ...credentialFields,
  VerificationStatus: opt(str),
  IssuingBodyFailureReason: opt(z.array(str)),
});
export type PendingCertification = z.output<typeof PendingCertification>;

export const REQUIREMENT_STATUSES = ['Missing', 'Current', 'Expired', 'NotMaintained'] as const;

const CertificationDetails = record({
  CertificationName: opt(str),
  CertificationNumber: opt(str),
  ActivationDate: opt(isoDate),
  ExpirationDate: opt(isoDate),
  IsNonDriver: opt(bool),
});

export const IndividualRequiredCertification = record({
  Requirement: opt(str),
  RequirementStatus: opt(str),
  FulfillingCertification: opt(CertificationDetails),
});

export const IndividualRequiredCertificationRequirement = record({
  JobTitle: opt(JobTitleRef),
  Locale: opt(record({ LocaleId: opt(int), LocaleName: opt(str), BusinessUnitId: opt(str) })),
  RequirementsMet: opt(bool),
  Requirements: opt(z.array(IndividualRequiredCertification)),
});

/** Item of GET /IndividualCertification/GetRequiredCertificationStatus. */
export const EmployeeRequiredCredentialStatus = record({
  Employment: record({
    ServiceId: int,
    UniqueIdentifier: opt(str),
    EmployeeNumber: opt(str),
    FirstName: opt(str),
    LastName: opt(str),
    LegalFirstName: opt(str),
    LegalMiddleName: opt(str),
    LegalLastName: opt(str),
  }),
  CredentialRequirements: opt(z.array(IndividualRequiredCertificationRequirement)),
});
export type EmployeeRequiredCredentialStatus = z.output<typeof EmployeeRequiredCredentialStatus>;

/** Element of the array sent to POST /IndividualCertification/ValidateSubmission. */
export const VerificationSubmissionItem = z.looseObject({
  RequestId: str.min(1, 'RequestId is required'),
  IndividualCertificationId: str.min(1, 'IndividualCertificationId is required'),
  ECardID: opt(str),
  IsVerified: bool,
  ErrorList: opt(z.array(str)),
  ECardImage: opt(str),
  IssueDate: opt(isoDate),
  ExpirationDate: opt(isoDate),
});
export type VerificationSubmissionItem = z.output<typeof VerificationSubmissionItem>;

/** Body of POST /IndividualCertification/Insert. */
export const IndividualCertificationInsert = z.looseObject({
  ServiceId: int,
  CertificationId: int,
  CertificationNumber: opt(str),
  Reference: opt(str),
  ActivationDate: opt(isoDate),
  ExpirationDate: opt(isoDate),
});
export type IndividualCertificationInsert = z.output<typeof IndividualCertificationInsert>;

/** Body of POST /IndividualCertification/Update (earlier representation fields). */
export const IndividualCertificationUpdate = z.looseObject({
  IndividualCertificationId: int,
  ServiceId: opt(int),
  UniqueIdentifier: opt(str),
  FirstName: opt(str),
  LastName: opt(str),
  CertificationId: opt(int),
  CertificationName: opt(str),
  CertificationNumber: opt(str),
  State: opt(str),
  Country: opt(str),
  ActivationDate: opt(isoDate),
  ExpirationDate: opt(isoDate),
});
export type IndividualCertificationUpdate = z.output<typeof IndividualCertificationUpdate>;
