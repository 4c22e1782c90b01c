import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'time-off',
  cron: '0 * * * *',
  streams: ['time-off-requests'] satisfies StreamName[],
  description: 'time off requests: the pending ones and the decisions on them, with a daily re-read',
});
