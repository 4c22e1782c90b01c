/**
 * The service's personal fields, each named once. Wherever a record of any endpoint carries a field of this
 * name (an individual's own fields, or the copies of a person's names on a shift, a crew, a credential, a form),
 * it is that person's personal data; the catalog (resources/personal-data.ts) finds every such place by name.
 *
 *   alsoNamed  other names the service gives the same field in some records;
 *   of         the field naming whose data it is, when that is not the `ServiceId` beside it: a sibling field,
 *              or `../X` for field X of the record holding the list the field is in.
 *   hashable   false for fields stored as a date or a flag: a hash is neither, so `hash` is refused for them.
 *   kind       `patient` for patients' and health data (a run's patient and scene, an employee health event):
 *              governed like an employee's fields, but no employee's erasure reaches it. An object field of
 *              this kind (IncidentAddress) is one field with all its parts, so its parts' names (City, State)
 *              are never matched on their own, where they mean something else.
 */
export interface PersonalFieldSpec {
  readonly alsoNamed?: readonly string[];
  readonly of?: string;
  readonly hashable?: false;
  readonly kind?: 'patient';
}

export const PERSONAL_FIELDS = {
  FirstName: {},
  MiddleName: {},
  LastName: {},
  LegalFirstName: {},
  LegalMiddleName: {},
  LegalLastName: {},
  EmployeeNumber: {},
  UniqueNumber: { alsoNamed: ['UniqueIdentifier'] },
  LogonId: {},
  DateOfBirth: { hashable: false },
  Gender: {},
  PrimaryEmailAddress: {},
  HomeAddressLine1: {},
  HomeAddressLine2: {},
  HomeCity: {},
  HomeState: {},
  HomeCountry: {},
  HomeZipCode: {},
  HomePhoneNumber: {},
  BusinessPhoneNumber: {},
  MobilePhoneNumber: {},
  SupervisorName: { of: 'SupervisorId' },
  /** A credential's licence number: it identifies its holder. */
  CertificationNumber: {},
  /** Who last updated a credential, by name; the service gives no id of theirs, so it goes with the holder. */
  UpdateBy: {},
  /** What someone answered on a form: names, addresses and free text about people; the form audit copies it. */
  AnswerValue: { of: '../SubmittedBy', alsoNamed: ['AnswerText', 'OtherText'] },
  PatientCareReportNumber: { kind: 'patient' },
  PatientAge: { kind: 'patient' },
  PatientContact: { kind: 'patient', hashable: false },
  /** The scene's address: StreetAddress1, StreetAddress2, City, State, ZipCode and Country under IncidentAddress. */
  IncidentAddress: { kind: 'patient' },
  DestinationGPSLocation: { kind: 'patient' },
  SceneCrossStreetOrDirections: { kind: 'patient' },
  MilePostOrMajorRoadway: { kind: 'patient' },
  /** An employee health event's type and time (RelatedEmployeeHealthEvent); its HealthEventId is an id. */
  HealthEventType: { kind: 'patient' },
  EventDateTime: { kind: 'patient', hashable: false },
} as const satisfies Record<string, PersonalFieldSpec>;

export type PersonalField = keyof typeof PERSONAL_FIELDS;

export const PERSONAL_FIELD_NAMES = Object.keys(PERSONAL_FIELDS) as PersonalField[];

/** The personal field a record's field carries, by its name or another name of it; undefined when none. */
export function personalFieldNamed(name: string): PersonalField | undefined {
  return FIELD_BY_NAME.get(name);
}

const FIELD_BY_NAME: ReadonlyMap<string, PersonalField> = new Map(
  PERSONAL_FIELD_NAMES.flatMap((f) => {
    const spec: PersonalFieldSpec = PERSONAL_FIELDS[f];
    return [f, ...(spec.alsoNamed ?? [])].map((n) => [n, f] as const);
  }),
);

export function isPersonalField(name: string): name is PersonalField {
  return Object.hasOwn(PERSONAL_FIELDS, name);
}
