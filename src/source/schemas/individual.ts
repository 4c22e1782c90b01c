import { z } from 'zod';
import { bool, int, isoDate, opt, record, str, JobTitleRef } from './common.ts';

export const INDIVIDUAL_STATUSES = ['Active', 'LOA', 'Former'] as const;
export const IndividualStatus = z.enum(INDIVIDUAL_STATUSES);

/** Responses show SupervisorName under the name `Supervisor`. */
export const individualAliases = { SupervisorName: 'Supervisor' } as const;

/** Address and phone fields: free text, the same in responses and in writes. */
const contactFields = {
  HomeAddressLine1: opt(str),
  HomeAddressLine2: opt(str),
  HomeCity: opt(str),
  HomeState: opt(str),
  HomeCountry: opt(str),
  HomeZipCode: opt(str),
  HomePhoneNumber: opt(str),
  BusinessPhoneNumber: opt(str),
  MobilePhoneNumber: opt(str),
};

const individualFields = {
  IndividualId: int,
  ServiceId: int,
  CompanyId: opt(int),
  FirstName: opt(str),
  MiddleName: opt(str),
  LastName: opt(str),
  LegalFirstName: opt(str),
  LegalMiddleName: opt(str),
  LegalLastName: opt(str),
  EmployeeNumber: opt(str),
  UniqueNumber: opt(str),
  LogonId: opt(str),
  DateOfBirth: opt(isoDate),
  HireDate: opt(isoDate),
  Gender: opt(str),
  JobTitleId: opt(int),
  JobTitle: opt(str),
  AdditionalJobTitles: opt(z.array(JobTitleRef)),
  Department: opt(str),
  Locale: opt(str),
  WorkShift: opt(str),
  IsEmployee: opt(int),
  IsSupervisor: opt(int),
  WorkStatus: opt(str),
  Status: opt(str),
  SupervisorId: opt(int),
  SupervisorName: opt(str),
  PrimaryEmailAddress: opt(str),
  ...contactFields,
  ExcludeFromVerificationMonitoring: opt(bool),
};

/** Individual, v2.0 representation (list and by-key responses). */
export const Individual = record(individualFields, individualAliases);
export type Individual = z.output<typeof Individual>;

/** Item of GET /Individual/GetSupervisorList. */
export const Supervisor = record({
  IndividualId: int,
  ServiceId: int,
  FirstName: opt(str),
  MiddleName: opt(str),
  LastName: opt(str),
  IsEmployee: opt(int),
  IsSupervisor: opt(int),
  Status: opt(str),
});
export type Supervisor = z.output<typeof Supervisor>;

/** Fields the service generates or derives: returned, but ignored when sent on insert or update. */
export const INDIVIDUAL_READ_ONLY = [
  'IndividualId',
  'CompanyId',
  'LegalFirstName',
  'LegalMiddleName',
  'LegalLastName',
  'JobTitleId',
  'AdditionalJobTitles',
  'SupervisorName',
] as const;

/** Fields needed for clients using verification monitoring. */
export const MONITORING_REQUIRED = [
  'SSN',
  'DateOfBirth',
  'HomeAddressLine1',
  'HomeCity',
  'HomeState',
  'HomeCountry',
  'HomeZipCode',
] as const;

const writable = {
  FirstName: str.min(1, 'FirstName is required'),
  MiddleName: opt(str),
  LastName: str.min(1, 'LastName is required'),
  EmployeeNumber: opt(str),
  SSN: opt(str.regex(/^\d{9}$/, 'SSN must be exactly 9 digits, no dashes')),
  UniqueNumber: opt(str),
  LogonId: opt(str.regex(/^[A-Za-z0-9]{1,30}$/, 'LogonId must be alphanumeric, at most 30 characters')),
  DateOfBirth: opt(isoDate),
  HireDate: opt(isoDate),
  Gender: opt(z.enum(['M', 'F', ''], { message: 'Gender must be M, F or blank' })),
  JobTitle: opt(str),
  Department: opt(str),
  Locale: opt(str),
  WorkShift: opt(str),
  IsEmployee: opt(z.union([z.literal(0), z.literal(1)])),
  IsSupervisor: opt(z.union([z.literal(0), z.literal(1)])),
  WorkStatus: opt(str),
  Status: z.enum(INDIVIDUAL_STATUSES, { message: 'Status must be one of Active, LOA, Former' }),
  SupervisorId: opt(int),
  PrimaryEmailAddress: z.email({ message: 'PrimaryEmailAddress must be a valid e-mail address' }),
  ...contactFields,
  SendWelcomeLetter: opt(bool),
  ExcludeFromVerificationMonitoring: opt(bool),
};

/** Body of POST /Individual/Insert (LogonId is required unless single sign-on is used). */
export const IndividualInsert = z.looseObject(writable);
export type IndividualInsert = z.output<typeof IndividualInsert>;

/** Body of POST /Individual/Update: the same fields, with ServiceId naming the individual. */
export const IndividualUpdate = z.looseObject({ ...writable, ServiceId: int });
export type IndividualUpdate = z.output<typeof IndividualUpdate>;
