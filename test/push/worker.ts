import { pino } from 'pino';
import { rateLimiterMaker } from '../../src/ratelimit/index.ts';
import { redisConnection } from '../../src/queue/sync-queue.ts';
import { createPushRunner } from '../../src/push/runner.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { SourceClient } from '../../src/source/client.ts';
import { openWarehouse } from '../../src/warehouse/connection.ts';

/**
 * A push worker process for the crash test: the runner against a shared Postgres (and Redis, for the limiter and,
 * with PUSH_BULLMQ=1, the BullMQ queue). Run as `node --import tsx worker.ts`; settings come from the environment.
 * It logs as JSON to stdout, so the test can read every line for secrets.
 */
const env = process.env;
const log = pino({ level: 'info' });
const warehouse = await openWarehouse({ databaseUrl: env.DATABASE_URL!, max: 8 });
const limiter = (await rateLimiterMaker(env.REDIS_URL))({ rateLimit: { limit: 100, periodMs: 1000 }, logger: log });
const client = new SourceClient({
  baseUrl: env.BASE_URL!,
  apiKey: env.API_KEY!,
  limiter,
  logger: log,
  company: 'acme',
  timeoutMs: 5000,
  maxRetries: 2,
  backoff: { baseMs: 5, capMs: 50 },
});
const redis = env.PUSH_BULLMQ === '1' ? redisConnection(env.REDIS_URL!) : undefined;
const runner = createPushRunner({
  warehouse,
  clients: new Map([['acme', client]]),
  sealer: createSealer(env.WFS_SECRET_KEY!),
  log,
  redis,
  prefix: env.PUSH_PREFIX,
  concurrency: 6,
  sweepMs: 300,
  maxAttempts: 1000,
});
await runner.start();
process.stdout.write('{"msg":"ready"}\n');
process.on('SIGTERM', () => {
  void runner.stop().then(async () => {
    await client.close();
    await limiter.close();
    await redis?.quit();
    await warehouse.close();
    process.exit(0);
  });
});
