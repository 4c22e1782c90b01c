import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'run-log-forms',
  cron: '40 * * * *',
  streams: ['run-log-forms', 'run-log-form-responses'],
  description: 'run-log forms and responses per run type and form type',
});
