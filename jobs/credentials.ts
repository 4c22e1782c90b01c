import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'credentials',
  cron: '*/15 * * * *',
  streams: ['individual-certifications'] satisfies StreamName[],
  description: 'individual certifications updated since the last run, deletions included',
});
