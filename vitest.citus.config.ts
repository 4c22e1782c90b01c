import { defineConfig } from 'vitest/config';

/**
 * `npm run test:citus`: the warehouse, sync, access and push suites against a Citus cluster (test/support/
 * citus-setup.ts), chosen to keep what CI adds to about two minutes: the cluster's own tests (the checks:
 * migrate, a full sync and three days of changes, views, access and the analyst views, a rebalance, erasure and
 * push on four companies), and the tests of the statements Citus runs differently that take seconds (page
 * writes, history, deletions, fences, retention, usage, the outbox). Left out: the long convergence, resume and
 * fault runs, checkpoints, models and the personal-data rewrites, whose statements the cluster's test covers, and
 * tests that start Postgres servers of their own or migrate from an older warehouse.
 */
export default defineConfig({
  test: {
    globalSetup: ['test/support/citus-setup.ts'],
    setupFiles: ['test/support/citus-file.ts'],
    include: [
      'test/**/*.citus.test.ts',
      'test/warehouse/upsert.test.ts',
      'test/warehouse/fencing.test.ts',
      'test/warehouse/usage.test.ts',
      'test/warehouse/views.test.ts',
      'test/sync/deletions.test.ts',
      'test/sync/housekeeping.test.ts',
      'test/push/push.test.ts',
    ],
    // Each statement of a test goes through the coordinator to a worker: the same tests take longer.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
