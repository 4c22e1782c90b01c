import { endpoint } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import { byId, defineStream } from './stream.ts';

/** Courses: individuals' course attempts and submissions, by a 31-day range. */

export const endpoints = {
  individualCourses: endpoint({
    name: 'individualCourses',
    method: 'GET',
    path: '/IndividualCourse/GetList',
    query: [
      { name: 'startDate', type: 'date', required: true },
      { name: 'endDate', type: 'date', required: true },
      { name: 'statusOption', type: 'int', required: true, min: 0, max: 3 },
      { name: 'individualId', type: 'int', default: 0 },
    ],
    response: { kind: 'array' },
    item: s.IndividualCourse,
    maxRange: { start: 'startDate', end: 'endDate', days: 31 },
  }),
} as const;

export const streams = [
  defineStream({
    name: 'individual-courses',
    endpoint: endpoints.individualCourses,
    target: byId('individualCourses', 'individual_courses', 'individual_course_id'),
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
    fixed: { statusOption: s.COURSE_STATUS_OPTIONS.all },
  }),
] as const;
