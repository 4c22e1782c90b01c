import { pino } from 'pino';
import { parseRateLimit } from '../src/config.ts';
import { Observers } from '../src/observers.ts';
import { pushIndividuals, type IntakeContext } from '../src/push/intake.ts';
import { createPushRunner } from '../src/push/runner.ts';
import { createSealer } from '../src/push/secret.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { SourceClient } from '../src/source/client.ts';
import { endpoints } from '../src/source/endpoints.ts';
import type { Individual } from '../src/source/schemas/index.ts';
import { openWarehouse } from '../src/warehouse/index.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * Push against the key's budget, two runs against the sandbox over HTTP (its limit compressed, BENCH_RATE_LIMIT,
 * default 100/1s) with a real Postgres outbox:
 *   under_backfill  BENCH_BACKFILL_LOOPS (8) loops read in the backfill lane as fast as the limiter lets them,
 *                   holding the budget at 100%, while one individual update is pushed every BENCH_PUSH_EVERY_MS
 *                   (250) for BENCH_SECONDS (10): latency from intake to applied, p50/p95, against the goal
 *                   2 × W/L + the service's latency per request (a push is a lookup and an Update: two requests);
 *   throughput      no pull: BENCH_PUSHES (300) individual updates queued at once; pushes/min and requests/min
 *                   in the push lane against L per minute (goal ≥ 95% of L).
 * Prints one JSON document.
 */

const rateLimit = parseRateLimit(process.env.BENCH_RATE_LIMIT ?? '100/1s');
const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const pushEveryMs = Number(process.env.BENCH_PUSH_EVERY_MS ?? 250);
const backfillLoops = Number(process.env.BENCH_BACKFILL_LOOPS ?? 8);
const pushes = Number(process.env.BENCH_PUSHES ?? 300);
const log = pino({ level: 'silent' });

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};

async function rig(pg: string) {
  const sandbox = await startSandbox({ seed: 2, size: 'small', rateLimit, latencyMs, log });
  const warehouse = await openWarehouse({ databaseUrl: pg, schema: `bench_${Date.now()}`, max: 30 });
  await warehouse.migrate();
  const limiter = createRateLimiter({ rateLimit, logger: log });
  const observers = new Observers();
  const client = new SourceClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, limiter, logger: log, observers, company: 'acme', connections: 16 });
  const sealer = createSealer('bench-secret-0123456789');
  const runner = createPushRunner({ warehouse, clients: new Map([['acme', client]]), sealer, log, observers, concurrency: Number(process.env.BENCH_CONCURRENCY ?? 8), sweepMs: 500 });
  const intake: IntakeContext = { warehouse, sealer, companies: [{ key: 'acme' }] };
  const people = (sandbox.data.truth('individuals') as Individual[]).filter((i) => i.EmployeeNumber && i.LogonId && i.PrimaryEmailAddress && i.Status);
  const update = (i: Individual, n: number) => ({ EmployeeNumber: i.EmployeeNumber, FirstName: `Bench${n}`, LastName: i.LastName, Status: i.Status, PrimaryEmailAddress: i.PrimaryEmailAddress, LogonId: i.LogonId });
  return {
    sandbox, warehouse, limiter, client, observers, runner, intake, people, update,
    async close() {
      await runner.stop();
      await client.close();
      await limiter.close();
      await warehouse.sql.unsafe(`drop schema "${warehouse.schema}" cascade`);
      await warehouse.close();
      await sandbox.close();
    },
  };
}

async function underBackfill(pg: string) {
  const r = await rig(pg);
  await r.runner.start();
  const latencies: number[] = [];
  r.observers.add({ push: (e) => e.outcome === 'applied' && latencies.push(e.latencyMs) });
  const lanes: Record<string, number> = {};
  r.observers.add({ request: (e) => (lanes[e.lane] = (lanes[e.lane] ?? 0) + 1) });
  let stop = false;
  const loops = Array.from({ length: backfillLoops }, async () => {
    while (!stop) await r.client.all(endpoints.departments, {}, { lane: 'backfill' }).catch(() => undefined);
  });
  // Let the backfill fill the window first.
  await new Promise((res) => setTimeout(res, rateLimit.windowMs * 2));
  const started = Date.now();
  const intakeMs: number[] = [];
  let n = 0;
  while (Date.now() - started < seconds * 1000) {
    const who = r.people[n % r.people.length]!;
    const t0 = Date.now();
    await pushIndividuals(r.intake, [r.update(who, n++)]);
    intakeMs.push(Date.now() - t0);
    await new Promise((res) => setTimeout(res, pushEveryMs));
  }
  const settleBy = Date.now() + 30_000;
  while (latencies.length < n && Date.now() < settleBy) await new Promise((res) => setTimeout(res, 100));
  stop = true;
  await Promise.all(loops);
  const elapsedS = (Date.now() - started) / 1000;
  await r.close();
  const slotMs = rateLimit.windowMs / rateLimit.limit;
  return {
    pushed: n,
    applied: latencies.length,
    latency_ms: { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), max: Math.max(...latencies) },
    intake_ms: { p50: quantile(intakeMs, 0.5), p95: quantile(intakeMs, 0.95) },
    goal_p95_ms: 2 * (2 * slotMs + latencyMs),
    goal_note: 'a push is two requests (lookup, Update): 2 × (2 × W/L + service latency)',
    requests_per_s_by_lane: Object.fromEntries(Object.entries(lanes).map(([k, v]) => [k, Math.round((v / elapsedS) * 10) / 10])),
  };
}

async function throughput(pg: string) {
  const r = await rig(pg);
  let pushRequests = 0;
  const done: number[] = [];
  r.observers.add({ request: (e) => e.lane === 'push' && pushRequests++ });
  const waits: number[] = [];
  const durations: number[] = [];
  r.observers.add({ limiterWait: (e) => e.lane === 'push' && waits.push(e.waitMs) });
  r.observers.add({ request: (e) => e.lane === 'push' && durations.push(e.durationMs) });
  r.observers.add({ push: (e) => e.outcome === 'applied' && done.push(Date.now()) });
  const items = Array.from({ length: pushes }, (_, n) => r.update(r.people[n % r.people.length]!, n));
  // Distinct people first, so coalescing does not shrink the work: one change per individual per batch.
  const distinct = new Map(items.map((it) => [it.EmployeeNumber, it]));
  const batch = [...distinct.values()].slice(0, pushes);
  await pushIndividuals(r.intake, batch);
  const started = Date.now();
  await r.runner.start();
  const settleBy = Date.now() + 120_000;
  while (done.length < batch.length && Date.now() < settleBy) await new Promise((res) => setTimeout(res, 50));
  const elapsedMin = (Date.now() - started) / 60_000;
  await r.close();
  const perMinuteBudget = rateLimit.limit * (60_000 / rateLimit.windowMs);
  return {
    pushes: batch.length,
    applied: done.length,
    pushes_per_min: Math.round(done.length / elapsedMin),
    push_lane_requests_per_min: Math.round(pushRequests / elapsedMin),
    budget_per_min: perMinuteBudget,
    requests_share_of_budget: Math.round((pushRequests / elapsedMin / perMinuteBudget) * 1000) / 1000,
    requests_per_push: Math.round((pushRequests / Math.max(1, done.length)) * 100) / 100,
    limiter_wait_ms: { p50: quantile(waits, 0.5), p95: quantile(waits, 0.95) },
    request_ms: { p50: quantile(durations, 0.5), p95: quantile(durations, 0.95) },
  };
}

const pg = await startPostgres();
try {
  const result = {
    rate_limit: process.env.BENCH_RATE_LIMIT ?? '100/1s',
    service_latency_ms: latencyMs,
    under_backfill: await underBackfill(pg.url),
    throughput: await throughput(pg.url),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await pg.stop();
}
