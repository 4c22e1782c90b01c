import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'credentials-full-refresh',
  cron: '30 3 * * 0',
  streams: ['individual-certifications'],
  description: 'a weekly full re-read of certifications, catching what offset paging missed while data moved',
  fullRefresh: true,
});
