import { z } from 'zod';
import { int, isoDate, nameText, opt, record, str } from './common.ts';

export const SHIFT_ASSIGNMENT_TYPES = ['Shift Assignment', 'Ride Along'] as const;
export const ASSIGNMENT_EVENT_TYPES = ['Created', 'Assigned', 'Unassigned', 'Deleted'] as const;

/** Null ServiceId and EmployeeNumber mark a non-employee ride-along. */
export const ShiftAssignmentAssignee = record({
  ServiceId: opt(int),
  EmployeeNumber: opt(str),
  FirstName: opt(nameText),
  LastName: opt(nameText),
});

const assignmentFields = {
  ShiftAssignmentId: int,
  ScheduleId: opt(int),
  ScheduleName: opt(str),
  ShiftId: opt(int),
  ShiftName: opt(str),
  JobTitleId: opt(int),
  JobTitleName: opt(str),
  StartDateTime: isoDate,
  EndDateTime: opt(isoDate),
  Type: opt(str),
  Assignee: opt(ShiftAssignmentAssignee),
};

export const ShiftAssignment = record({
  ...assignmentFields,
  VehicleName: opt(str),
  ClockInDateTime: opt(isoDate),
  ClockOutDateTime: opt(isoDate),
});
export type ShiftAssignment = z.output<typeof ShiftAssignment>;

export const AssignmentChange = record({
  EventType: z.enum(ASSIGNMENT_EVENT_TYPES),
  EventTimeStamp: isoDate,
  ...assignmentFields,
});
export type AssignmentChange = z.output<typeof AssignmentChange>;

export const Schedule = record({
  ScheduleId: int,
  ScheduleName: opt(str),
  Shifts: opt(z.array(record({ ShiftId: int, ShiftName: opt(str) }))),
});
export type Schedule = z.output<typeof Schedule>;
