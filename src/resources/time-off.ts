import { ENVELOPE, PAGE_PARAMS, endpoint } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import { defineStream, HOURS_A_WEEK } from './stream.ts';

/** Time off requests: the pending ones and the decisions on them. */

const envelope = ENVELOPE;

export const endpoints = {
  timeOffRequests: endpoint({
    name: 'timeOffRequests',
    method: 'GET',
    path: '/TimeOffRequest/GetList',
    query: [
      { name: 'StartDateTime', type: 'datetime', required: true },
      { name: 'EndDateTime', type: 'datetime', required: true },
      { name: 'ServiceId', type: 'int' },
      { name: 'EmployeeNumber', type: 'string' },
      { name: 'UniqueNumber', type: 'string' },
      { name: 'RequestStatus', type: 'csv', values: s.TIME_OFF_STATUSES },
      ...PAGE_PARAMS,
    ],
    response: envelope,
    item: s.TimeOffRequest,
  }),
} as const;

export const streams = [
  defineStream({
    name: 'time-off-requests',
    endpoint: endpoints.timeOffRequests,
    target: {
      resource: 'timeOffRequests',
      table: 'time_off_requests',
      key: ['_key'],
      keyFields: [
        ['Employee.ServiceId', 'Employee.EmployeeNumber'],
        'StartDateTime',
        'EndDateTime',
        'RequestedLeaveType',
        'RequestedDateTime',
      ],
      children: [
        {
          path: 'ApprovedHours',
          table: 'time_off_approved_hours',
          parentColumns: ['time_off_request_key'],
          key: ['_ord'],
        },
      ],
    },
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
          reason:
            'a decided request that changes again (approved, then canceled), a request entered already decided, and deletions carry no signal',
        },
        {
          name: 'all',
          everyHours: HOURS_A_WEEK,
          reason: 'the same changes to requests that started more than 120 days ago',
        },
      ],
    },
  }),
] as const;
