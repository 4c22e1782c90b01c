import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'courses',
  cron: '0 */6 * * *',
  streams: ['individual-courses'] satisfies StreamName[],
  description: 'course attempts and submissions in 31-day slices',
});
