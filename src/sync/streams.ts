import { RUN_LOG_FORM_TYPES } from '../source/schemas/forms.ts';
import { COURSE_STATUS_OPTIONS } from '../source/schemas/course.ts';
import { endpoints, type Endpoint } from '../source/endpoints.ts';
import type { Lane } from '../ratelimit/types.ts';
import type { TargetName } from '../warehouse/targets.ts';

/**
 * The stream catalog: each stream is data — its endpoint, fixed parameters, how it moves forward,
 * its warehouse target and its partitions. One engine (engine.ts) runs any of them.
 */

/** Every stream of the catalog by name: job stream lists and dependencies are checked against it. */
export const STREAM_NAMES = [
  'certifications',
  'work-statuses',
  'departments',
  'work-shifts',
  'job-titles',
  'locales',
  'individuals',
  'supervisors',
  'schedules',
  'run-log-forms',
  'individual-certifications',
  'pending-certifications',
  'required-certification-status',
  'assignment-changes',
  'shift-assignments',
  'time-off-requests',
  'individual-courses',
  'form-responses',
  'run-log-form-responses',
  'form-audit',
] as const;

export type StreamName = (typeof STREAM_NAMES)[number];

/**
 * A periodic complete re-read: the bound on changes the service gives no signal for. Each pass reads its span
 * completely (rows it does not return are gone) at most once per `everyHours`.
 */
export interface Reread {
  name: string;
  everyHours: number;
  /** The span read, around now; without it, the span of the backfill. */
  span?: { backDays: number; forwardDays: number };
  /** Which changes only this re-read brings. */
  reason: string;
}

/** One request or one paged read of everything; rows missing from a complete read get `_deleted_at`. */
export interface Full {
  kind: 'full';
}

/**
 * Paged lists with no filter: every page each run. A record that moves while pages are read can be skipped by
 * offset paging, so a row is marked gone only when two complete reads in a row miss it.
 */
export interface Snapshot {
  kind: 'snapshot';
  /**
   * Rows that follow an employee (required credential status): between complete reads (`rereads`), a run reads
   * by `param` only the employees a signal names (their individual row or credentials changed, a credential of
   * theirs expired, or the last complete read missed them), unless they are more than the list's pages.
   */
  followEmployees?: { param: string; column: string };
  rereads?: readonly Reread[];
}

/**
 * Reads what changed since the checkpoint. The checkpoint is the signpost taken when the read started,
 * written with the last page, so nothing updated while pages were read is skipped next time.
 */
export interface UpdatedSince {
  kind: 'updated-since';
  param: string;
  /** `date` parameters lose the time of day, so the next read starts a day earlier. */
  precision: 'date' | 'datetime';
  overlapMs: number;
  /** Required range parameters the endpoint filters on besides the update stamp (form start, run date). */
  range?: { start: string; end: string; backDays: number; forwardDays: number };
  /**
   * The records follow their individual (credentials): an individual whose row changed or came back since the
   * last run has its records read again by `param`, since the service does not bump their update stamp; records
   * of individuals outside `statuses` are gone from the list.
   */
  followIndividuals?: {
    param: string;
    column: string;
    statuses: readonly string[];
    /** Record column → the individual's column it repeats: only a change to these (or `derivedFrom`) is followed. */
    copies: Readonly<Record<string, string>>;
    /** Record column repeating the individual's additional job titles. */
    jobTitles?: string;
    /** Individual columns the records derive values from without repeating them. */
    derivedFrom: readonly string[];
  };
  rereads?: readonly Reread[];
}

/**
 * Reads by a date range, sliced. `append`: event-time data, read from the checkpoint up to now.
 * `reread`: period data that changes in place; backfill once, then re-read a rolling window each run.
 */
export interface Windowed {
  kind: 'windowed';
  mode: 'append' | 'reread';
  start: string;
  end: string;
  sliceDays: number;
  backfillDays: number;
  forwardDays: number;
  /** `reread`: how far back the rolling window reaches. */
  rollingDays?: number;
  /** `append`: how far before the checkpoint each read starts again, and why that is enough. */
  overlap?: { ms: number; reason: string };
  /** Rows of a completely read window that the service no longer returns get `_deleted_at`. */
  deleteMissing?: { startColumn: string; endColumn?: string };
  /**
   * An empty answer for a window the warehouse holds rows in is confirmed by reading its halves: a service that
   * answers a range it will not fulfil with an empty list must not delete the window's rows.
   */
  confirmEmpty?: boolean;
  rereads?: readonly Reread[];
}

/**
 * Re-reads only what change records name (the start instants of changed assignments), the rows that left the
 * clocked-in list, and the horizon as time moves forward. Backfills like a windowed stream the first time.
 */
export interface ChangeDriven {
  kind: 'change-driven';
  start: string;
  end: string;
  sliceDays: number;
  backfillDays: number;
  forwardDays: number;
  startColumn: string;
  /**
   * Rows still open (clocked in, not yet out): the list filtered by `param` is read each run up to `maxDays`
   * back; rows it returns are written, open rows it no longer returns are read again at their start.
   */
  openWhile: { param: string; set: string; unset: string; maxDays: number };
  /** Where the change records are: the stream that syncs them and the columns of its table this stream reads. */
  changes: {
    stream: StreamName;
    table: string;
    /** The start of the record that changed: it is read again. */
    dayColumn: string;
    /** The changed record's key in this stream's table. */
    keyColumn: string;
    /** A change that deletes the record. */
    deleted: { column: string; value: string };
    /** When the change happened: changes from before a backfill began are held by the backfill itself. */
    eventColumn: string;
  };
  rereads?: readonly Reread[];
}

/**
 * Records with an open status that the service decides later (time off: Pending). Each run reads the open ones
 * (`statusParam`); the records the warehouse holds as open that the list no longer returns were decided (or
 * deleted), and are read with the `decided` statuses over their own periods, merged into as few paged reads as
 * the records between them allow (windows.ts `mergeByCost`).
 */
export interface StatusDriven {
  kind: 'status-driven';
  start: string;
  end: string;
  backfillDays: number;
  forwardDays: number;
  statusParam: string;
  open: string;
  /** Every status a decision leaves a record in: what a read for decisions asks for. */
  decided: readonly string[];
  statusColumn: string;
  deleteMissing: { startColumn: string; endColumn?: string };
  rereads?: readonly Reread[];
}

export type Strategy = Full | Snapshot | UpdatedSince | Windowed | ChangeDriven | StatusDriven;

export type PartitionSource = 'formIds' | 'runTypes';

export interface StreamDef {
  name: StreamName;
  endpoint: Endpoint;
  /** Warehouse target (src/warehouse/targets.ts), named like the endpoint. */
  target: TargetName;
  strategy: Strategy;
  /** Parameters sent on every request of the stream. */
  fixed?: Record<string, unknown>;
  partitions?: PartitionSource;
  /**
   * Streams whose rows this one reads from the warehouse; they run first, except where the engine says a run
   * does not read them (engine.ts `readsDependencies`: a change-driven backfill).
   */
  dependsOn?: StreamName[];
  lane?: Lane;
}

const full: Full = { kind: 'full' };

/** Assignment change records name the shift assignments and days that changed. */
const assignmentChanges: ChangeDriven['changes'] = {
  stream: 'assignment-changes',
  table: 'assignment_changes',
  dayColumn: 'start_date_time',
  keyColumn: 'shift_assignment_id',
  deleted: { column: 'event_type', value: 'Deleted' },
  eventColumn: 'event_time_stamp',
};
const DAY = 86_400_000;

const reference = (name: StreamName, endpoint: Endpoint, target: TargetName): StreamDef => ({
  name,
  endpoint,
  target,
  strategy: full,
});

const HOURS_A_WEEK = 168;

export const streams: readonly StreamDef[] = [
  reference('certifications', endpoints.certifications, 'certifications'),
  reference('work-statuses', endpoints.workStatuses, 'workStatuses'),
  reference('departments', endpoints.departments, 'departments'),
  reference('work-shifts', endpoints.workShifts, 'workShifts'),
  reference('job-titles', endpoints.jobTitles, 'jobTitles'),
  reference('locales', endpoints.locales, 'locales'),
  { name: 'individuals', endpoint: endpoints.individuals, target: 'individuals', strategy: full },
  { name: 'supervisors', endpoint: endpoints.supervisors, target: 'supervisors', strategy: full },
  { name: 'schedules', endpoint: endpoints.schedules, target: 'schedules', strategy: full },
  { name: 'run-log-forms', endpoint: endpoints.runLogForms, target: 'runLogForms', strategy: full },
  {
    name: 'individual-certifications',
    endpoint: endpoints.individualCertifications,
    target: 'individualCertifications',
    strategy: {
      kind: 'updated-since',
      param: 'updatedSince',
      precision: 'date',
      overlapMs: DAY,
      followIndividuals: {
        param: 'ServiceId',
        column: 'service_id',
        statuses: ['Active', 'LOA'],
        copies: {
          first_name: 'first_name',
          last_name: 'last_name',
          legal_first_name: 'legal_first_name',
          legal_middle_name: 'legal_middle_name',
          legal_last_name: 'legal_last_name',
          unique_identifier: 'unique_number',
          job_title_id: 'job_title_id',
          job_title: 'job_title',
        },
        jobTitles: 'additional_job_titles',
        // A credential's business unit comes from its holder's locale, and whether it is primary from the
        // requirements of the holder's job title and locale.
        derivedFrom: ['locale', 'job_title_id'],
      },
      // The weekly full read is its own job (credentials-full-refresh).
    },
    fixed: { IncludeDeleted: true },
    dependsOn: ['individuals'],
  },
  {
    name: 'pending-certifications',
    endpoint: endpoints.pendingCertifications,
    target: 'pendingCertifications',
    strategy: { kind: 'snapshot' },
  },
  {
    name: 'required-certification-status',
    endpoint: endpoints.requiredCertificationStatus,
    target: 'requiredCertificationStatus',
    strategy: {
      kind: 'snapshot',
      followEmployees: { param: 'ServiceId', column: 'employment_service_id' },
      rereads: [
        {
          name: 'all',
          everyHours: 24,
          reason: 'requirement rules, certification names and anything else not on an individual or a credential carry no signal',
        },
      ],
    },
  },
  {
    name: 'assignment-changes',
    endpoint: endpoints.assignmentChanges,
    target: 'assignmentChanges',
    strategy: {
      kind: 'windowed',
      mode: 'append',
      start: 'StartDate',
      end: 'EndDate',
      sliceDays: 7,
      backfillDays: 400,
      forwardDays: 0,
      overlap: {
        ms: 60 * 60_000,
        reason:
          'change records are stamped when the change is saved; a record committed after a read that its stamp precedes is late by the length of a save, far under an hour; sync_runs.details.duplicates counts what the overlap absorbed',
      },
    },
  },
  {
    name: 'shift-assignments',
    endpoint: endpoints.shiftAssignments,
    target: 'shiftAssignments',
    strategy: {
      kind: 'change-driven',
      start: 'StartDate',
      end: 'EndDate',
      sliceDays: 7,
      backfillDays: 400,
      forwardDays: 90,
      startColumn: 'start_date_time',
      openWhile: { param: 'OnlyClockedInShifts', set: 'clock_in_date_time', unset: 'clock_out_date_time', maxDays: 14 },
      changes: assignmentChanges,
      rereads: [
        {
          name: 'recent-and-ahead',
          everyHours: 24,
          span: { backDays: 14, forwardDays: 90 },
          reason: 'times, vehicles, schedule and shift names and clock corrections change without a change record',
        },
        {
          name: 'all',
          everyHours: HOURS_A_WEEK,
          reason: 'an assignment moved to a day outside the daily span, and changes to older days, have no change record',
        },
      ],
    },
    dependsOn: [assignmentChanges.stream],
  },
  {
    name: 'time-off-requests',
    endpoint: endpoints.timeOffRequests,
    target: 'timeOffRequests',
    strategy: {
      kind: 'status-driven',
      start: 'StartDateTime',
      end: 'EndDateTime',
      backfillDays: 800,
      forwardDays: 400,
      statusParam: 'RequestStatus',
      open: 'Pending',
      decided: ['Approved', 'Denied', 'Canceled'],
      statusColumn: 'status',
      deleteMissing: { startColumn: 'start_date_time', endColumn: 'end_date_time' },
      rereads: [
        {
          name: 'recent-and-ahead',
          everyHours: 24,
          span: { backDays: 120, forwardDays: 400 },
          reason: 'a decided request that changes again (approved, then canceled), a request entered already decided, and deletions carry no signal',
        },
        {
          name: 'all',
          everyHours: HOURS_A_WEEK,
          reason: 'the same changes to requests that started more than 120 days ago',
        },
      ],
    },
  },
  {
    name: 'individual-courses',
    endpoint: endpoints.individualCourses,
    target: 'individualCourses',
    strategy: {
      kind: 'windowed',
      mode: 'reread',
      start: 'startDate',
      end: 'endDate',
      // 31 days counted inclusively: startDate and endDate 30 days apart.
      sliceDays: 31,
      backfillDays: 400,
      forwardDays: 31,
      rollingDays: 62,
      deleteMissing: { startColumn: 'start_date' },
      confirmEmpty: true,
      rereads: [
        {
          name: 'all',
          everyHours: 24,
          reason: 'status changes of courses started before the rolling window, and deletions, carry no signal',
        },
      ],
    },
    fixed: { statusOption: COURSE_STATUS_OPTIONS.all },
  },
  {
    name: 'form-responses',
    endpoint: endpoints.formResponses,
    target: 'formResponses',
    strategy: {
      kind: 'updated-since',
      param: 'UpdatedSince',
      precision: 'date',
      overlapMs: DAY,
      range: { start: 'StartDate', end: 'EndDate', backDays: 3650, forwardDays: 366 },
      rereads: [{ name: 'all', everyHours: 24, reason: 'a deleted response leaves no updated record behind' }],
    },
    partitions: 'formIds',
  },
  {
    name: 'run-log-form-responses',
    endpoint: endpoints.runLogFormResponses,
    target: 'runLogFormResponses',
    strategy: {
      kind: 'updated-since',
      param: 'UpdatedSince',
      precision: 'datetime',
      overlapMs: 60 * 60_000,
      range: { start: 'StartDate', end: 'EndDate', backDays: 3650, forwardDays: 366 },
      rereads: [{ name: 'all', everyHours: 24, reason: 'a deleted response leaves no updated record behind' }],
    },
    partitions: 'runTypes',
  },
  {
    name: 'form-audit',
    endpoint: endpoints.formAudit,
    target: 'formAudit',
    strategy: {
      kind: 'windowed',
      mode: 'append',
      start: 'StartDate',
      end: 'EndDate',
      sliceDays: 31,
      backfillDays: 400,
      forwardDays: 0,
      overlap: {
        ms: 60 * 60_000,
        reason:
          'audit rows are stamped when an answer is saved; one committed after a read that its stamp precedes is late by the length of a save, far under an hour; sync_runs.details.duplicates counts what the overlap absorbed',
      },
    },
  },
];

export function isStreamName(name: string): name is StreamName {
  return (STREAM_NAMES as readonly string[]).includes(name);
}

export function streamByName(name: string): StreamDef | undefined {
  return streams.find((s) => s.name === name);
}

export interface Partition {
  /** The checkpoint key of this partition (`-` when the stream has one). */
  key: string;
  query: Record<string, unknown>;
}

export function partitionsOf(stream: StreamDef, ids: { formIds: number[]; runTypeIds: number[] }): Partition[] {
  if (stream.partitions === 'formIds') {
    return ids.formIds.map((id) => ({ key: `form-${id}`, query: { FormId: id } }));
  }
  if (stream.partitions === 'runTypes') {
    return ids.runTypeIds.flatMap((id) =>
      RUN_LOG_FORM_TYPES.map((t) => ({ key: `run-type-${id}-${t}`, query: { RunTypeId: id, FormType: t } })),
    );
  }
  return [{ key: '-', query: {} }];
}
