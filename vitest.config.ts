import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Tests whose claim is timing (the limiter's share of the budget without a 429) run after the rest, alone: on two
 * cores the rest of the suite can starve the sandbox long enough for it to count a request later than the
 * limiter's margin allows.
 */
const timing = ['test/ratelimit/sandbox.test.ts'];
/** Tests of the warehouse on a Citus cluster: `npm run test:citus` alone runs them (vitest.citus.config.ts). */
const citus = ['test/**/*.citus.test.ts'];

const shared: TestProjectInlineConfiguration['test'] = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  pool: 'forks',
};

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...timing, ...citus],
          // A worker process runs its files one after another with the modules they share loaded once: the suite
          // imports the source tree once a worker rather than once a file. Module caches are per warehouse or pure,
          // and what is one per process (the Redis health's lines) is asserted of spawned processes only.
          isolate: false,
        },
      },
      { test: { ...shared, name: 'timing', include: timing, sequence: { groupOrder: 1 } } },
    ],
  },
});
