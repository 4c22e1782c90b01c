import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'courses',
  cron: '0 */6 * * *',
  streams: ['individual-courses'],
  description: 'course attempts and submissions in 31-day slices',
});
