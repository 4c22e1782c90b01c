import type { z } from 'zod';
import { int, opt, record, str } from './common.ts';

export const Certification = record({ CertificationId: int, CertificationName: opt(str) });
export const WorkStatus = record({ WorkStatusId: int, WorkStatusName: opt(str) });
export const Department = record({ DepartmentId: int, DepartmentName: opt(str) });
export const WorkShift = record({ WorkShiftId: int, WorkShiftName: opt(str) });
/** The example names the id key of a job title `JobTitle`. */
export const jobTitleAliases = { JobTitleId: 'JobTitle' } as const;
export const JobTitle = record({ JobTitleId: int, JobTitleName: opt(str) }, jobTitleAliases);
export const Locale = record({ LocaleId: int, LocaleName: opt(str) });

export type Certification = z.output<typeof Certification>;
export type WorkStatus = z.output<typeof WorkStatus>;
export type Department = z.output<typeof Department>;
export type WorkShift = z.output<typeof WorkShift>;
export type JobTitle = z.output<typeof JobTitle>;
export type Locale = z.output<typeof Locale>;
