import type { Individual } from '../source/schemas/index.ts';
import { answersFor, answerValue, auditRows, formEmployee, type AnswerContext } from './forms.ts';
import { CITIES, STREETS } from './names.ts';
import type { Rng } from './rng.ts';
import type {
  FormAnswer,
  FormDef,
  FormResponse,
  LocaleInfo,
  ResponseEntry,
  RunLogEntry,
  RunLogFormDef,
  RunLogFormResponse,
  RunType,
  SandboxStore,
} from './store.ts';
import { COMPANY_ZONE, dateTime, latestStamp } from './time.ts';
import { zoneOf } from './time-off.ts';

const ATTACHED_TO = [
  'IndividualRecord',
  'QualityImprovement',
  'EducationRecord',
  'EmployeeHealth',
  'FormsOnly',
] as const;

/** Each generic form is attached to one kind of record, so every AttachedToType occurs. */
function attachedToOf(store: SandboxStore, form: FormDef): (typeof ATTACHED_TO)[number] {
  return ATTACHED_TO[store.forms.indexOf(form) % ATTACHED_TO.length] ?? 'FormsOnly';
}

/** A new response to a generic form, started at `startMs`, with its audit rows. */
export function makeFormResponse(
  store: SandboxStore,
  rng: Rng,
  form: FormDef,
  startMs: number,
  people: readonly Individual[],
): ResponseEntry {
  const submitter = rng.pick(people);
  const related = rng.pick(people);
  const zone = zoneOf(store, submitter);
  const responseId = 600_000 + ++store.next.response;
  const attached = attachedToOf(store, form);
  const ctx: AnswerContext = { responseId, atMs: startMs, zone, people, crew: [] };
  const answers = answersFor(store, rng, form, ctx);
  const ref = formEmployee(store, related);
  const rec: FormResponse = {
    ResponseId: responseId,
    SubmittedBy: formEmployee(store, submitter),
    StartDate: dateTime(startMs, zone),
    AssignedTo: rng.chance(0.85) ? formEmployee(store, rng.pick(people)) : null,
    Status: rng.pick(form.statuses),
    AttachedToType: attached,
    RelatedIndividual: attached === 'IndividualRecord' || attached === 'EducationRecord' ? ref : null,
    RelatedEmployeeHealthEvent:
      attached === 'EmployeeHealth'
        ? {
            HealthEventId: 40_000 + (responseId % 100_000),
            HealthEventType: rng.pick(['Needlestick', 'Exposure', 'Back Injury']),
            EventDateTime: dateTime(startMs - rng.int(1, 72) * 3_600_000, zone),
            RelatedIndividual: ref,
          }
        : null,
    RelatedQualityImprovementIncident:
      attached === 'QualityImprovement'
        ? {
            IncidentId: 50_000 + (responseId % 100_000),
            IncidentType: rng.pick(['Medication Error', 'Delayed Response', 'Equipment']),
            IncidentDateTime: dateTime(startMs - rng.int(1, 96) * 3_600_000, zone),
          }
        : null,
    RelatedShift:
      attached === 'FormsOnly'
        ? {
            ShiftName: rng.pick(['A Shift 0700-1900', 'B Shift 1900-0700']),
            ShiftDate: dateTime(startMs + rng.int(1, 14) * 86_400_000, zone),
          }
        : null,
    Answers: answers,
  };
  const submittedMs = Math.min(startMs + rng.int(2, 90) * 60_000, latestStamp(store.nowMs));
  for (const row of auditRows(store, form, {
    responseId,
    runId: null,
    answers,
    by: submitter,
    atMs: submittedMs,
    zone,
  }))
    store.addAudit(row, submittedMs, form.FormId);
  return { formId: form.FormId, startMs, updatedMs: submittedMs, rec };
}

/** Changes a few answers (and maybe the status) of a response at `atMs`; the changed answers get audit rows. */
export function editAnswers(
  store: SandboxStore,
  rng: Rng,
  form: FormDef,
  answers: readonly FormAnswer[],
  ctx: AnswerContext,
): { answers: FormAnswer[]; changed: FormAnswer[] } {
  const picks = new Set(
    rng.sample(
      answers.map((_, i) => i),
      rng.int(1, 3),
    ),
  );
  const changed: FormAnswer[] = [];
  const next = answers.map((a, i) => {
    const q = form.questions.find((x) => x.QuestionId === a.QuestionId);
    if (!picks.has(i) || !q) return a;
    const edited = { ...a, AnswerValue: answerValue(store, rng, q, ctx) };
    changed.push(edited);
    return edited;
  });
  return { answers: next, changed };
}

/** When a response is edited, by whom, and the people its answers may name. */
export interface ResponseEdit {
  atMs: number;
  editor: Individual;
  people: readonly Individual[];
}

export function editFormResponse(
  store: SandboxStore,
  rng: Rng,
  entry: ResponseEntry,
  form: FormDef,
  { atMs, editor, people }: ResponseEdit,
): void {
  const zone = zoneOf(store, editor);
  const ctx: AnswerContext = { responseId: entry.rec.ResponseId, atMs, zone, people, crew: [] };
  const { answers, changed } = editAnswers(store, rng, form, entry.rec.Answers ?? [], ctx);
  entry.rec = { ...entry.rec, Status: rng.chance(0.5) ? rng.pick(form.statuses) : entry.rec.Status, Answers: answers };
  entry.updatedMs = atMs;
  for (const row of auditRows(store, form, {
    responseId: entry.rec.ResponseId,
    runId: null,
    answers: changed,
    by: editor,
    atMs,
    zone,
  }))
    store.addAudit(row, atMs, form.FormId);
}

const ROLES = ['Lead', 'Driver', 'Attendant'];

/** Who and where a run happened: its type, its crew and their locale's zone. */
interface RunScene {
  runMs: number;
  runType: RunType;
  crewPeople: readonly Individual[];
  locale: LocaleInfo | undefined;
  zone: AnswerContext['zone'];
  crew: AnswerContext['crew'][number][];
  /** The company's people, whom the answers may name. */
  people: readonly Individual[];
}

/** A run with its run-log form responses: always a debrief, often utilization and chart review forms. */
export function makeRun(
  store: SandboxStore,
  rng: Rng,
  runMs: number,
  people: readonly Individual[],
  crewPool: readonly Individual[],
): RunLogEntry[] {
  const runType = rng.pick(store.runTypes);
  const crewPeople = rng.sample(crewPool.length > 0 ? crewPool : people, rng.int(2, 3));
  const locale = store.localeByName(crewPeople[0]?.Locale) ?? store.locales[0];
  const zone = locale?.zone ?? COMPANY_ZONE;
  const crew = crewPeople.map((p, i) => ({
    CrewRole: ROLES[i] ?? 'Attendant',
    ServiceId: p.ServiceId,
    EmployeeNumber: p.EmployeeNumber ?? null,
    FirstName: p.FirstName ?? null,
    LastName: p.LastName ?? null,
  }));
  const scene: RunScene = { runMs, runType, crewPeople, locale, zone, crew, people };
  const run = runRecord(store, rng, scene);
  return runLogForms(store, rng, runMs).map((form) => runLogResponse(store, rng, scene, run, form));
}

/** The run as the service reports it beside each of its run-log responses. */
function runRecord(store: SandboxStore, rng: Rng, { runMs, runType, crewPeople, locale, zone, crew }: RunScene) {
  const seq = ++store.next.run;
  const place = rng.pick(CITIES);
  const transported = rng.chance(0.1) ? null : rng.chance(0.8);
  const automatic = rng.chance(0.15);
  return {
    RunId: `R${dateTime(runMs, zone).slice(0, 10).replaceAll('-', '')}-${String(seq).padStart(6, '0')}`,
    RunType: runType.name,
    RunCategory: runType.category,
    RunDateTime: dateTime(runMs, zone),
    // The spec shows the creator as 0 when the run was created automatically.
    StartedBy: automatic
      ? { ServiceId: 0, EmployeeNumber: null, FirstName: null, LastName: null }
      : formEmployee(store, crewPeople[0]),
    Locale: { LocaleName: locale?.record.LocaleName ?? null, BusinessId: locale?.businessUnitId ?? null },
    PatientContact: rng.chance(0.85),
    PatientAge: rng.pick(['NotSpecified', 'Neonatal', 'Pediatric', 'Adult', 'Adult', 'Adult']),
    TransportCompleted: transported,
    NotCompletedReasons:
      transported === false ? rng.pick(['Patient refusal', 'Cancelled en route', 'Treated and released']) : null,
    NotCompletedDetails:
      transported === false && rng.chance(0.5) ? 'Patient signed refusal form.\r\nFamily present.' : null,
    Priority: rng.pick(['Emergent', 'Urgent', 'Routine']),
    PriorityNotes: rng.chance(0.2) ? 'Upgraded on scene.\r\nALS intercept requested.' : null,
    PriorityComplete: rng.chance(0.7),
    PriorityCompleteNotes: null,
    FutureDiscussion: rng.chance(0.1),
    FutureDiscussionNotes: rng.chance(0.05) ? 'Discuss at next crew meeting' : null,
    FutureDiscussionComplete: rng.chance(0.5),
    PurposeOfRun: rng.pick(['Medical', 'Trauma', 'Transfer', 'Standby']),
    RequestingAgencyOrFacility: rng.chance(0.5)
      ? rng.pick(['St. Mary Hospital', 'County 911', 'Hôpital Saint-Jérôme'])
      : null,
    DestinationGPSLocation: rng.chance(0.3) ? `${(39 + rng.next()).toFixed(5)},${(-89 - rng.next()).toFixed(5)}` : null,
    MilePostOrMajorRoadway: rng.chance(0.2) ? `I-55 MP ${rng.int(1, 290)}` : null,
    SceneCrossStreetOrDirections: rng.chance(0.3) ? `${rng.pick(STREETS)} & ${rng.pick(STREETS)}` : null,
    IncidentAddress: {
      StreetAddress1: `${rng.int(1, 9999)} ${rng.pick(STREETS)}`,
      StreetAddress2: null,
      City: place.city,
      State: place.state,
      ZipCode: place.zip,
      Country: place.country,
    },
    Crew: crew,
    TimeframeOfRun: rng.pick(['Day', 'Night', 'Overnight']),
    CommunicationsCenter: rng.chance(0.8) ? 'County Communications' : null,
    PatientCareReportNumber: rng.chance(0.9) ? `PCR-${rng.int(1_000_000, 9_999_999)}` : null,
    MatchedRules: rng.chance(0.3) ? [rng.pick(['Cardiac arrest review', 'Pediatric review', 'Refusal review'])] : null,
  };
}

/** The run-log forms a run gets: a debrief always; archived forms only for runs older than half a year. */
function runLogForms(store: SandboxStore, rng: Rng, runMs: number): RunLogFormDef[] {
  const oldRun = runMs < store.nowMs - 180 * 86_400_000;
  const forms: RunLogFormDef[] = [];
  for (const type of ['Debrief', 'Utilization', 'ChartReview'] as const) {
    if (type === 'Utilization' && !rng.chance(0.5)) continue;
    if (type === 'ChartReview' && !rng.chance(0.4)) continue;
    const candidates = store.runLogForms.filter((f) => f.FormType === type && (oldRun || !f.record.Archived));
    forms.push(rng.pick(candidates));
  }
  return forms;
}

/** One run-log response to `form`, submitted by the run's lead, with its audit rows. */
function runLogResponse(
  store: SandboxStore,
  rng: Rng,
  { runMs, runType, crewPeople, zone, crew, people }: RunScene,
  run: ReturnType<typeof runRecord>,
  form: RunLogFormDef,
): RunLogEntry {
  const responseId = 600_000 + ++store.next.response;
  const submitter = crewPeople[0] ?? rng.pick(people);
  const startMs = Math.min(runMs + rng.int(30, 240) * 60_000, latestStamp(store.nowMs));
  const ctx: AnswerContext = { responseId, atMs: startMs, zone, people, crew };
  const answers = answersFor(store, rng, form, ctx);
  const rec: RunLogFormResponse = {
    ResponseId: responseId,
    SubmittedBy: formEmployee(store, submitter),
    StartDate: dateTime(startMs, zone),
    AssignedTo: rng.chance(0.7) ? formEmployee(store, rng.pick(people)) : null,
    Status: rng.pick(form.statuses),
    AttachedToType: 'RunLog',
    Answers: answers,
    RelatedRun: run,
  };
  const submittedMs = Math.min(startMs + rng.int(5, 60) * 60_000, latestStamp(store.nowMs));
  for (const row of auditRows(store, form, {
    responseId,
    runId: run.RunId,
    answers,
    by: submitter,
    atMs: submittedMs,
    zone,
  }))
    store.addAudit(row, submittedMs, form.FormId);
  return {
    formId: form.FormId,
    formType: form.FormType,
    runTypeId: runType.id,
    runMs,
    zone,
    updatedMs: submittedMs,
    rec,
  };
}
