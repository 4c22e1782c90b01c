import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'time-off',
  cron: '0 * * * *',
  streams: ['time-off-requests'],
  description: 'time off requests: the pending ones and the decisions on them, with a daily re-read',
});
