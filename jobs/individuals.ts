import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'individuals',
  cron: '*/30 * * * *',
  streams: ['individuals', 'supervisors'],
  description: 'individuals and supervisors (read whole; who is gone is marked deleted)',
});
