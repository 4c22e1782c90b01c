import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Tests whose claim is timing (the limiter's share of the budget without a 429) run after the rest, alone: on two
 * cores the rest of the suite can starve the sandbox long enough for it to count a request later than the
 * limiter's margin allows.
 */
const timing = ['test/ratelimit/sandbox.test.ts'];

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
      { test: { ...shared, name: 'suite', include: ['test/**/*.test.ts'], exclude: timing } },
      { test: { ...shared, name: 'timing', include: timing, sequence: { groupOrder: 1 } } },
    ],
  },
});
