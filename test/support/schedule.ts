import { jobs } from '../../jobs/index.ts';
import type { ScheduleOptions } from '../../src/queue/schedules.ts';

/** The default crons of every job, as a process with no WFS_CRON_* overrides schedules them. */
export const defaultSchedule: ScheduleOptions = { jobs, cronOverrides: {}, timezone: 'UTC' };
