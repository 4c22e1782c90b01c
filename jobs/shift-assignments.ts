import { defineJob } from '../src/queue/job.ts';

export default defineJob({
  name: 'shift-assignments',
  cron: '*/10 * * * *',
  streams: ['assignment-changes', 'shift-assignments'],
  description: 'assignment change records, then only the days they name, plus recent clock-ins and outs',
});
