import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'reference-lists',
  cron: '10 * * * *',
  streams: ['certifications', 'work-statuses', 'departments', 'work-shifts', 'job-titles', 'locales', 'schedules'] satisfies StreamName[],
  description: 'reference lists and schedules with their shifts (small, read whole)',
});
