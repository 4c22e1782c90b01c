import { z } from 'zod';
import { quickParse, REFUSED } from '../quick-parse.ts';
import { bool, int, isoDate, nameText, opt, pureTransform, record, str } from './common.ts';

const SelectedValue = z.looseObject({ SelectedValue: opt(str), OtherAnswerValue: opt(str) });
const RowSelected = z.array(z.looseObject({ Row: opt(str), SelectedValue: opt(str) }));

/** AnswerValue shape for each QuestionType the spec lists. `Run Log Crew`'s shape is not shown. */
export const ANSWER_VALUE_SCHEMAS = {
  'Dropdown List': SelectedValue,
  'Radio Buttons': SelectedValue,
  Checkboxes: z.array(str),
  Textbox: str,
  'Comments Box': str,
  'Date/Time': isoDate,
  Number: z.number(),
  'Yes/No': bool,
  'True/False': bool,
  'Ranking Sum': RowSelected,
  Ranking: RowSelected,
  'Radio Button Matrix': RowSelected,
  'Checkbox Matrix': z.array(z.looseObject({ Row: opt(str), SelectedValues: opt(z.array(str)) })),
  'Textbox Matrix': z.array(z.looseObject({ Row: opt(str), Column: opt(str), AnswerText: opt(str) })),
  'One or More Lines': RowSelected,
  'Rating Scale': RowSelected,
  'Service Dropdown List': str,
  'Attach Document': z.array(z.looseObject({ FileUri: str })),
  Address: z.looseObject({
    StreetAddress1: opt(str),
    StreetAddress2: opt(str),
    City: opt(str),
    State: opt(str),
    ZipCode: opt(str),
  }),
  Name: str,
  'Custom Dropdown': str,
  Signature: z.looseObject({ HasSignature: bool }),
  'Run Log Crew': z.unknown(),
} as const;

export type QuestionType = keyof typeof ANSWER_VALUE_SCHEMAS;
export const QUESTION_TYPES = Object.keys(ANSWER_VALUE_SCHEMAS) as QuestionType[];
/** The 22 types generic forms use; run-log forms also allow `Run Log Crew`. */
export const FORM_QUESTION_TYPES = QUESTION_TYPES.filter((t) => t !== 'Run Log Crew');

export type AnswerValue = { [K in QuestionType]: z.output<(typeof ANSWER_VALUE_SCHEMAS)[K]> }[QuestionType];

/** True when an answer's value has the shape its QuestionType promises; otherwise it is kept raw. */
export function answerMatchesType(questionType: string | null | undefined, value: unknown): boolean {
  if (value === null || value === undefined) return true;
  const schema = ANSWER_VALUE_SCHEMAS[questionType as QuestionType];
  return schema ? quickParse(schema)(value) !== REFUSED || schema.safeParse(value).success : false;
}

export const FormResponseAnswer = pureTransform(
  record({
    QuestionId: int,
    QuestionType: opt(str),
    QuestionText: opt(str),
    QuestionAlias: opt(str),
    PageNumber: opt(int),
    SectionName: opt(str),
    AnswerValue: z.unknown(),
  }),
  (a) => ({ ...a, AnswerValueMatchesType: answerMatchesType(a.QuestionType, a.AnswerValue) }),
);
export type FormResponseAnswer = z.output<typeof FormResponseAnswer>;

/** FormResponseEmployee and RelatedIndividual; names are text although the table lists int. */
export const FormResponseEmployee = record({
  ServiceId: opt(int),
  EmployeeNumber: opt(str),
  FirstName: opt(nameText),
  LastName: opt(nameText),
});

export const ATTACHED_TO_TYPES = [
  'IndividualRecord',
  'QualityImprovement',
  'EducationRecord',
  'EmployeeHealth',
  'FormsOnly',
] as const;

const responseFields = {
  ResponseId: int,
  SubmittedBy: opt(FormResponseEmployee),
  StartDate: opt(isoDate),
  AssignedTo: opt(FormResponseEmployee),
  Status: opt(str),
  AttachedToType: opt(str),
  Answers: opt(z.array(FormResponseAnswer)),
};

export const FormResponse = record({
  ...responseFields,
  RelatedIndividual: opt(FormResponseEmployee),
  RelatedEmployeeHealthEvent: opt(
    record({
      HealthEventId: opt(int),
      HealthEventType: opt(str),
      EventDateTime: opt(isoDate),
      RelatedIndividual: opt(FormResponseEmployee),
    }),
  ),
  RelatedQualityImprovementIncident: opt(
    record({ IncidentId: opt(int), IncidentType: opt(str), IncidentDateTime: opt(isoDate) }),
  ),
  RelatedShift: opt(z.looseObject({})),
});
export type FormResponse = z.output<typeof FormResponse>;

export const RUN_LOG_FORM_TYPES = ['Debrief', 'Utilization', 'ChartReview'] as const;
export const PATIENT_AGES = ['NotSpecified', 'Neonatal', 'Pediatric', 'Adult'] as const;

export const RunLogCrewMember = record({
  CrewRole: opt(str),
  ServiceId: opt(int),
  EmployeeNumber: opt(str),
  FirstName: opt(nameText),
  LastName: opt(nameText),
});

const address = record({
  StreetAddress1: opt(str),
  StreetAddress2: opt(str),
  City: opt(str),
  State: opt(str),
  ZipCode: opt(str),
  Country: opt(str),
});

export const RunDetails = record({
  RunId: str,
  RunType: opt(str),
  RunCategory: opt(str),
  RunDateTime: opt(isoDate),
  StartedBy: opt(FormResponseEmployee),
  Locale: opt(record({ LocaleName: opt(str), BusinessId: opt(str) })),
  PatientContact: opt(bool),
  PatientAge: opt(str),
  TransportCompleted: opt(bool),
  NotCompletedReasons: opt(str),
  NotCompletedDetails: opt(str),
  Priority: opt(str),
  PriorityNotes: opt(str),
  PriorityComplete: opt(bool),
  PriorityCompleteNotes: opt(str),
  FutureDiscussion: opt(bool),
  FutureDiscussionNotes: opt(str),
  FutureDiscussionComplete: opt(bool),
  PurposeOfRun: opt(str),
  RequestingAgencyOrFacility: opt(str),
  DestinationGPSLocation: opt(str),
  MilePostOrMajorRoadway: opt(str),
  SceneCrossStreetOrDirections: opt(str),
  IncidentAddress: opt(address),
  Crew: opt(z.array(RunLogCrewMember)),
  TimeframeOfRun: opt(str),
  CommunicationsCenter: opt(str),
  PatientCareReportNumber: opt(str),
  MatchedRules: opt(z.array(str)),
});

export const RunLogFormResponse = record({ ...responseFields, RelatedRun: opt(RunDetails) });
export type RunLogFormResponse = z.output<typeof RunLogFormResponse>;

export const RunLogForm = record({
  FormId: int,
  FormType: opt(str),
  Archived: opt(bool),
  InsertDate: opt(isoDate),
  UpdateDate: opt(isoDate),
});
export type RunLogForm = z.output<typeof RunLogForm>;

/** AuditIndividual is shown in the example under the name `InsertBy`. */
export const formAuditAliases = { AuditIndividual: 'InsertBy' } as const;

export const FormAudit = record(
  {
    ResponseId: int,
    RunId: opt(str),
    ItemId: opt(int),
    AnswerId: opt(int),
    AnswerText: opt(str),
    OtherText: opt(str),
    AnswerDate: opt(isoDate),
    ItemText: opt(str),
    PageNumber: opt(int),
    SectionNumber: opt(int),
    OrderNumber: opt(int),
    AuditIndividual: opt(record({ UniqueIdentifier: opt(str), FirstName: opt(nameText), LastName: opt(nameText) })),
    InsertDate: opt(isoDate),
  },
  formAuditAliases,
);
export type FormAudit = z.output<typeof FormAudit>;
