import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import * as s from '../../src/source/schemas/index.ts';

/** Parses or fails the test with zod's own words. */
function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw new Error(r.error.message);
  return r.data;
}

describe('names the service sends under another name', () => {
  it('reads SupervisorName from `Supervisor`, and from its own name', () => {
    expect(parse(s.Individual, { IndividualId: 1, ServiceId: 2, Supervisor: 'Doe, Jane' }).SupervisorName).toBe(
      'Doe, Jane',
    );
    expect(parse(s.Individual, { IndividualId: 1, ServiceId: 2, SupervisorName: 'Roe, Rick' }).SupervisorName).toBe(
      'Roe, Rick',
    );
    // Both present: the canonical name wins, the alias is not lost either way.
    expect(
      parse(s.Individual, { IndividualId: 1, ServiceId: 2, SupervisorName: 'A', Supervisor: 'B' }).SupervisorName,
    ).toBe('A');
  });

  it('reads AuditIndividual from `InsertBy`', () => {
    const audit = parse(s.FormAudit, {
      ResponseId: 4,
      ItemId: 7,
      AnswerId: -1,
      InsertBy: { UniqueIdentifier: 'U-9', FirstName: 'Ann', LastName: 'Lee' },
      InsertDate: '2024-05-01T10:00:00-05:00',
    });
    expect(audit.AuditIndividual).toEqual({ UniqueIdentifier: 'U-9', FirstName: 'Ann', LastName: 'Lee' });
  });

  it('reads the job-title id from `JobTitle` in the job-title list', () => {
    expect(parse(s.JobTitle, { JobTitle: 12, JobTitleName: 'Paramedic' })).toEqual({
      JobTitleId: 12,
      JobTitleName: 'Paramedic',
    });
    expect(parse(s.JobTitle, { JobTitleId: 13, JobTitleName: 'EMT' }).JobTitleId).toBe(13);
  });

  it('reads UniqueIdentifier from `UniqueIdentifer` in the time-off Employee and ReviewedBy', () => {
    const req = parse(s.TimeOffRequest, {
      Employee: { ServiceId: 5, FirstName: 'Ann', LastName: 'Lee', UniqueIdentifer: 'U-5', EmployeeNumber: 'E5' },
      StartDateTime: '2024-06-01T08:00:00+02:00',
      EndDateTime: '2024-06-02T08:00:00+02:00',
      ReviewedBy: { ServiceId: 6, UniqueIdentifer: 'U-6' },
      ApprovedHours: [{ ApprovedLeavePolicy: 'PTO', ApprovedLeaveType: 'Vacation', ApprovedHours: 7.5 }],
      RequestedHours: 8,
      Status: 'Approved',
    });
    expect(req.Employee.UniqueIdentifier).toBe('U-5');
    expect(req.ReviewedBy?.UniqueIdentifier).toBe('U-6');
    expect(req.ApprovedHours?.[0]?.ApprovedHours).toBe(7.5);
  });
});

describe('names in fields the table lists as int', () => {
  it('keeps name text, and turns a number into text', () => {
    const employee = { ServiceId: 1, EmployeeNumber: 'E1', FirstName: 'Ann', LastName: 'Lee' };
    expect(parse(s.FormResponseEmployee, employee)).toEqual(employee);
    expect(parse(s.FormResponseEmployee, { ...employee, FirstName: 42 }).FirstName).toBe('42');
    expect(
      parse(s.FormAudit, { ResponseId: 1, AuditIndividual: { FirstName: 'Bo', LastName: 7 } }).AuditIndividual
        ?.LastName,
    ).toBe('7');
    expect(
      parse(s.RunLogCrewMember, { CrewRole: 'Driver', ServiceId: 3, FirstName: 'Cy', LastName: 'Ng' }).FirstName,
    ).toBe('Cy');
  });
});

describe('dates', () => {
  it('accepts date-only and date-time values with an offset, Z, or none', () => {
    for (const d of [
      '2024-02-29',
      '2024-02-29T13:45:00+05:30',
      '2024-02-29T13:45:00.1234567-08:00',
      '2024-02-29T13:45:00Z',
      '2024-02-29T13:45:00',
    ]) {
      expect(parse(s.IndividualCertification, { IndividualCertificationId: 1, ExpirationDate: d }).ExpirationDate).toBe(
        d,
      );
    }
  });

  it('refuses what is not a date, naming the field', () => {
    const r = s.IndividualCertification.safeParse({ IndividualCertificationId: 1, ExpirationDate: '02/29/2024' });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['ExpirationDate']);
  });
});

describe('absent and unknown fields', () => {
  it('accepts a course record without the fields not relevant to it', () => {
    const course = parse(s.IndividualCourse, {
      IndividualCourseId: 'C-1',
      CourseName: 'CPR',
      StartDate: '2024-01-02',
      Status: 'Passed',
    });
    expect(course).toEqual({ IndividualCourseId: 'C-1', CourseName: 'CPR', StartDate: '2024-01-02', Status: 'Passed' });
    expect(parse(s.IndividualCourse, { IndividualCourseId: 881 }).IndividualCourseId).toBe('881');
  });

  it('keeps fields the schema does not know', () => {
    const ind = parse(s.Individual, { IndividualId: 1, ServiceId: 2, BadgeColor: 'green', Nested: { a: 1 } });
    expect(ind).toMatchObject({ BadgeColor: 'green', Nested: { a: 1 } });
    const shift = parse(s.ShiftAssignment, {
      ShiftAssignmentId: 1,
      StartDateTime: '2024-01-01T07:00:00-05:00',
      Unit: 'M12',
    });
    expect(shift).toMatchObject({ Unit: 'M12' });
  });

  it('accepts nulls wherever the service leaves a value out', () => {
    const open = parse(s.ShiftAssignment, {
      ShiftAssignmentId: 9,
      StartDateTime: '2024-01-01T07:00:00-05:00',
      Assignee: null,
      VehicleName: null,
      ClockInDateTime: null,
      ClockOutDateTime: null,
    });
    expect(open.Assignee).toBeNull();
    const rideAlong = parse(s.ShiftAssignment, {
      ShiftAssignmentId: 10,
      StartDateTime: '2024-01-01T07:00:00-05:00',
      Type: 'Ride Along',
      Assignee: { ServiceId: null, EmployeeNumber: null, FirstName: 'Guest', LastName: 'Rider' },
    });
    expect(rideAlong.Assignee?.ServiceId).toBeNull();
  });

  it('still requires the fields that identify a record', () => {
    expect(s.Individual.safeParse({ ServiceId: 2 }).success).toBe(false);
    expect(s.TimeOffRequest.safeParse({ StartDateTime: '2024-01-01' }).success).toBe(false);
    expect(
      s.AssignmentChange.safeParse({
        EventType: 'Moved',
        EventTimeStamp: '2024-01-01',
        ShiftAssignmentId: 1,
        StartDateTime: '2024-01-01',
      }).success,
    ).toBe(false);
  });
});

const answer = (QuestionType: string, AnswerValue: unknown) => ({
  QuestionId: 1,
  QuestionType,
  QuestionText: 'Q',
  AnswerValue,
});

/** A value of the right shape for each of the 22 question types, and one of a wrong shape. */
const SAMPLES: Record<string, [right: unknown, wrong: unknown]> = {
  'Dropdown List': [{ SelectedValue: 'Other', OtherAnswerValue: 'Mutual aid' }, 'Other'],
  'Radio Buttons': [{ SelectedValue: 'Yes', OtherAnswerValue: null }, ['Yes']],
  Checkboxes: [['Gloves', 'Mask'], 'Gloves'],
  Textbox: ['Near miss', 12],
  'Comments Box': ['Line one\r\nLine two', { text: 'x' }],
  'Date/Time': ['2024-03-10T02:30:00-05:00', 'last Tuesday'],
  Number: [12.5, '12.5'],
  'Yes/No': [true, 'Yes'],
  'True/False': [false, 0],
  'Ranking Sum': [
    [
      { Row: 'A', SelectedValue: '60' },
      { Row: 'B', SelectedValue: '40' },
    ],
    { Row: 'A' },
  ],
  Ranking: [[{ Row: 'First', SelectedValue: '1' }], [1, 2]],
  'Radio Button Matrix': [[{ Row: 'Airway', SelectedValue: 'Good' }], 'Good'],
  'Checkbox Matrix': [
    [{ Row: 'Bag', SelectedValues: ['Checked', 'Restocked'] }],
    [{ Row: 'Bag', SelectedValues: 'Checked' }],
  ],
  'Textbox Matrix': [[{ Row: 'Gauze', Column: 'Count', AnswerText: '4' }], [{ Row: 'Gauze', AnswerText: 4 }]],
  'One or More Lines': [[{ Row: 'Line 1', SelectedValue: 'Text' }], 'Text'],
  'Rating Scale': [[{ Row: 'Overall', SelectedValue: 'Excellent' }], 5],
  'Service Dropdown List': ['Lee, Ann', { ServiceId: 1 }],
  'Attach Document': [
    [{ FileUri: 'https://svc.example/FormResponseDocument/GetFile?id=1&fileNumber=1&api-version=2.0' }],
    'file.pdf',
  ],
  Address: [
    { StreetAddress1: '1 Main St', StreetAddress2: null, City: 'Springfield', State: 'IL', ZipCode: '62701' },
    '1 Main St',
  ],
  Name: ['Ann Lee', ['Ann', 'Lee']],
  'Custom Dropdown': ['Medic 12', true],
  Signature: [{ HasSignature: true }, true],
};

describe('form answers', () => {
  it('covers every one of the 22 question types of generic forms', () => {
    expect(s.FORM_QUESTION_TYPES).toHaveLength(22);
    expect(Object.keys(SAMPLES).sort()).toEqual([...s.FORM_QUESTION_TYPES].sort());
  });

  for (const [type, [right, wrong]] of Object.entries(SAMPLES)) {
    it(`checks a ${type} answer by its type, and keeps a mismatched one raw`, () => {
      const ok = parse(s.FormResponseAnswer, answer(type, right));
      expect(ok).toMatchObject({ AnswerValue: right, AnswerValueMatchesType: true });
      const off = parse(s.FormResponseAnswer, answer(type, wrong));
      expect(off).toMatchObject({ AnswerValue: wrong, AnswerValueMatchesType: false });
    });
  }

  it('counts a missing answer as no mismatch', () => {
    expect(parse(s.FormResponseAnswer, answer('Textbox', null)).AnswerValueMatchesType).toBe(true);
  });

  it('keeps a `Run Log Crew` answer whatever its shape, since the spec does not show it', () => {
    const crew = [{ CrewRole: 'Driver', ServiceId: 3, FirstName: 'Cy', LastName: 'Ng' }];
    const a = parse(s.FormResponseAnswer, answer('Run Log Crew', crew));
    expect(a).toMatchObject({ AnswerValue: crew, AnswerValueMatchesType: true });
  });

  it('keeps an answer of an unknown question type raw, flagged as unchecked', () => {
    const a = parse(s.FormResponseAnswer, answer('Barcode Scan', { code: 'X1' }));
    expect(a).toMatchObject({
      QuestionType: 'Barcode Scan',
      AnswerValue: { code: 'X1' },
      AnswerValueMatchesType: false,
    });
  });

  it('parses a whole form response with a mismatched answer without rejecting it', () => {
    const r = parse(s.FormResponse, {
      ResponseId: 1,
      SubmittedBy: { ServiceId: 1, EmployeeNumber: 'E1', FirstName: 'Ann', LastName: 'Lee' },
      StartDate: '2024-01-01T09:00:00+01:00',
      AttachedToType: 'FormsOnly',
      RelatedShift: { 'Shift Name': 'Day', 'Shift Date': '2024-01-01T00:00:00+01:00' },
      Answers: [answer('Number', 'seven'), answer('Yes/No', true)],
    });
    expect(r.Answers?.map((a) => a.AnswerValueMatchesType)).toEqual([false, true]);
    expect(r.RelatedShift).toEqual({ 'Shift Name': 'Day', 'Shift Date': '2024-01-01T00:00:00+01:00' });
  });

  it('parses a run-log form response with its run, crew and a Run Log Crew answer', () => {
    const r = parse(s.RunLogFormResponse, {
      ResponseId: 2,
      AttachedToType: 'RunLog',
      RelatedRun: {
        RunId: 'R-100',
        RunDateTime: '2024-01-01T03:00:00-06:00',
        StartedBy: { ServiceId: 0, EmployeeNumber: null, FirstName: 'System', LastName: 'Import', EmploymentId: 0 },
        Locale: { LocaleName: 'North', BusinessId: 'N-1' },
        PatientAge: 'Adult',
        TransportCompleted: null,
        IncidentAddress: { StreetAddress1: '5 Oak', City: 'Town', Country: 'US' },
        Crew: [{ CrewRole: 'Lead', ServiceId: 4, EmployeeNumber: 'E4', FirstName: 'Di', LastName: 'Ko' }],
        MatchedRules: ['Cardiac'],
      },
      Answers: [answer('Run Log Crew', { anything: true })],
    });
    expect(r.RelatedRun?.Crew?.[0]?.CrewRole).toBe('Lead');
    expect(r.RelatedRun?.StartedBy).toMatchObject({ EmploymentId: 0 });
    expect(r.Answers?.[0]?.AnswerValueMatchesType).toBe(true);
  });
});

describe('required credential status', () => {
  it('reads the nested requirement tree, a Missing requirement with no certification and a locale that may be absent', () => {
    const status = parse(s.EmployeeRequiredCredentialStatus, {
      Employment: { ServiceId: 1, UniqueIdentifier: 'U1', EmployeeNumber: 'E1', FirstName: 'Ann', LastName: 'Lee' },
      CredentialRequirements: [
        {
          JobTitle: { JobTitleId: 3, JobTitleName: 'Paramedic' },
          RequirementsMet: false,
          Requirements: [
            { Requirement: 'ACLS', RequirementStatus: 'Missing', FulfillingCertification: null },
            {
              Requirement: "Driver's License",
              RequirementStatus: 'Current',
              FulfillingCertification: {
                CertificationName: 'DL',
                CertificationNumber: 'D1',
                ActivationDate: '2020-01-01',
                ExpirationDate: '2028-01-01',
                IsNonDriver: false,
              },
            },
          ],
        },
        {
          JobTitle: { JobTitleId: 3 },
          Locale: { LocaleId: 2, LocaleName: 'North', BusinessUnitId: 'BU-2' },
          RequirementsMet: true,
          Requirements: [],
        },
      ],
    });
    expect(status.CredentialRequirements?.[0]?.Requirements?.[0]?.FulfillingCertification).toBeNull();
    expect(status.CredentialRequirements?.[1]?.Locale?.BusinessUnitId).toBe('BU-2');
  });
});

describe('write bodies', () => {
  const person = { FirstName: 'Ann', LastName: 'Lee', Status: 'Active', PrimaryEmailAddress: 'ann@example.com' };

  it('accepts a minimal insert and checks the spec rules', () => {
    expect(s.IndividualInsert.safeParse(person).success).toBe(true);
    const bad = s.IndividualInsert.safeParse({
      ...person,
      SSN: '123-45-6789',
      LogonId: 'a'.repeat(31),
      Gender: 'X',
      Status: 'Retired',
    });
    expect(bad.error?.issues.map((i) => i.path[0]).sort()).toEqual(['Gender', 'LogonId', 'SSN', 'Status']);
  });

  it('needs ServiceId on an individual update and IndividualCertificationId on a credential update', () => {
    expect(s.IndividualUpdate.safeParse(person).success).toBe(false);
    expect(s.IndividualUpdate.safeParse({ ...person, ServiceId: 9 }).success).toBe(true);
    expect(s.IndividualCertificationUpdate.safeParse({ CertificationNumber: 'X' }).success).toBe(false);
  });
});
