import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'individuals',
  cron: '*/30 * * * *',
  streams: ['individuals', 'supervisors'] satisfies StreamName[],
  description: 'individuals and supervisors (read whole; who is gone is marked deleted)',
});
