import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'time-off',
  cron: '*/30 * * * *',
  streams: ['time-off-requests'],
  description: 'time off requests in a rolling window',
});
