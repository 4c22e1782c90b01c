import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'run-log-forms',
  cron: '40 * * * *',
  streams: ['run-log-forms', 'run-log-form-responses'] satisfies StreamName[],
  description: 'run-log forms and responses per run type and form type',
});
