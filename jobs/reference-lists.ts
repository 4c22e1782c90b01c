import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'reference-lists',
  cron: '10 * * * *',
  streams: ['certifications', 'work-statuses', 'departments', 'work-shifts', 'job-titles', 'locales', 'schedules'],
  description: 'reference lists and schedules with their shifts (small, read whole)',
});
