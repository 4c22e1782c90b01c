import type { TestProject } from 'vitest/node';
import { startPostgres, startRedis } from './services.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    databaseUrl: string;
  }
}

/** One private Redis and one private Postgres for the whole run, on free ports. */
export default async function setup(project: TestProject) {
  const [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  project.provide('redisUrl', redis.url);
  project.provide('databaseUrl', postgres.url);
  return async () => {
    await Promise.allSettled([redis.stop(), postgres.stop()]);
  };
}
