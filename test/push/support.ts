import { pino, type Logger } from 'pino';
import { Observers } from '../../src/observers.ts';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import type { RateLimiter } from '../../src/ratelimit/types.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { SourceClient } from '../../src/source/client.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import type { IntakeContext } from '../../src/push/intake.ts';
import { getChange, type PushStatus } from '../../src/push/outbox.ts';
import type { PushRunnerOptions } from '../../src/push/options.ts';
import { createPushRunner, type PushRunner } from '../../src/push/runner.ts';
import { createSealer, type Sealer } from '../../src/warehouse/secret.ts';
import { freshDatabase } from '../support/db.ts';
import { waitFor } from '../support/processes.ts';

export const SECRET = 'test-secret-key-0123456789';

export interface PushRig {
  sandbox: RunningSandbox;
  warehouse: Warehouse;
  client: SourceClient;
  limiter: RateLimiter;
  sealer: Sealer;
  intake: IntakeContext;
  runner: PushRunner;
  /** What the client and the runner report (requests, pushes). */
  observers: Observers;
  databaseUrl: string;
  /** Waits until every id is in a final state; returns their states. */
  settled(ids: number[], timeoutMs?: number): Promise<PushStatus[]>;
  close(): Promise<void>;
}

export interface RigOptions {
  sandbox?: SandboxOptions;
  /** Where the client sends (a proxy in front of the sandbox). */
  baseUrl?: (sandbox: RunningSandbox) => Promise<string> | string;
  runner?: Partial<PushRunnerOptions>;
  log?: Logger;
  start?: boolean;
}

/** The sandbox over HTTP, a fresh warehouse, a client and a push runner for company `acme`. */
export async function openRig(o: RigOptions = {}): Promise<PushRig> {
  const sandbox = await startSandbox({
    seed: 7,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    log: pino({ level: 'silent' }),
    ...o.sandbox,
  });
  const databaseUrl = await freshDatabase({ migrated: true });
  const warehouse = await openWarehouse({ databaseUrl });
  await warehouse.migrate();
  const limiter = createRateLimiter({ rateLimit: { limit: 100, periodMs: 1000 } });
  const log = o.log ?? pino({ level: 'silent' });
  const observers = new Observers();
  const client = new SourceClient({
    observers,
    baseUrl: o.baseUrl ? await o.baseUrl(sandbox) : sandbox.url,
    apiKey: sandbox.apiKey,
    limiter,
    logger: log,
    timeoutMs: 5000,
    backoff: { baseMs: 5, capMs: 50 },
    company: 'acme',
  });
  const sealer = createSealer(SECRET);
  const runner = createPushRunner({
    warehouse,
    clients: new Map([['acme', client]]),
    sealer,
    log,
    observers,
    sweepMs: 200,
    ...o.runner,
  });
  if (o.start !== false) await runner.start();
  const intake: IntakeContext = { warehouse, sealer, companies: [{ key: 'acme' }] };
  return {
    sandbox,
    warehouse,
    client,
    limiter,
    sealer,
    intake,
    runner,
    observers,
    databaseUrl,
    async settled(ids, timeoutMs = 20_000) {
      return waitFor(
        () => `changes ${ids.join(',')} to settle`,
        async () => {
          const all = await Promise.all(ids.map((id) => getChange(warehouse.sql, warehouse, id)));
          return all.every((s) => s && ['applied', 'refused', 'failed'].includes(s.status))
            ? (all as PushStatus[])
            : undefined;
        },
        timeoutMs,
        100,
      );
    },
    async close() {
      await runner.stop();
      await client.close();
      await limiter.close();
      await warehouse.close();
      await sandbox.close();
    },
  };
}

let n = 0;
/** A new individual the sandbox will accept. */
export function newcomer(over: Record<string, unknown> = {}): Record<string, unknown> {
  n++;
  const tag = `${process.pid}${n}${Math.floor(Math.random() * 1e6)}`;
  return {
    FirstName: 'Ada',
    LastName: `Push${n}`,
    Status: 'Active',
    PrimaryEmailAddress: `ada${tag}@example.org`,
    LogonId: `ada${tag}`.slice(0, 30),
    EmployeeNumber: `PE${tag}`,
    ...over,
  };
}
