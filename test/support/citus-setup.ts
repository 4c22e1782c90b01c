import type { TestProject } from 'vitest/node';
import { type CitusCluster, clusterNodes, dropDatabases, prepareTemplates, startCitusCluster } from './citus.ts';
import { startRedis } from './services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set by `npm run test:citus` only. */
    citus?: CitusCluster;
  }
}

/**
 * `npm run test:citus`: the suites' databases on a Citus cluster, the one at WFS_TEST_CITUS_URL (a coordinator's
 * URL; its workers are found from its metadata) or one started here with ../shared/citus, and a private Redis.
 */
export default async function setup(project: TestProject) {
  const given = process.env.WFS_TEST_CITUS_URL;
  const [redis, started] = await Promise.all([startRedis(), given ? undefined : startCitusCluster()]);
  const coordinator = given ?? started!.url;
  const cluster = await prepareTemplates(await clusterNodes(coordinator));
  project.provide('redisUrl', redis.url);
  project.provide('databaseUrl', coordinator);
  project.provide('citus', cluster);
  return async () => {
    await redis.stop();
    if (started) await started.stop();
    else await dropDatabases(cluster);
  };
}
