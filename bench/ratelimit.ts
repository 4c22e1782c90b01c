import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { formatRateLimit, parseRateLimit } from '../src/config.ts';
import { defaultSafetyMarginMs } from '../src/ratelimit/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { SCOPES } from '../src/sandbox/keys.ts';
import { startRedis } from '../test/support/services.ts';
import { runProcesses, summarise, type Summary, type WorkerConfig } from '../test/ratelimit/sandbox-worker.ts';

/**
 * Three ways to pace requests against the sandbox's per-key limit, each in one run of PROCESSES processes with
 * WORKERS concurrent workers each, over PERIODS compressed periods:
 *   limiter  this project's Redis limiter (also at other safety margins, to show what the margin buys and costs);
 *   bullmq   BullMQ's worker limiter ({ max: L, duration: W }), one request per job;
 *   sleep    a fixed W/L pause after each request in every worker, as a naive client paces itself.
 * Prints one JSON document. Settings: BENCH_RATE_LIMIT (100/1s), BENCH_PERIODS (10), BENCH_PROCESSES (2),
 * BENCH_WORKERS (3), BENCH_MARGINS (0,2,5,20: extra limiter runs besides the default margin).
 */

const rateLimit = parseRateLimit(process.env.BENCH_RATE_LIMIT ?? '100/1s');
const periods = Number(process.env.BENCH_PERIODS ?? 10);
const processes = Number(process.env.BENCH_PROCESSES ?? 2);
const workers = Number(process.env.BENCH_WORKERS ?? 3);
const margins = (process.env.BENCH_MARGINS ?? '0,2,5,20').split(',').filter(Boolean).map(Number);
const defaultMargin = defaultSafetyMarginMs(rateLimit);
// One period more than measured, so the last measured period still has work queued behind it.
const durationMs = (periods + 1) * rateLimit.periodMs;

interface Scenario {
  name: string;
  mode: WorkerConfig['mode'];
  safetyMarginMs?: number;
}

const scenarios: Scenario[] = [
  { name: 'limiter', mode: 'limiter', safetyMarginMs: defaultMargin },
  { name: 'bullmq', mode: 'bullmq' },
  { name: 'sleep', mode: 'sleep' },
  ...margins
    .filter((m) => m !== defaultMargin)
    .map((m): Scenario => ({ name: `limiter-margin-${m}ms`, mode: 'limiter', safetyMarginMs: m })),
];

/** Enough one-request jobs that BullMQ's workers never run dry during the run. */
async function fillQueue(connection: Redis, name: string): Promise<Queue> {
  const queue = new Queue(name, { connection });
  const jobs = Array.from({ length: Math.ceil(rateLimit.limit * (periods + 1) * 2) }, (_, i) => ({
    name: 'request',
    data: { i },
    opts: { removeOnComplete: true, removeOnFail: true },
  }));
  for (let i = 0; i < jobs.length; i += 500) await queue.addBulk(jobs.slice(i, i + 500));
  return queue;
}

async function runScenario(
  s: Scenario,
  redisUrl: string,
  index: number,
): Promise<Summary & { safetyMarginMs?: number }> {
  // A fresh sandbox and API key per scenario: no budget or limiter state carries over.
  const apiKey = `bench-key-${index}`;
  const sandbox = await startSandbox({
    port: 0,
    rateLimit,
    size: 'tiny',
    keys: [{ key: apiKey, scopes: [...SCOPES] }],
  });
  const queueName = `bench-ratelimit-${index}`;
  // BullMQ leaves a connection it was given open, so this one is closed here.
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = s.mode === 'bullmq' ? await fillQueue(connection, queueName) : undefined;
  try {
    const cfg: WorkerConfig = {
      mode: s.mode,
      url: sandbox.url,
      apiKey,
      rateLimit,
      workers,
      durationMs,
      redisUrl,
      safetyMarginMs: s.safetyMarginMs,
      queue: queueName,
    };
    const { startAt, sent } = await runProcesses(cfg, processes);
    const summary = summarise(sent, startAt, { ...cfg, durationMs: periods * rateLimit.periodMs });
    return s.safetyMarginMs === undefined ? summary : { safetyMarginMs: s.safetyMarginMs, ...summary };
  } finally {
    if (queue) {
      await queue.obliterate({ force: true });
      await queue.close();
    }
    await connection.quit();
    await sandbox.close();
  }
}

async function main(): Promise<void> {
  const redis = await startRedis();
  try {
    const results: Record<string, unknown> = {};
    for (const [i, s] of scenarios.entries()) {
      process.stderr.write(`bench ratelimit: ${s.name}\n`);
      results[s.name] = await runScenario(s, redis.url, i);
    }
    const report = {
      rateLimit: formatRateLimit(rateLimit),
      periods,
      processes,
      workersPerProcess: workers,
      defaultSafetyMarginMs: defaultMargin,
      notes: {
        usedPct: 'admitted requests per period as % of the limit, over the measured periods',
        sustainedPct: 'long-run admitted rate as % of the limit (W over the mean span of L admitted requests)',
        limited: '429s: requests sent and refused (wasted)',
        maxSentInAnyPeriod: 'most requests sent in any span of one period W',
      },
      results,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await redis.stop();
  }
}

await main();
