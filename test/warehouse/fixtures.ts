import { endpoints, streams } from '../../src/resources/index.ts';
import type { Target } from '../../src/warehouse/targets.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';

/** A migrated warehouse in a database of its own (under another schema than the default, that schema alone). */
export async function migratedWarehouse(schema?: string): Promise<Warehouse> {
  const wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: schema === undefined }), schema });
  await wh.migrate();
  return wh;
}

/** Realistic items of every resource, as the service sends them, parsed by the endpoint's schema. */
export const raw = {
  individuals: {
    IndividualId: 501,
    ServiceId: 9001,
    CompanyId: 7,
    FirstName: 'Dana',
    MiddleName: null,
    LastName: 'Reyes',
    LegalFirstName: 'Danielle',
    EmployeeNumber: 'E-100',
    UniqueNumber: 'U-100',
    LogonId: 'dreyes',
    SSN: '123456789',
    DateOfBirth: '1988-04-02',
    HireDate: '2019-06-15',
    Gender: 'F',
    JobTitleId: 3,
    JobTitle: 'Paramedic',
    AdditionalJobTitles: [
      { JobTitleId: 4, JobTitleName: 'Field Training Officer' },
      { JobTitleId: 5, JobTitleName: 'Dispatcher' },
    ],
    Department: 'Operations',
    Locale: 'North',
    WorkShift: 'Days',
    IsEmployee: 1,
    IsSupervisor: 0,
    WorkStatus: 'Full Time',
    Status: 'Active',
    SupervisorId: 400,
    Supervisor: 'Kim, Lee',
    PrimaryEmailAddress: 'dana@example.com',
    HomeAddressLine1: '1 Main St',
    HomeCity: 'Springfield',
    HomeState: 'IL',
    HomeCountry: 'US',
    HomeZipCode: '62701',
    MobilePhoneNumber: '555-0100',
    ExcludeFromVerificationMonitoring: false,
    BadgeColor: 'blue',
  },
  supervisors: {
    IndividualId: 400,
    ServiceId: 8000,
    FirstName: 'Lee',
    LastName: 'Kim',
    IsEmployee: 1,
    IsSupervisor: 1,
    Status: 'Active',
  },
  individualCertifications: {
    IndividualCertificationId: 7001,
    ServiceId: 9001,
    FirstName: 'Dana',
    LastName: 'Reyes',
    UniqueIdentifier: 'U-100',
    JobTitleId: 3,
    JobTitle: 'Paramedic',
    AdditionalJobTitles: [{ JobTitleId: 4, JobTitleName: 'Field Training Officer' }],
    CertificationId: 11,
    CertificationName: 'Paramedic License',
    CertificationNumber: 'PM-1',
    State: 'IL',
    Country: 'US',
    ActivationDate: '2023-01-01',
    ExpirationDate: '2025-01-01',
    UpdateDate: '2024-05-01',
    UpdateBy: 'Admin',
    IsMaintained: true,
    IsDeleted: false,
    IsPrimary: true,
  },
  pendingCertifications: {
    IndividualCertificationId: 7002,
    ServiceId: 9001,
    CertificationId: 12,
    CertificationName: 'CPR',
    ExpirationDate: '2026-03-01',
    VerificationStatus: 'Failed',
    IssuingBodyFailureReason: ['number not found', 'name mismatch'],
  },
  requiredCertificationStatus: {
    Employment: {
      ServiceId: 9001,
      UniqueIdentifier: 'U-100',
      EmployeeNumber: 'E-100',
      FirstName: 'Dana',
      LastName: 'Reyes',
    },
    CredentialRequirements: [
      {
        JobTitle: { JobTitleId: 3, JobTitleName: 'Paramedic' },
        Locale: { LocaleId: 2, LocaleName: 'North', BusinessUnitId: 'BU-N' },
        RequirementsMet: false,
        Requirements: [
          {
            Requirement: 'Paramedic License',
            RequirementStatus: 'Current',
            FulfillingCertification: {
              CertificationName: 'Paramedic License',
              CertificationNumber: 'PM-1',
              ActivationDate: '2023-01-01',
              ExpirationDate: '2025-01-01',
            },
          },
          { Requirement: 'CPR', RequirementStatus: 'Missing', FulfillingCertification: null },
        ],
      },
      { JobTitle: { JobTitleId: 5, JobTitleName: 'Dispatcher' }, RequirementsMet: true, Requirements: [] },
    ],
  },
  shiftAssignments: {
    ShiftAssignmentId: 3001,
    ScheduleId: 20,
    ScheduleName: 'North Station',
    ShiftId: 21,
    ShiftName: 'Day A',
    JobTitleId: 3,
    JobTitleName: 'Paramedic',
    StartDateTime: '2024-06-01T07:00:00-05:00',
    EndDateTime: '2024-06-01T19:00:00-05:00',
    Type: 'Shift Assignment',
    Assignee: { ServiceId: 9001, EmployeeNumber: 'E-100', FirstName: 'Dana', LastName: 'Reyes', Pager: '77' },
    VehicleName: 'Medic 1',
    ClockInDateTime: '2024-06-01T06:55:00-05:00',
    ClockOutDateTime: null,
  },
  assignmentChanges: {
    EventType: 'Assigned',
    EventTimeStamp: '2024-05-20T10:00:00+00:00',
    ShiftAssignmentId: 3001,
    ScheduleId: 20,
    ScheduleName: 'North Station',
    StartDateTime: '2024-06-01T07:00:00-05:00',
    Assignee: { ServiceId: 9001, EmployeeNumber: 'E-100', FirstName: 'Dana', LastName: 'Reyes' },
  },
  schedules: {
    ScheduleId: 20,
    ScheduleName: 'North Station',
    Shifts: [
      { ShiftId: 21, ShiftName: 'Day A' },
      { ShiftId: 22, ShiftName: 'Night A' },
    ],
  },
  timeOffRequests: {
    Employee: {
      ServiceId: 9001,
      FirstName: 'Dana',
      LastName: 'Reyes',
      UniqueIdentifer: 'U-100',
      EmployeeNumber: 'E-100',
    },
    StartDateTime: '2024-07-01T00:00:00+00:00',
    EndDateTime: '2024-07-03T00:00:00+00:00',
    RequestedLeavePolicy: 'PTO',
    RequestedLeaveType: 'Vacation',
    ApprovedHours: [
      { ApprovedLeavePolicy: 'PTO', ApprovedLeaveType: 'Vacation', ApprovedHours: 16 },
      { ApprovedLeavePolicy: 'Sick', ApprovedLeaveType: 'Sick', ApprovedHours: 4.5 },
    ],
    RequestedDateTime: '2024-06-01T12:00:00+00:00',
    Status: 'Approved',
    ReviewedBy: { ServiceId: 8000, FirstName: 'Lee', LastName: 'Kim' },
    ReviewedDateTime: '2024-06-02T09:00:00+00:00',
    RequestedHours: 20.5,
  },
  individualCourses: {
    IndividualCourseId: 'C-77',
    CourseName: 'Airway',
    CourseDescription: 'Airway management',
    Credit: 1.5,
    StartDate: '2024-03-01',
    EndDate: '2024-03-02',
    FirstName: 'Dana',
    LastName: 'Reyes',
    IndividualId: 501,
    EmployeeNumber: 'E-100',
    Status: 'Passed',
    CourseId: 40,
  },
  runLogForms: {
    FormId: 60,
    FormType: 'Debrief',
    Archived: false,
    InsertDate: '2023-01-01T00:00:00+00:00',
    UpdateDate: '2024-01-01T00:00:00+00:00',
  },
  formAudit: {
    ResponseId: 801,
    RunId: 'R-1',
    ItemId: 5,
    AnswerId: 9,
    AnswerText: 'Yes',
    ItemText: 'Was the patient transported?',
    PageNumber: 1,
    SectionNumber: 2,
    OrderNumber: 3,
    InsertBy: { UniqueIdentifier: 'U-100', FirstName: 'Dana', LastName: 'Reyes' },
    InsertDate: '2024-06-01T20:00:00+00:00',
  },
  formResponses: {
    ResponseId: 801,
    SubmittedBy: { ServiceId: 9001, EmployeeNumber: 'E-100', FirstName: 'Dana', LastName: 'Reyes' },
    StartDate: '2024-06-01T20:00:00+00:00',
    AssignedTo: { ServiceId: 8000, FirstName: 'Lee', LastName: 'Kim' },
    Status: 'Submitted',
    AttachedToType: 'EmployeeHealth',
    RelatedEmployeeHealthEvent: {
      HealthEventId: 3,
      HealthEventType: 'Exposure',
      EventDateTime: '2024-06-01T18:00:00+00:00',
      RelatedIndividual: { ServiceId: 9001, FirstName: 'Dana', LastName: 'Reyes' },
    },
    RelatedShift: { 'Shift Name': 'Day A', 'Shift Date': '2024-06-01T07:00:00-05:00' },
    Answers: [
      {
        QuestionId: 1,
        QuestionType: 'Textbox',
        QuestionText: 'Notes',
        PageNumber: 1,
        SectionName: 'Main',
        AnswerValue: 'all good',
      },
      { QuestionId: 2, QuestionType: 'Number', QuestionText: 'Count', AnswerValue: 3 },
      { QuestionId: 3, QuestionType: 'Yes/No', QuestionText: 'OK?', AnswerValue: true },
      { QuestionId: 4, QuestionType: 'Date/Time', QuestionText: 'When', AnswerValue: '2024-06-01T18:30:00+00:00' },
      { QuestionId: 5, QuestionType: 'Checkboxes', QuestionText: 'Which', AnswerValue: ['a', 'b'] },
      {
        QuestionId: 6,
        QuestionType: 'Radio Buttons',
        QuestionText: 'Pick',
        AnswerValue: { SelectedValue: 'x', OtherAnswerValue: null },
      },
      { QuestionId: 7, QuestionType: 'Number', QuestionText: 'Broken', AnswerValue: 'three' },
    ],
  },
  runLogFormResponses: {
    ResponseId: 901,
    SubmittedBy: { ServiceId: 9001, FirstName: 'Dana', LastName: 'Reyes' },
    StartDate: '2024-06-01T20:00:00+00:00',
    Status: 'Open',
    AttachedToType: 'RunLog',
    RelatedRun: {
      RunId: 'R-1',
      RunType: 'ALS',
      RunDateTime: '2024-06-01T15:00:00+00:00',
      StartedBy: { ServiceId: 0, FirstName: 'System', LastName: 'Auto' },
      Locale: { LocaleName: 'North', BusinessId: 'BU-N' },
      PatientContact: true,
      PatientAge: 'Adult',
      DestinationGPSLocation: '41.0,-89.0',
      IncidentAddress: {
        StreetAddress1: '2 Oak St',
        City: 'Springfield',
        State: 'IL',
        ZipCode: '62701',
        Country: 'US',
      },
      Crew: [
        { CrewRole: 'Lead', ServiceId: 9001, EmployeeNumber: 'E-100', FirstName: 'Dana', LastName: 'Reyes' },
        { CrewRole: 'Driver', ServiceId: null, FirstName: 'Sam', LastName: 'Ng' },
      ],
      MatchedRules: ['rule-1'],
    },
    Answers: [{ QuestionId: 1, QuestionType: 'Run Log Crew', QuestionText: 'Crew', AnswerValue: { anything: 1 } }],
  },
  certifications: { CertificationId: 11, CertificationName: 'Paramedic License' },
  workStatuses: { WorkStatusId: 1, WorkStatusName: 'Full Time' },
  departments: { DepartmentId: 1, DepartmentName: 'Operations' },
  workShifts: { WorkShiftId: 1, WorkShiftName: 'Days' },
  jobTitles: { JobTitle: 3, JobTitleName: 'Paramedic' },
  locales: { LocaleId: 2, LocaleName: 'North' },
} as const;

export type ResourceName = keyof typeof raw;

/** The item the sync engine hands the warehouse: parsed by the endpoint's zod schema. */
export function parsed(name: ResourceName, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const item = endpoints[name].item.parse({ ...raw[name], ...overrides });
  return item as Record<string, unknown>;
}

/** The warehouse target of the stream that reads the endpoint `name`. */
export function targetOf(name: ResourceName): Target {
  const stream = streams.find((s) => s.endpoint.name === name);
  if (!stream) throw new Error(`no stream reads ${name}`);
  return stream.target;
}
