import { z } from 'zod';
import { int, isoDate, nameText, opt, record, str } from './common.ts';

export const TIME_OFF_STATUSES = ['Pending', 'Approved', 'Denied', 'Canceled'] as const;

/** The example writes UniqueIdentifier without its second i. */
export const timeOffEmployeeAliases = { UniqueIdentifier: 'UniqueIdentifer' } as const;

export const TimeOffEmployee = record(
  {
    ServiceId: opt(int),
    FirstName: opt(nameText),
    LastName: opt(nameText),
    UniqueIdentifier: opt(str),
    EmployeeNumber: opt(str),
  },
  timeOffEmployeeAliases,
);

export const ApprovedHours = record({
  ApprovedLeavePolicy: opt(str),
  ApprovedLeaveType: opt(str),
  ApprovedHours: opt(z.number()),
});

export const TimeOffRequest = record({
  Employee: TimeOffEmployee,
  StartDateTime: isoDate,
  EndDateTime: opt(isoDate),
  RequestedLeavePolicy: opt(str),
  RequestedLeaveType: opt(str),
  ApprovedHours: opt(z.array(ApprovedHours)),
  RequestedDateTime: opt(isoDate),
  Status: opt(str),
  ReviewedBy: opt(TimeOffEmployee),
  ReviewedDateTime: opt(isoDate),
  RequestedHours: opt(z.number()),
});
export type TimeOffRequest = z.output<typeof TimeOffRequest>;
