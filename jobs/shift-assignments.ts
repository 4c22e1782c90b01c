import { defineJob } from '../src/queue/job.ts';
import type { StreamName } from '../src/sync/streams.ts';

export default defineJob({
  name: 'shift-assignments',
  cron: '*/10 * * * *',
  streams: ['assignment-changes', 'shift-assignments'] satisfies StreamName[],
  description: 'assignment change records, then only the days they name, plus recent clock-ins and outs',
});
