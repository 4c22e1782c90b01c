import type { z } from 'zod';
import type {
  AssignmentChange,
  Certification,
  Department,
  FormAudit,
  FormResponse as FormResponseSchema,
  FormResponseAnswer,
  Individual,
  IndividualCertification,
  IndividualCourse,
  JobTitle,
  Locale,
  QuestionType,
  RunLogForm,
  RunLogFormResponse as RunLogFormResponseSchema,
  Schedule,
  ShiftAssignment,
  ShiftAssignmentAssignee,
  TimeOffRequest,
  WorkShift,
  WorkStatus,
} from '../source/schemas/index.ts';
import type { WriteEndpoint } from './service.ts';
import { TimeTexts, dayOf, type Zone } from './time.ts';

/**
 * Form responses are kept in their wire shape: the parsed output adds AnswerValueMatchesType to each answer,
 * which the service never sends.
 */
type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
export type FormAnswer = Omit<Known<z.output<typeof FormResponseAnswer>>, 'AnswerValueMatchesType'>;
export type FormResponse = Omit<Known<z.output<typeof FormResponseSchema>>, 'Answers'> & {
  Answers?: FormAnswer[] | null;
};
export type RunLogFormResponse = Omit<Known<z.output<typeof RunLogFormResponseSchema>>, 'Answers'> & {
  Answers?: FormAnswer[] | null;
};
export type Assignee = z.output<typeof ShiftAssignmentAssignee>;

export interface LocaleInfo {
  readonly record: Locale;
  readonly businessUnitId: string | null;
  /** The time zone this locale's times are written in. */
  readonly zone: Zone;
  /** CertificationIds the locale requires of everyone working there. */
  readonly requires: readonly number[];
}

export interface JobTitleInfo {
  readonly record: JobTitle;
  readonly requires: readonly number[];
  readonly shiftWork: boolean;
}

export interface CertificationInfo {
  readonly record: Certification;
  readonly issuer: string;
  readonly years: number | null;
  readonly driver: boolean;
}

export interface ShiftDef {
  readonly ShiftId: number;
  readonly ShiftName: string;
  readonly startHour: number;
  readonly hours: number;
  readonly jobTitleId: number;
  readonly slots: number;
}

export interface ScheduleDef {
  readonly record: Schedule;
  readonly locale: LocaleInfo;
  readonly shifts: readonly ShiftDef[];
}

/** The assignments whose start falls on one UTC day, ordered by (start, ShiftAssignmentId). */
export interface DayBucket {
  items: ShiftAssignment[];
  starts: number[];
}

export interface TimeOffEntry {
  readonly seq: number;
  readonly serviceId: number;
  readonly startMs: number;
  readonly endMs: number;
  rec: TimeOffRequest;
}

export type CourseOutcome = 'inProgress' | 'failed' | 'succeeded';

export interface CourseEntry {
  readonly individualId: number;
  readonly outcome: CourseOutcome;
  readonly rec: IndividualCourse;
}

export interface QuestionDef {
  readonly QuestionId: number;
  readonly QuestionType: QuestionType;
  readonly QuestionText: string;
  readonly QuestionAlias: string | null;
  readonly PageNumber: number;
  readonly SectionName: string;
  readonly SectionNumber: number;
  readonly OrderNumber: number;
  readonly options: readonly string[];
  readonly rows: readonly string[];
}

export interface FormDef {
  readonly FormId: number;
  readonly FormTitle: string;
  readonly questions: readonly QuestionDef[];
  readonly statuses: readonly string[];
}

export interface RunLogFormDef extends FormDef {
  readonly record: RunLogForm;
  readonly FormType: 'Debrief' | 'Utilization' | 'ChartReview';
}

export interface RunType {
  readonly id: number;
  readonly name: string;
  readonly category: string;
}

/** A form response with the stamps the service filters on but does not show in the record. */
export interface ResponseEntry {
  readonly formId: number;
  readonly startMs: number;
  updatedMs: number;
  rec: FormResponse;
}

export interface RunLogEntry {
  readonly formId: number;
  readonly formType: RunLogFormDef['FormType'];
  readonly runTypeId: number;
  readonly runMs: number;
  readonly zone: Zone;
  updatedMs: number;
  rec: RunLogFormResponse;
}

export interface PendingState {
  VerificationStatus: string;
  IssuingBodyFailureReason: string[] | null;
}

/**
 * The sandbox's data. Records are immutable: a change puts a new object in place of the old one.
 * `version` moves on every change so memoized query results know they are stale.
 */
export class SandboxStore {
  version = 0;
  nowMs: number;
  readonly companyId: number;

  certifications: CertificationInfo[] = [];
  workStatuses: WorkStatus[] = [];
  departments: Department[] = [];
  workShifts: WorkShift[] = [];
  jobTitles: JobTitleInfo[] = [];
  locales: LocaleInfo[] = [];
  schedules: ScheduleDef[] = [];

  /** By ServiceId, in ServiceId order (new ServiceIds are always larger). */
  readonly individuals = new Map<number, Individual>();
  readonly byEmployeeNumber = new Map<string, number>();
  readonly byUniqueNumber = new Map<string, number>();
  readonly byLogonId = new Map<string, number>();
  /** SHA-256 of each SSN received; the SSN itself is never kept. */
  readonly ssnHashes = new Map<number, string>();
  readonly assignees = new Map<number, Assignee>();
  /** Shift start and end texts, shared by all assignments and change records of a shift. */
  readonly shiftTimes = new TimeTexts();

  /** By IndividualCertificationId, in id order. */
  readonly certs = new Map<number, IndividualCertification>();
  readonly certIdsByServiceId = new Map<number, number[]>();
  readonly pending = new Map<number, PendingState>();
  /** Every write applied, per write endpoint, in order; verification results one per item. */
  readonly applied: Record<WriteEndpoint, object[]> = {
    individualInsert: [],
    individualUpdate: [],
    certificationInsert: [],
    certificationUpdate: [],
    validateSubmission: [],
  };
  /** RequestIds of the verification results applied: a resent one is not applied again. */
  readonly requestIds = new Set<string>();
  duplicateRequestIds = 0;

  readonly days = new Map<number, DayBucket>();
  firstDay = Infinity;
  lastDay = -Infinity;
  /** The last day for which schedules have been published. */
  horizonDay = 0;
  readonly changes: AssignmentChange[] = [];
  readonly changeTimes: number[] = [];

  readonly timeOff: TimeOffEntry[] = [];
  readonly courses: CourseEntry[] = [];
  forms: FormDef[] = [];
  readonly responses = new Map<number, ResponseEntry[]>();
  runLogForms: RunLogFormDef[] = [];
  runTypes: RunType[] = [];
  readonly runLogResponses: RunLogEntry[] = [];
  readonly audit: FormAudit[] = [];
  readonly auditTimes: number[] = [];
  readonly auditFormIds: number[] = [];

  next = {
    individual: 0,
    cert: 0,
    assignment: 0,
    timeOff: 0,
    course: 0,
    response: 0,
    run: 0,
    auditAnswer: 0,
    identifier: 0,
  };
  /** How late an event may become visible after its stamp (change records, audit rows); 0 turns late stamps off. */
  lateMs = 30 * 60_000;

  constructor(nowMs: number, companyId: number) {
    this.nowMs = nowMs;
    this.companyId = companyId;
  }

  bump(): void {
    this.version++;
  }

  individual(serviceId: number): Individual | undefined {
    return this.individuals.get(serviceId);
  }

  /** Puts an individual in place and keeps the unique-key indexes in step. */
  putIndividual(ind: Individual): void {
    const old = this.individuals.get(ind.ServiceId);
    if (old) {
      if (old.EmployeeNumber) this.byEmployeeNumber.delete(old.EmployeeNumber);
      if (old.UniqueNumber) this.byUniqueNumber.delete(old.UniqueNumber);
      if (old.LogonId) this.byLogonId.delete(old.LogonId.toLowerCase());
    }
    this.individuals.set(ind.ServiceId, ind);
    if (ind.EmployeeNumber) this.byEmployeeNumber.set(ind.EmployeeNumber, ind.ServiceId);
    if (ind.UniqueNumber) this.byUniqueNumber.set(ind.UniqueNumber, ind.ServiceId);
    if (ind.LogonId) this.byLogonId.set(ind.LogonId.toLowerCase(), ind.ServiceId);
    this.assignees.delete(ind.ServiceId);
  }

  putCert(cert: IndividualCertification): void {
    const id = cert.IndividualCertificationId;
    if (!this.certs.has(id) && cert.ServiceId != null) {
      const ids = this.certIdsByServiceId.get(cert.ServiceId);
      if (ids) ids.push(id);
      else this.certIdsByServiceId.set(cert.ServiceId, [id]);
    }
    this.certs.set(id, cert);
  }

  certsOf(serviceId: number): IndividualCertification[] {
    const ids = this.certIdsByServiceId.get(serviceId) ?? [];
    return ids.map((id) => this.certs.get(id)).filter((c): c is IndividualCertification => c !== undefined);
  }

  bucket(day: number): DayBucket {
    let b = this.days.get(day);
    if (!b) {
      b = { items: [], starts: [] };
      this.days.set(day, b);
      if (day < this.firstDay) this.firstDay = day;
      if (day > this.lastDay) this.lastDay = day;
    }
    return b;
  }

  /** Inserts an assignment at its place in its day, keeping (start, id) order. */
  insertAssignment(a: ShiftAssignment, startMs: number): void {
    const b = this.bucket(dayOf(startMs));
    let i = b.starts.length;
    while (
      i > 0 &&
      ((b.starts[i - 1] as number) > startMs ||
        ((b.starts[i - 1] as number) === startMs &&
          (b.items[i - 1] as ShiftAssignment).ShiftAssignmentId > a.ShiftAssignmentId))
    )
      i--;
    b.items.splice(i, 0, a);
    b.starts.splice(i, 0, startMs);
  }

  /** Appends during generation; the generator sorts each day once at the end. */
  insertAssignmentUnsorted(a: ShiftAssignment, startMs: number): void {
    const b = this.bucket(dayOf(startMs));
    b.items.push(a);
    b.starts.push(startMs);
  }

  addChange(c: AssignmentChange, atMs: number): void {
    this.changes.push(c);
    this.changeTimes.push(atMs);
  }

  addAudit(row: FormAudit, atMs: number, formId: number): void {
    this.audit.push(row);
    this.auditTimes.push(atMs);
    this.auditFormIds.push(formId);
  }

  jobTitleByName(name: string): JobTitleInfo | undefined {
    return this.jobTitles.find((j) => j.record.JobTitleName === name);
  }

  jobTitleById(id: number | null | undefined): JobTitleInfo | undefined {
    return this.jobTitles.find((j) => j.record.JobTitleId === id);
  }

  localeByName(name: string | null | undefined): LocaleInfo | undefined {
    return this.locales.find((l) => l.record.LocaleName === name);
  }

  certification(id: number | null | undefined): CertificationInfo | undefined {
    return this.certifications.find((c) => c.record.CertificationId === id);
  }
}
