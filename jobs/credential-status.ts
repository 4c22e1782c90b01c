import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'credential-status',
  cron: '0 */2 * * *',
  streams: ['pending-certifications', 'required-certification-status'] satisfies StreamName[],
  description: 'pending certifications and required credential status (snapshots)',
});
