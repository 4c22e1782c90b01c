import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'form-audit',
  cron: '0 * * * *',
  streams: ['form-audit'] satisfies StreamName[],
  description: 'form answer audit rows since the last run',
});
