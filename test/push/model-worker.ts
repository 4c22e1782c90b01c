import { pino } from 'pino';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import { createPushRunner } from '../../src/push/runner.ts';
import { runModel } from '../../src/push/model-run.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { SourceClient } from '../../src/source/client.ts';
import { openWarehouse } from '../../src/warehouse/connection.ts';

/**
 * A process for the model crash test: a push runner, and the model MODEL run again and again, against a shared
 * Postgres. Run as `node --import tsx model-worker.ts`; settings come from the environment.
 */
const env = process.env;
const log = pino({ level: 'warn' });
const warehouse = await openWarehouse({ databaseUrl: env.DATABASE_URL!, max: 6 });
const limiter = createRateLimiter({ rateLimit: { limit: 100, periodMs: 1000 } });
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
const sealer = createSealer(env.WFS_SECRET_KEY!);
const runner = createPushRunner({
  warehouse,
  clients: new Map([['acme', client]]),
  sealer,
  log,
  concurrency: 4,
  sweepMs: 200,
  maxAttempts: 1000,
});
await runner.start();
process.stdout.write('{"msg":"ready"}\n');
const intake = { warehouse, sealer, companies: [{ key: 'acme' }] };
for (;;) {
  const run = await runModel(intake, env.MODEL!);
  process.stdout.write(
    `${JSON.stringify({ msg: 'model run', queued: run.queued, changed: run.changed, outcome: run.outcome })}\n`,
  );
  await new Promise((r) => setTimeout(r, 20));
}
