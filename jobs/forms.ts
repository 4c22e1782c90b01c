import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'forms',
  cron: '20 * * * *',
  streams: ['form-responses'] satisfies StreamName[],
  description: 'form responses of each configured form, updated since the last run',
});
