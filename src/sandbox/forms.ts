import type { FormAudit, Individual, QuestionType } from '../source/schemas/index.ts';
import { FORM_QUESTION_TYPES } from '../source/schemas/index.ts';
import { CITIES, STREETS } from './names.ts';
import { personRef } from './records.ts';
import type { Rng } from './rng.ts';
import type { FormAnswer, FormDef, QuestionDef, RunLogFormDef, SandboxStore } from './store.ts';
import { dateTime, type Zone } from './time.ts';

const TEXT: Partial<Record<QuestionType, string>> = {
  'Dropdown List': 'Unit involved',
  'Radio Buttons': 'Severity',
  Checkboxes: 'Contributing factors',
  Textbox: 'Short summary',
  'Comments Box': 'Describe what happened',
  'Date/Time': 'When did it happen?',
  Number: 'Minutes delayed',
  'Yes/No': 'Was a supervisor notified?',
  'True/False': 'Protocol followed',
  'Ranking Sum': 'Share of time per task (sum 100)',
  Ranking: 'Rank the priorities',
  'Radio Button Matrix': 'Rate each area',
  'Checkbox Matrix': 'Equipment checked per compartment',
  'Textbox Matrix': 'Medication counts',
  'One or More Lines': 'Crew positions',
  'Rating Scale': 'Overall rating',
  'Service Dropdown List': 'Employee involved',
  'Attach Document': 'Supporting documents',
  Address: 'Location',
  Name: 'Witness name',
  'Custom Dropdown': 'Vehicle',
  Signature: 'Signature',
  'Run Log Crew': 'Crew on this run',
};

const OPTIONS = ['Medic 1', 'Medic 7', 'Rescue 3', 'Other'];
const ROWS = ['Cab', 'Patient compartment', 'Jump bag'];

function question(formId: number, k: number, type: QuestionType): QuestionDef {
  const page = k < 12 ? 1 : 2;
  const section = k < 6 ? 1 : k < 16 ? 2 : 3;
  return {
    QuestionId: formId * 100 + k + 1,
    QuestionType: type,
    QuestionText: TEXT[type] ?? type,
    QuestionAlias: k % 3 === 0 ? `q_${formId}_${k + 1}` : null,
    PageNumber: page,
    SectionName: ['General', 'Details', 'Sign-off'][section - 1] ?? 'General',
    SectionNumber: section,
    OrderNumber: k + 1,
    options: OPTIONS,
    rows: ROWS,
  };
}

const STATUSES = ['Draft', 'Submitted', 'Under Review', 'Closed'];

/** Generic forms: the first uses every one of the 22 question types, the others a subset each. */
export function buildForms(store: SandboxStore): void {
  const titles = [
    'Employee Incident Report',
    'Quality Improvement Review',
    'Education Record Submission',
    'Employee Health Exposure',
    'Shift Swap Request',
  ];
  store.forms = titles.map((FormTitle, i) => {
    const FormId = 101 + i;
    const types = i === 0 ? FORM_QUESTION_TYPES : FORM_QUESTION_TYPES.filter((_, k) => (k + i) % 3 !== 0);
    return { FormId, FormTitle, statuses: STATUSES, questions: types.map((t, k) => question(FormId, k, t)) };
  });
  const runTypes = [
    { id: 1, name: '911 Emergency', category: 'Emergency' },
    { id: 2, name: 'Interfacility Transfer', category: 'Non-Emergency' },
    { id: 3, name: 'Standby Event', category: 'Special Event' },
  ];
  store.runTypes = runTypes;
  const runTypesOf: [string, RunLogFormDef['FormType'], boolean][] = [
    ['Crew Debrief', 'Debrief', false],
    ['Unit Utilization', 'Utilization', false],
    ['Chart Review', 'ChartReview', false],
    ['Crew Debrief (2024)', 'Debrief', true],
  ];
  const inserted = Date.UTC(2024, 2, 1, 15, 30);
  store.runLogForms = runTypesOf.map(([FormTitle, FormType, Archived], i) => {
    const FormId = 201 + i;
    const types: QuestionType[] = [
      'Run Log Crew',
      'Yes/No',
      'Comments Box',
      'Rating Scale',
      'Date/Time',
      'Number',
      'Radio Buttons',
      'Checkboxes',
    ];
    return {
      FormId,
      FormTitle,
      FormType,
      statuses: STATUSES,
      questions: types.map((t, k) => question(FormId, k, t)),
      record: {
        FormId,
        FormType,
        Archived,
        InsertDate: dateTime(inserted + i * 86_400_000, -300),
        UpdateDate: dateTime(inserted + (i + 30) * 86_400_000, -300),
      },
    };
  });
}

export interface AnswerContext {
  responseId: number;
  atMs: number;
  zone: Zone;
  people: readonly Individual[];
  crew: readonly {
    CrewRole: string;
    ServiceId: number | null;
    EmployeeNumber: string | null;
    FirstName: string | null;
    LastName: string | null;
  }[];
}

const COMMENTS = [
  'Patient stable on arrival.\r\nHandoff to ED charge nurse at 14:05.',
  'Stretcher wheel sticking again.\r\nReported to fleet.\r\nUnit back in service.',
  'No issues.',
  'Crew of Zoë Nuñez and Łukasz Kowalczyk.\r\nTraffic on Route 9 delayed response.',
];

/** An AnswerValue in exactly the shape the spec's table gives for the question type; null when unanswered. */
export function answerValue(_store: SandboxStore, rng: Rng, q: QuestionDef, ctx: AnswerContext): unknown {
  if (q.QuestionType !== 'Signature' && rng.chance(0.08)) return null;
  const person = ctx.people.length > 0 ? rng.pick(ctx.people) : undefined;
  const rows = (f: (row: string) => unknown) => q.rows.map(f);
  switch (q.QuestionType) {
    case 'Dropdown List':
    case 'Radio Buttons': {
      const v = rng.pick(q.options);
      return { SelectedValue: v, OtherAnswerValue: v === 'Other' ? 'Mutual aid unit' : null };
    }
    case 'Checkboxes':
      return rng.sample(q.options, rng.int(1, 3));
    case 'Textbox':
      return rng.pick(['Delayed response', 'Equipment failure', 'Near miss', 'Café parking lot']);
    case 'Comments Box':
      return rng.pick(COMMENTS);
    case 'Date/Time':
      return dateTime(ctx.atMs - rng.int(1, 48) * 3_600_000, ctx.zone);
    case 'Number':
      return rng.chance(0.5) ? rng.int(0, 90) : Math.round(rng.next() * 1000) / 10;
    case 'Yes/No':
    case 'True/False':
      return rng.chance(0.5);
    case 'Ranking Sum': {
      const a = rng.int(0, 100);
      const b = rng.int(0, 100 - a);
      return [a, b, 100 - a - b].map((n, i) => ({ Row: q.rows[i] ?? `Row ${i + 1}`, SelectedValue: String(n) }));
    }
    case 'Ranking':
      return rng.sample([1, 2, 3], 3).map((n, i) => ({ Row: q.rows[i] ?? `Row ${i + 1}`, SelectedValue: String(n) }));
    case 'Radio Button Matrix':
    case 'Rating Scale':
    case 'One or More Lines':
      return rows((Row) => ({ Row, SelectedValue: rng.pick(['Poor', 'Fair', 'Good', 'Excellent']) }));
    case 'Checkbox Matrix':
      return rows((Row) => ({ Row, SelectedValues: rng.sample(['Checked', 'Restocked', 'Damaged'], rng.int(0, 2)) }));
    case 'Textbox Matrix':
      return rows((Row) => ({ Row, Column: 'Count', AnswerText: String(rng.int(0, 12)) }));
    case 'Service Dropdown List':
      return person ? `${person.LastName ?? ''}, ${person.FirstName ?? ''}` : null;
    case 'Name':
      return person ? `${person.FirstName ?? ''} ${person.LastName ?? ''}` : 'Unknown Witness';
    case 'Custom Dropdown':
      return rng.pick(['Medic 12', 'Rescue 3', 'Wheelchair Van 2']);
    case 'Address': {
      const place = rng.pick(CITIES);
      return {
        StreetAddress1: `${rng.int(1, 999)} ${rng.pick(STREETS)}`,
        StreetAddress2: null,
        City: place.city,
        State: place.state,
        ZipCode: place.zip,
      };
    }
    case 'Attach Document':
      // A root-relative address of the file download resource; the HTTP layer serves it under its base URL.
      return [{ FileUri: `/FormResponseDocument/GetFile?id=${ctx.responseId}&fileNumber=1&api-version=2.0` }];
    case 'Signature':
      return { HasSignature: rng.chance(0.9) };
    case 'Run Log Crew':
      return ctx.crew.map((c) => ({ ...c }));
  }
}

export function answersFor(store: SandboxStore, rng: Rng, form: FormDef, ctx: AnswerContext): FormAnswer[] {
  return form.questions.map((q) => ({
    QuestionId: q.QuestionId,
    QuestionType: q.QuestionType,
    QuestionText: q.QuestionText,
    QuestionAlias: q.QuestionAlias,
    PageNumber: q.PageNumber,
    SectionName: q.SectionName,
    AnswerValue: answerValue(store, rng, q, ctx),
  }));
}

/** The answer's text as the audit list shows it. */
function answerText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
  const selected = (value as { SelectedValue?: unknown }).SelectedValue;
  return typeof selected === 'string' ? selected : JSON.stringify(value);
}

/** Answers given or changed in one response: by whom, when and in which zone, and the run it belongs to. */
export interface AuditedAnswers {
  responseId: number;
  runId: string | null;
  answers: readonly FormAnswer[];
  by: Individual | undefined;
  atMs: number;
  zone: Zone;
}

/** One audit row per answer (service-spec.md, "FormAudit (one item per form response answer)"). */
export function auditRows(
  store: SandboxStore,
  form: FormDef,
  { responseId, runId, answers, by, atMs, zone }: AuditedAnswers,
): FormAudit[] {
  const insertDate = dateTime(atMs, zone);
  const who = by
    ? { UniqueIdentifier: by.UniqueNumber ?? null, FirstName: by.FirstName ?? null, LastName: by.LastName ?? null }
    : null;
  return answers.map((a) => {
    const q = form.questions.find((x) => x.QuestionId === a.QuestionId);
    const v = a.AnswerValue;
    const selected =
      v && typeof v === 'object' && !Array.isArray(v)
        ? (v as { SelectedValue?: string; OtherAnswerValue?: string | null })
        : undefined;
    const optionIndex = selected?.SelectedValue ? (q?.options.indexOf(selected.SelectedValue) ?? -1) : -1;
    return {
      ResponseId: responseId,
      RunId: runId,
      ItemId: a.QuestionId,
      AnswerId:
        v === null || v === undefined
          ? -1
          : optionIndex >= 0
            ? a.QuestionId * 10 + optionIndex
            : 1_000_000 + ++store.next.auditAnswer,
      AnswerText: answerText(v),
      OtherText: selected?.OtherAnswerValue ?? null,
      AnswerDate: a.QuestionType === 'Date/Time' && typeof v === 'string' ? v : null,
      ItemText: a.QuestionText ?? null,
      PageNumber: a.PageNumber ?? null,
      SectionNumber: q?.SectionNumber ?? null,
      OrderNumber: q?.OrderNumber ?? null,
      AuditIndividual: who,
      InsertDate: insertDate,
    };
  });
}

export function formEmployee(store: SandboxStore, ind: Individual | undefined) {
  return ind ? personRef(store, ind) : null;
}
