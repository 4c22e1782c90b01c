import { integer, primaryKey, text, type PgSchema } from 'drizzle-orm/pg-core';
import { companyKey, prefixed, syncedParent } from './columns.ts';

/** The service's reference lists: an id and a label each. */
export const referenceTables = (s: PgSchema) => {
  const reference = <T extends string, I extends string, L extends string>(name: T, id: I, label: L) =>
    s.table(
      name,
      {
        company_key: companyKey(),
        ...prefixed(id, { '': integer().notNull() }),
        ...prefixed(label, { '': text() }),
        ...syncedParent(),
      },
      (t) => [primaryKey({ columns: [t.company_key, t[id as keyof typeof t] as never] })],
    );
  return {
    certifications: reference('certifications', 'certification_id', 'certification_name'),
    workStatuses: reference('work_statuses', 'work_status_id', 'work_status_name'),
    departments: reference('departments', 'department_id', 'department_name'),
    workShifts: reference('work_shifts', 'work_shift_id', 'work_shift_name'),
    jobTitles: reference('job_titles', 'job_title_id', 'job_title_name'),
    locales: reference('locales', 'locale_id', 'locale_name'),
  };
};
