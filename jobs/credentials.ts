import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'credentials',
  cron: '*/15 * * * *',
  streams: ['individual-certifications'],
  description: 'individual certifications updated since the last run, deletions included',
});
