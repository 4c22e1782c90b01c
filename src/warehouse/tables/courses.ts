import { index, integer, numeric, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, localDay, syncedParent } from './columns.ts';

/** Courses individuals took. */
export const courseTables = (s: PgSchema) => ({
  individualCourses: s.table(
    'individual_courses',
    {
      company_key: companyKey(),
      individual_course_id: text().notNull(),
      course_name: text(),
      course_description: text(),
      credit: numeric(),
      ...localDay('start_date'),
      ...localDay('end_date'),
      first_name: text(),
      middle_name: text(),
      last_name: text(),
      individual_id: integer(),
      employee_number: text(),
      department: text(),
      locale: text(),
      job_title: text(),
      author_instructor: text(),
      status: text(),
      course_id: integer(),
      ...localDay('exam_start_date'),
      ...localDay('exam_end_date'),
      ...syncedParent(),
    },
    (t) => [primaryKey({ columns: [t.company_key, t.individual_course_id] }), index().on(t.start_date, t.company_key)],
  ),
});
