import type { Individual, IndividualCourse } from '../source/schemas/index.ts';
import { COURSES } from './names.ts';
import type { Rng } from './rng.ts';
import type { CourseEntry, CourseOutcome, SandboxStore } from './store.ts';
import { dateOfDay } from './time.ts';

const EXAM_STATUS: Record<CourseOutcome, string> = { inProgress: 'In Progress', failed: 'Failed', succeeded: 'Passed' };
const SUBMISSION_STATUS: Record<CourseOutcome, string> = {
  inProgress: 'Pending Approval',
  failed: 'Denied',
  succeeded: 'Approved',
};

/**
 * One course record: an exam result of a catalog course (CourseId, maybe Exam* dates) or a course submission
 * (no CourseId). Fields that do not apply are left out of the object, as the spec says they may be absent.
 */
export function makeCourse(
  store: SandboxStore,
  rng: Rng,
  ind: Individual,
  startDay: number,
  todayDay: number,
): CourseEntry {
  const course = rng.pick(COURSES);
  const exam = rng.chance(0.65);
  const endDay = startDay + rng.int(0, 6);
  const outcome: CourseOutcome =
    endDay >= todayDay || rng.chance(0.08) ? 'inProgress' : rng.chance(0.12) ? 'failed' : 'succeeded';
  const titles = [ind.JobTitle, ...(ind.AdditionalJobTitles ?? []).map((t) => t.JobTitleName)]
    .filter(Boolean)
    .join(', ');
  const id = ++store.next.course;
  const rec: IndividualCourse = {
    IndividualCourseId: `IC-${String(id).padStart(7, '0')}`,
    CourseName: exam ? course.name : `${course.name} (external)`,
    CourseDescription: course.description,
    StartDate: dateOfDay(startDay),
    EndDate: dateOfDay(endDay),
    FirstName: ind.FirstName ?? null,
    MiddleName: ind.MiddleName ?? null,
    LastName: ind.LastName ?? null,
    IndividualId: ind.IndividualId,
    EmployeeNumber: ind.EmployeeNumber ?? null,
    Department: ind.Department ?? null,
    Locale: ind.Locale ?? null,
    JobTitle: titles || null,
    AuthorInstructor: course.authors,
    Status: exam ? EXAM_STATUS[outcome] : SUBMISSION_STATUS[outcome],
  };
  if (course.credit !== null && (exam || rng.chance(0.7))) rec.Credit = course.credit;
  if (exam) {
    rec.CourseId = 8001 + COURSES.indexOf(course);
    if (rng.chance(0.6)) {
      rec.ExamStartDate = dateOfDay(endDay);
      rec.ExamEndDate = dateOfDay(endDay);
    }
  }
  return { individualId: ind.IndividualId, outcome, rec };
}

/** The record after its status changed to `outcome`, in the exam or submission wording it was written in. */
export function withOutcome(entry: CourseEntry, outcome: CourseOutcome): CourseEntry {
  const exam = entry.rec.CourseId !== undefined && entry.rec.CourseId !== null;
  return { ...entry, outcome, rec: { ...entry.rec, Status: exam ? EXAM_STATUS[outcome] : SUBMISSION_STATUS[outcome] } };
}
