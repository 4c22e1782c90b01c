import { defineConfig } from 'vitest/config';

/**
 * `npm run test:citus`: the warehouse, sync, access and push suites against a Citus cluster (test/support/
 * citus-setup.ts). Left out: tests that start Postgres servers of their own, and those that touch no database.
 */
const ownServers = [
  'test/warehouse/restart.test.ts',
  'test/warehouse/embedded.test.ts',
  'test/warehouse/socket.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/support/citus-setup.ts'],
    setupFiles: ['test/support/citus-file.ts'],
    include: [
      'test/warehouse/**/*.test.ts',
      'test/sync/**/*.test.ts',
      'test/push/**/*.test.ts',
      'test/commands/access.test.ts',
    ],
    exclude: ownServers,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
