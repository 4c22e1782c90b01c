import { ENVELOPE, PAGE_PARAMS, endpoint } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import { byId, defineStream, FULL, HOURS_A_WEEK, type ChangeDriven } from './stream.ts';

/** Scheduling: shift assignments, the change records that name what changed, and schedules with their shifts. */

const envelope = ENVELOPE;

export const endpoints = {
  shiftAssignments: endpoint({
    name: 'shiftAssignments',
    method: 'GET',
    path: '/ShiftAssignment/GetList',
    query: [
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      { name: 'OnlyShiftAssignment', type: 'bool', default: false },
      { name: 'OnlyRideAlong', type: 'bool', default: false },
      { name: 'OnlyOpenShifts', type: 'bool', default: false },
      { name: 'OnlyFilledShifts', type: 'bool', default: false },
      { name: 'OnlyClockedInShifts', type: 'bool', default: false },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.ShiftAssignment,
  }),
  assignmentChanges: endpoint({
    name: 'assignmentChanges',
    method: 'GET',
    path: '/ShiftAssignment/GetAssignmentChanges',
    query: [
      { name: 'StartDate', type: 'datetime', required: true },
      { name: 'EndDate', type: 'datetime', required: true },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.AssignmentChange,
  }),
  schedules: endpoint({
    name: 'schedules',
    method: 'GET',
    path: '/Schedule/GetList',
    query: [],
    response: { kind: 'array' },
    item: s.Schedule,
  }),
} as const;

/** Assignment change records name the shift assignments and days that changed. */
const assignmentChanges: ChangeDriven['changes'] = {
  stream: 'assignment-changes',
  table: 'assignment_changes',
  dayColumn: 'start_date_time',
  keyColumn: 'shift_assignment_id',
  deleted: { column: 'event_type', value: 'Deleted' },
  eventColumn: 'event_time_stamp',
};

export const streams = [
  defineStream({
    name: 'schedules',
    endpoint: endpoints.schedules,
    target: {
      resource: 'schedules',
      table: 'schedules',
      key: ['schedule_id'],
      children: [{ path: 'Shifts', table: 'schedule_shifts', key: ['shift_id'] }],
    },
    strategy: FULL,
  }),
  defineStream({
    name: 'assignment-changes',
    endpoint: endpoints.assignmentChanges,
    target: {
      resource: 'assignmentChanges',
      table: 'assignment_changes',
      key: ['_key'],
      keyFields: ['ShiftAssignmentId', 'EventType', 'EventTimeStamp'],
    },
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
  }),
  defineStream({
    name: 'shift-assignments',
    endpoint: endpoints.shiftAssignments,
    target: byId('shiftAssignments', 'shift_assignments', 'shift_assignment_id'),
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
          reason:
            'an assignment moved to a day outside the daily span, and changes to older days, have no change record',
        },
      ],
    },
    dependsOn: ['assignment-changes'],
  }),
] as const;
