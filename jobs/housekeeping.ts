import { defineJob } from '../src/queue/job.ts';
import { runHousekeeping } from '../src/sync/housekeeping.ts';

export default defineJob({
  name: 'housekeeping',
  cron: '17 3 * * *',
  streams: [],
  run: runHousekeeping,
  description:
    'prunes finished runs, resolved rejects and final pushed changes’ payloads past their retention settings',
});
