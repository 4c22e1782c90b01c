import { z } from 'zod';
import { int, isoDate, opt, record, str } from './common.ts';

/** statusOption of GET /IndividualCourse/GetList. */
export const COURSE_STATUS_OPTIONS = {
  all: 0,
  inProgress: 1,
  failedOrDenied: 2,
  succeededOrApproved: 3,
} as const;

/** Fields not relevant to a record may be absent, so everything but the id is optional. */
export const IndividualCourse = record({
  IndividualCourseId: z.union([str, int]).transform(String),
  CourseName: opt(str),
  CourseDescription: opt(str),
  Credit: opt(z.number()),
  StartDate: opt(isoDate),
  EndDate: opt(isoDate),
  FirstName: opt(str),
  MiddleName: opt(str),
  LastName: opt(str),
  IndividualId: opt(int),
  EmployeeNumber: opt(str),
  Department: opt(str),
  Locale: opt(str),
  JobTitle: opt(str),
  AuthorInstructor: opt(str),
  Status: opt(str),
  CourseId: opt(int),
  ExamStartDate: opt(isoDate),
  ExamEndDate: opt(isoDate),
});
export type IndividualCourse = z.output<typeof IndividualCourse>;
