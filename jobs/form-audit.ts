import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'form-audit',
  cron: '0 * * * *',
  streams: ['form-audit'],
  description: 'form answer audit rows since the last run',
});
