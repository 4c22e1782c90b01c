import { RUN_LOG_FORM_TYPES } from '../source/schemas/forms.ts';
import { COURSE_STATUS_OPTIONS } from '../source/schemas/course.ts';
import { endpoints, type Endpoint } from '../source/endpoints.ts';
import type { Lane } from '../ratelimit/types.ts';

/**
 * The stream catalog: each stream is data — its endpoint, fixed parameters, how it moves forward,
 * its warehouse target and its partitions. One engine (engine.ts) runs any of them.
 */

/** One request or one paged read of everything; rows missing from a complete read get `_deleted_at`. */
export interface Full {
  kind: 'full';
}

/** Paged lists with no filter: every page, then rows the read did not return are marked gone. */
export interface Snapshot {
  kind: 'snapshot';
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
  /** `reread`: how far back the rolling window reaches. `append`: overlap with the previous read. */
  rollingDays: number;
  /** Rows of a completely read window that the service no longer returns get `_deleted_at`. */
  deleteMissing?: { startColumn: string; endColumn?: string };
}

/**
 * Re-reads only the days that assignment change records name, plus the recent days where clock-in/out moves,
 * and the horizon as time moves forward. Backfills like a windowed stream the first time.
 */
export interface ChangeDriven {
  kind: 'change-driven';
  start: string;
  end: string;
  sliceDays: number;
  backfillDays: number;
  forwardDays: number;
  recentDays: number;
  startColumn: string;
  /** Rows still open (clocked in, not yet out) whose days are read again until they close, up to `maxDays` back. */
  openWhile: { set: string; unset: string; maxDays: number };
  /** Where the change records are: the stream that syncs them and the columns of its table this stream reads. */
  changes: {
    stream: string;
    table: string;
    /** When the change happened. */
    eventColumn: string;
    /** The start of the record that changed: its day is read again. */
    dayColumn: string;
    /** The changed record's key in this stream's table. */
    keyColumn: string;
    /** A change that deletes the record. */
    deleted: { column: string; value: string };
  };
}

export type Strategy = Full | Snapshot | UpdatedSince | Windowed | ChangeDriven;

export type PartitionSource = 'formIds' | 'runTypes';

export interface StreamDef {
  name: string;
  endpoint: Endpoint;
  /** Warehouse target (src/warehouse/targets.ts), named like the endpoint. */
  target: string;
  strategy: Strategy;
  /** Parameters sent on every request of the stream. */
  fixed?: Record<string, unknown>;
  partitions?: PartitionSource;
  /**
   * The list holds only the records of individuals in these statuses (the certification list: Active and LOA),
   * so records of individuals now in another status are gone from it, whether or not they were updated.
   */
  coversIndividuals?: { statuses: readonly string[]; column: string };
  /** Streams whose rows this one reads from the warehouse; they run first. */
  dependsOn?: string[];
  lane?: Lane;
}

const full: Full = { kind: 'full' };

/** Assignment change records name the shift assignments and days that changed. */
const assignmentChanges: ChangeDriven['changes'] = {
  stream: 'assignment-changes',
  table: 'assignment_changes',
  eventColumn: 'event_time_stamp',
  dayColumn: 'start_date_time',
  keyColumn: 'shift_assignment_id',
  deleted: { column: 'event_type', value: 'Deleted' },
};
const DAY = 86_400_000;

const reference = (name: string, endpoint: Endpoint): StreamDef => ({
  name,
  endpoint,
  target: endpoint.name,
  strategy: full,
});

export const streams: readonly StreamDef[] = [
  reference('certifications', endpoints.certifications),
  reference('work-statuses', endpoints.workStatuses),
  reference('departments', endpoints.departments),
  reference('work-shifts', endpoints.workShifts),
  reference('job-titles', endpoints.jobTitles),
  reference('locales', endpoints.locales),
  { name: 'individuals', endpoint: endpoints.individuals, target: 'individuals', strategy: full },
  { name: 'supervisors', endpoint: endpoints.supervisors, target: 'supervisors', strategy: full },
  { name: 'schedules', endpoint: endpoints.schedules, target: 'schedules', strategy: full },
  { name: 'run-log-forms', endpoint: endpoints.runLogForms, target: 'runLogForms', strategy: full },
  {
    name: 'individual-certifications',
    endpoint: endpoints.individualCertifications,
    target: 'individualCertifications',
    strategy: { kind: 'updated-since', param: 'updatedSince', precision: 'date', overlapMs: DAY },
    fixed: { IncludeDeleted: true },
    coversIndividuals: { statuses: ['Active', 'LOA'], column: 'service_id' },
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
    strategy: { kind: 'snapshot' },
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
      rollingDays: 1 / 24,
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
      recentDays: 2,
      startColumn: 'start_date_time',
      openWhile: { set: 'clock_in_date_time', unset: 'clock_out_date_time', maxDays: 14 },
      changes: assignmentChanges,
    },
    dependsOn: [assignmentChanges.stream],
  },
  {
    name: 'time-off-requests',
    endpoint: endpoints.timeOffRequests,
    target: 'timeOffRequests',
    strategy: {
      kind: 'windowed',
      mode: 'reread',
      start: 'StartDateTime',
      end: 'EndDateTime',
      // Requests are filtered by start and by end, so a slice would lose requests that straddle it.
      sliceDays: 10_000,
      backfillDays: 800,
      forwardDays: 400,
      rollingDays: 120,
      deleteMissing: { startColumn: 'start_date_time', endColumn: 'end_date_time' },
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
      sliceDays: 31,
      backfillDays: 400,
      forwardDays: 31,
      rollingDays: 62,
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
      rollingDays: 1 / 24,
    },
  },
];

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
