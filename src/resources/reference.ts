import { endpoint } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import type { z } from 'zod';
import { byId, defineStream, FULL } from './stream.ts';

/** Reference lists: small lists read whole each run (credential types, statuses, departments, …). */

const referenceList = <Item extends z.ZodType>(name: string, path: string, item: Item) =>
  endpoint({ name, method: 'GET', path, query: [], response: { kind: 'array-or-object' }, item });

export const endpoints = {
  certifications: referenceList('certifications', '/Certification/GetCertificationList', s.Certification),
  workStatuses: referenceList('workStatuses', '/WorkStatus/GetList', s.WorkStatus),
  departments: referenceList('departments', '/Department/GetList', s.Department),
  workShifts: referenceList('workShifts', '/WorkShift/GetList', s.WorkShift),
  jobTitles: referenceList('jobTitles', '/JobTitle/GetList', s.JobTitle),
  locales: referenceList('locales', '/Locale/GetList', s.Locale),
} as const;

export const streams = [
  defineStream({
    name: 'certifications',
    endpoint: endpoints.certifications,
    target: byId('certifications', 'certifications', 'certification_id'),
    strategy: FULL,
  }),
  defineStream({
    name: 'work-statuses',
    endpoint: endpoints.workStatuses,
    target: byId('workStatuses', 'work_statuses', 'work_status_id'),
    strategy: FULL,
  }),
  defineStream({
    name: 'departments',
    endpoint: endpoints.departments,
    target: byId('departments', 'departments', 'department_id'),
    strategy: FULL,
  }),
  defineStream({
    name: 'work-shifts',
    endpoint: endpoints.workShifts,
    target: byId('workShifts', 'work_shifts', 'work_shift_id'),
    strategy: FULL,
  }),
  defineStream({
    name: 'job-titles',
    endpoint: endpoints.jobTitles,
    target: byId('jobTitles', 'job_titles', 'job_title_id'),
    strategy: FULL,
  }),
  defineStream({
    name: 'locales',
    endpoint: endpoints.locales,
    target: byId('locales', 'locales', 'locale_id'),
    strategy: FULL,
  }),
] as const;
