import { pino } from 'pino';
import { formatRateLimit, parseRateLimit, type RateLimit } from '../src/config.ts';
import { Observers } from '../src/observers.ts';
import { pushIndividuals, type IntakeContext } from '../src/push/intake.ts';
import { createPushRunner } from '../src/push/runner.ts';
import { createSealer } from '../src/warehouse/secret.ts';
import { createRateLimiter, defaultSafetyMarginMs } from '../src/ratelimit/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { SourceClient } from '../src/source/client.ts';
import { endpoints } from '../src/resources/index.ts';
import type { Individual } from '../src/source/schemas/index.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * Push against the key's budget, for each budget in BENCH_RATE_LIMITS (default `100/1s,100/10s,100/60s`: the
 * real one and two compressed), against the sandbox over HTTP with a real Postgres outbox. Two runs per budget:
 *   under_backfill  BENCH_BACKFILL_LOOPS (8) loops read in the backfill lane as fast as the limiter lets them,
 *                   holding the budget at 100%. After one period of backfill alone (so the period is full of
 *                   its starts), one individual update is pushed every W/20 for max(W, 10 s): latency from
 *                   intake to applied, p50/p95, against the goal 2 × (2 × W/L + the service's latency): a push is
 *                   two requests (a lookup and an Update), each allowed two slots' wait;
 *   throughput      no pull: enough individual updates (one per individual) queued at once to keep the push lane
 *                   busy for BENCH_PERIODS (3) periods, and at least 10 s after the first as far as the sandbox's
 *                   individuals allow (at 100/1s: 8 periods). The push lane may burst in the first period, so the rate
 *                   is measured over the periods after it: requests/min in the push lane against L per minute
 *                   (goal ≥ 95%), and pushes/min (each push is two requests, so at most L/2 per period).
 * Prints one JSON document. At 100/60s the whole bench takes about seven minutes.
 */

const budgets = (process.env.BENCH_RATE_LIMITS ?? '100/1s,100/10s,100/60s')
  .split(',')
  .map((s) => parseRateLimit(s.trim()));
const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 5);
const backfillLoops = Number(process.env.BENCH_BACKFILL_LOOPS ?? 8);
const periods = Number(process.env.BENCH_PERIODS ?? 3);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const log = pino({ level: 'silent' });

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};
/** Mean of t[i + n] - t[i] over sorted times (NaN when there are not n + 1 of them). */
function meanSpan(times: number[], n: number): number {
  let sum = 0;
  for (let i = 0; i + n < times.length; i++) sum += times[i + n]! - times[i]!;
  return times.length > n ? sum / (times.length - n) : NaN;
}
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

async function rig(pg: string, rateLimit: RateLimit) {
  const sandbox = await startSandbox({ seed: 2, size: 'small', rateLimit, latencyMs, log });
  const warehouse = await openWarehouse({ databaseUrl: pg, schema: `bench_${Date.now()}`, max: concurrency + 14 });
  await warehouse.migrate();
  const limiter = createRateLimiter({ rateLimit, logger: log });
  const observers = new Observers();
  const client = new SourceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    limiter,
    logger: log,
    observers,
    company: 'acme',
    connections: 16,
  });
  const sealer = createSealer('bench-secret-0123456789');
  const runner = createPushRunner({
    warehouse,
    clients: new Map([['acme', client]]),
    sealer,
    log,
    observers,
    concurrency,
    sweepMs: 500,
  });
  const intake: IntakeContext = { warehouse, sealer, companies: [{ key: 'acme' }] };
  const people = (sandbox.data.truth('individuals') as Individual[]).filter(
    (i) => i.EmployeeNumber && i.LogonId && i.PrimaryEmailAddress && i.Status,
  );
  const update = (i: Individual, n: number) => ({
    EmployeeNumber: i.EmployeeNumber,
    FirstName: `Bench${n}`,
    LastName: i.LastName,
    Status: i.Status,
    PrimaryEmailAddress: i.PrimaryEmailAddress,
    LogonId: i.LogonId,
  });
  return {
    sandbox,
    warehouse,
    limiter,
    client,
    observers,
    runner,
    intake,
    people,
    update,
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

async function underBackfill(pg: string, rateLimit: RateLimit) {
  const r = await rig(pg, rateLimit);
  await r.runner.start();
  const latencies: number[] = [];
  r.observers.add({ push: (e) => e.outcome === 'applied' && latencies.push(e.latencyMs) });
  const lanes: Record<string, number> = {};
  const pushWaits: number[] = [];
  let counting = false;
  r.observers.add({
    request: (e) => counting && (lanes[e.lane] = (lanes[e.lane] ?? 0) + 1),
    limiterWait: (e) => counting && e.lane === 'push' && pushWaits.push(e.waitMs),
  });
  let stop = false;
  const loops = Array.from({ length: backfillLoops }, async () => {
    while (!stop) await r.client.all(endpoints.departments, {}, { lane: 'backfill' }).catch(() => undefined);
  });
  // One period of backfill alone, so the period is full of its starts when the pushes begin.
  await sleep(rateLimit.periodMs);
  const pushEveryMs = rateLimit.periodMs / 20;
  const forMs = Math.max(rateLimit.periodMs, 10_000);
  counting = true;
  const started = Date.now();
  let n = 0;
  while (Date.now() - started < forMs) {
    const who = r.people[n % r.people.length]!;
    await pushIndividuals(r.intake, [r.update(who, n++)]);
    await sleep(Math.max(0, started + n * pushEveryMs - Date.now()));
  }
  const elapsedS = (Date.now() - started) / 1000;
  counting = false;
  const settleBy = Date.now() + 30_000 + 2 * rateLimit.periodMs;
  while (latencies.length < n && Date.now() < settleBy) await sleep(100);
  stop = true;
  await Promise.all(loops);
  const limited = r.sandbox.stats().rateLimited;
  await r.close();
  const slotMs = (rateLimit.periodMs + defaultSafetyMarginMs(rateLimit)) / rateLimit.limit;
  const goal = 2 * (2 * slotMs + latencyMs);
  const p95 = quantile(latencies, 0.95);
  const perS = (lane: string) => round((lanes[lane] ?? 0) / elapsedS, 2);
  return {
    pushed: n,
    applied: latencies.length,
    latency_ms: { p50: quantile(latencies, 0.5), p95, max: Math.max(...latencies) },
    goal_p95_ms: round(goal),
    goal_met: p95 <= goal,
    // The limiter's part of the latency: each push request's wait for a slot (goal: about one slot, W/L).
    push_limiter_wait_ms: {
      p50: quantile(pushWaits, 0.5),
      p95: quantile(pushWaits, 0.95),
      max: Math.max(...pushWaits),
    },
    budget_used: round(
      (perS('push') + perS('backfill') + perS('incremental')) / (rateLimit.limit / (rateLimit.periodMs / 1000)),
      3,
    ),
    requests_per_s_by_lane: { push: perS('push'), backfill: perS('backfill') },
    service_429s: limited,
  };
}

async function throughput(pg: string, rateLimit: RateLimit) {
  const r = await rig(pg, rateLimit);
  const pushRequests: number[] = [];
  const applied: number[] = [];
  const waits: number[] = [];
  r.observers.add({
    request: (e) => void (e.lane === 'push' && pushRequests.push(Date.now() - e.durationMs)),
    limiterWait: (e) => void (e.lane === 'push' && waits.push(e.waitMs)),
    push: (e) => void (e.outcome === 'applied' && applied.push(Date.now())),
  });
  // One change per individual, so coalescing does not shrink the work.
  const distinct = [...new Map(r.people.map((p) => [p.EmployeeNumber, p])).values()];
  // At least 10 s past the first period, so a compressed period measures more than start-up, but no more periods
  // than the individuals can keep busy (each push is two requests), so the queue does not run dry.
  const affordable = Math.floor((2 * distinct.length) / (1.2 * rateLimit.limit));
  const runPeriods = Math.min(affordable, Math.max(periods, Math.ceil(10_000 / rateLimit.periodMs) + 1));
  // A fifth more than the periods can take.
  const wanted = Math.ceil(((runPeriods * rateLimit.limit) / 2) * 1.2);
  const batch = distinct.slice(0, wanted).map((p, n) => r.update(p, n));
  await pushIndividuals(r.intake, batch);
  const started = Date.now();
  await r.runner.start();
  const end = started + runPeriods * rateLimit.periodMs;
  await sleep(end - Date.now());
  const from = started + rateLimit.periodMs;
  const measured = (ts: number[]) => ts.filter((t) => t >= from && t < end).sort((a, b) => a - b);
  const limited = r.sandbox.stats().rateLimited;
  await r.close();
  const perMinuteBudget = rateLimit.limit * (60_000 / rateLimit.periodMs);
  // The push lane may burst, so whole periods would count bursts, not the rate: the sustained rate is L over the
  // mean time from one request start to the L-th after it (as bench/ratelimit.ts measures it).
  const starts = measured(pushRequests);
  const requestsPerMin = (rateLimit.limit * 60_000) / meanSpan(starts, rateLimit.limit);
  const requestsPerPush = starts.length / Math.max(1, measured(applied).length);
  return {
    queued: batch.length,
    measured: `periods 2-${runPeriods}, after the first (the push lane may burst in it)`,
    applied_in_first_period: applied.filter((t) => t < from).length,
    requests_per_push: round(requestsPerPush, 2),
    pushes_per_min: Math.round(requestsPerMin / requestsPerPush),
    push_lane_requests_per_min: Math.round(requestsPerMin),
    budget_per_min: perMinuteBudget,
    requests_share_of_budget: round(requestsPerMin / perMinuteBudget, 3),
    goal_met: requestsPerMin / perMinuteBudget >= 0.95,
    // True if the queue ran dry before the end: the rate would then understate what the push path can do.
    ran_dry: applied.length >= batch.length,
    limiter_wait_ms: { p50: quantile(waits, 0.5), p95: quantile(waits, 0.95) },
    service_429s: limited,
  };
}

const pg = await startPostgres();
try {
  const results = [];
  for (const rateLimit of budgets) {
    results.push({
      rate_limit: formatRateLimit(rateLimit),
      slot_ms: round((rateLimit.periodMs + defaultSafetyMarginMs(rateLimit)) / rateLimit.limit),
      under_backfill: await underBackfill(pg.url, rateLimit),
      throughput: await throughput(pg.url, rateLimit),
    });
  }
  const result = { service_latency_ms: latencyMs, concurrency, backfill_loops: backfillLoops, budgets: results };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await pg.stop();
}
