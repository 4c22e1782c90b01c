import { defineConfig } from 'vitest/config';

/**
 * `npm run test:citus`: the warehouse, sync, access and push suites against a Citus cluster (test/support/
 * citus-setup.ts), chosen to keep CI within its time: the cluster's own test (a full sync, three days of changes,
 * views, access, erasure and push on four companies), and the tests of each statement Citus runs differently (page
 * writes, history, deletions, rejects, checkpoints, fences, runs, personal data, push). Left out: the long
 * convergence and fault runs, whose statements these cover, and tests that start Postgres servers of their own.
 *
 * test/warehouse/access.test.ts is left out too: its warehouse is owned by a role that is not a superuser, whose
 * `migrate` Citus refuses for now. The grants' refresh (access-policies.ts) joins access_grants with pg_roles,
 * and Citus plans that join by reading pg_authid itself, which only a superuser may.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/support/citus-setup.ts'],
    setupFiles: ['test/support/citus-file.ts'],
    include: [
      'test/**/*.citus.test.ts',
      'test/warehouse/upsert.test.ts',
      'test/warehouse/rejects.test.ts',
      'test/warehouse/fencing.test.ts',
      'test/warehouse/events.test.ts',
      'test/warehouse/usage.test.ts',
      'test/warehouse/company-records.test.ts',
      'test/warehouse/personal-data.test.ts',
      'test/warehouse/views.test.ts',
      'test/sync/runs.test.ts',
      'test/sync/cursors.test.ts',
      'test/sync/deletions.test.ts',
      'test/sync/resume.test.ts',
      'test/sync/schema-changes.test.ts',
      'test/sync/housekeeping.test.ts',
      'test/push/push.test.ts',
      'test/push/in-doubt.test.ts',
      'test/push/preview.test.ts',
      'test/push/model.test.ts',
      'test/commands/access.test.ts',
    ],
    // Each statement of a test goes through the coordinator to a worker: the same tests take longer.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
