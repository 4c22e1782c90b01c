import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'credential-status',
  cron: '0 */2 * * *',
  streams: ['pending-certifications', 'required-certification-status'],
  description: 'pending certifications and required credential status (snapshots)',
});
