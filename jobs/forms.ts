import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'forms',
  cron: '20 * * * *',
  streams: ['form-responses'],
  description: 'form responses of each configured form, updated since the last run',
});
