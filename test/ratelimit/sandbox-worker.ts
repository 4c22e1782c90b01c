import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import type { RateLimit } from '../../src/config.ts';
import { rateLimiterMaker } from '../../src/ratelimit/index.ts';
import type { ServiceFeedback } from '../../src/ratelimit/types.ts';

/**
 * A load-generating process for limiter tests and the limiter benchmark: `workers` concurrent loops, each sending
 * `GET /Department/GetList` to the sandbox as fast as its pacing allows. Pacing (`mode`):
 *   limiter  this project's limiter (Redis when `redisUrl` is set), fed with the rate-limit headers;
 *   bullmq   one request per BullMQ job, paced by BullMQ's worker limiter (jobs are queued by the parent);
 *   sleep    a fixed pause of W/L after each request, per worker.
 * Run as a child (`node --import tsx sandbox-worker.ts <json>`): it prints `ready`, starts on `go <epoch ms>`, and
 * prints one JSON line with every request's send time and status.
 */

export interface WorkerConfig {
  mode: 'limiter' | 'bullmq' | 'sleep';
  url: string;
  apiKey: string;
  rateLimit: RateLimit;
  workers: number;
  durationMs: number;
  redisUrl?: string;
  safetyMarginMs?: number;
  /** BullMQ queue name (mode bullmq). */
  queue?: string;
}

export interface Sent {
  /** Epoch ms when the request was sent. */
  t: number;
  status: number;
}

const DEPARTMENTS = '/Department/GetList?api-version=2.0';

function feedbackOf(status: number, headers: Record<string, string | string[] | undefined>): ServiceFeedback {
  const num = (name: string) => {
    const v = headers[name];
    return typeof v === 'string' && v !== '' ? Number(v) : undefined;
  };
  const reset = num('x-ratelimit-reset');
  return {
    remaining: num('x-ratelimit-remaining'),
    resetAtMs: reset === undefined ? undefined : reset * 1000,
    limited: status === 429,
  };
}

async function run(cfg: WorkerConfig, startAt: number): Promise<Sent[]> {
  const pool = new Pool(cfg.url, { connections: cfg.workers });
  const sent: Sent[] = [];
  const deadline = startAt + cfg.durationMs;
  const send = async (): Promise<ServiceFeedback> => {
    const t = Date.now();
    const res = await pool.request({
      path: DEPARTMENTS,
      method: 'GET',
      headers: { 'authorization-token': cfg.apiKey },
    });
    await res.body.dump();
    sent.push({ t, status: res.statusCode });
    return feedbackOf(res.statusCode, res.headers);
  };
  try {
    if (cfg.mode === 'bullmq') await viaBullmq(cfg, send, startAt, deadline);
    else if (cfg.mode === 'sleep') await bySleep(cfg, send, startAt, deadline);
    else await byLimiter(cfg, send, startAt, deadline);
  } finally {
    await pool.close();
  }
  return sent;
}

/** Connections are made before the start, so the first period measures pacing, not connecting. */
async function startsAt(startAt: number): Promise<void> {
  await sleep(Math.max(0, startAt - Date.now()));
}

/** One limiter per process, shared by its workers, as the sync worker shares one. */
async function byLimiter(cfg: WorkerConfig, send: () => Promise<ServiceFeedback>, startAt: number, deadline: number) {
  const redis = cfg.redisUrl ? new Redis(cfg.redisUrl) : undefined;
  await redis?.ping();
  const limiter = (await rateLimiterMaker(redis))({ rateLimit: cfg.rateLimit, safetyMarginMs: cfg.safetyMarginMs });
  const key = createHash('sha256').update(cfg.apiKey).digest('hex').slice(0, 24);
  await startsAt(startAt);
  const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
  const loop = async () => {
    try {
      while (Date.now() < deadline) {
        await limiter.acquire(key, 'incremental', signal);
        await limiter.observe(key, await send());
      }
    } catch (err) {
      if ((err as Error).name !== 'AbortError') throw err;
    }
  };
  try {
    await Promise.all(Array.from({ length: cfg.workers }, loop));
  } finally {
    await limiter.close();
    await redis?.quit();
  }
}

async function bySleep(cfg: WorkerConfig, send: () => Promise<ServiceFeedback>, startAt: number, deadline: number) {
  const pause = cfg.rateLimit.periodMs / cfg.rateLimit.limit;
  await startsAt(startAt);
  const loop = async () => {
    while (Date.now() < deadline) {
      await send();
      await sleep(pause);
    }
  };
  await Promise.all(Array.from({ length: cfg.workers }, loop));
}

async function viaBullmq(cfg: WorkerConfig, send: () => Promise<ServiceFeedback>, startAt: number, deadline: number) {
  const connection = new Redis(cfg.redisUrl!, { maxRetriesPerRequest: null });
  await connection.ping();
  await startsAt(startAt);
  const worker = new Worker(
    cfg.queue!,
    async () => {
      if (Date.now() < deadline) await send();
    },
    {
      connection,
      concurrency: cfg.workers,
      limiter: { max: cfg.rateLimit.limit, duration: cfg.rateLimit.periodMs },
    },
  );
  await sleep(Math.max(0, deadline - Date.now()));
  await worker.close();
  await connection.quit();
}

/** Starts `processes` children with `cfg`, starts them together, and gathers what they sent. */
export async function runProcesses(cfg: WorkerConfig, processes: number): Promise<{ startAt: number; sent: Sent[] }> {
  const script = fileURLToPath(import.meta.url);
  const children = Array.from({ length: processes }, () =>
    spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const lines = children.map((child) => createInterface({ input: child.stdout! })[Symbol.asyncIterator]());
  const next = async (i: number): Promise<string> => {
    const line = await lines[i]!.next();
    if (line.done) throw new Error(`limiter worker ${i} exited early`);
    return line.value;
  };
  await Promise.all(children.map((_, i) => next(i)));
  // Time for every child to connect before the first period.
  const startAt = Date.now() + 1000;
  for (const child of children) child.stdin!.end(`go ${startAt}\n`);
  const results = await Promise.all(children.map(async (_, i) => JSON.parse(await next(i)) as Sent[]));
  return { startAt, sent: results.flat().sort((a, b) => a.t - b.t) };
}

export interface Summary {
  requests: number;
  ok: number;
  /** 429s: requests sent and refused (wasted). */
  limited: number;
  /** Admitted requests per period, as a share of the limit, over the whole periods of the run. */
  usedPct: number;
  /** The least-used whole period, as a share of the limit. */
  minPeriodPct: number;
  /** Admitted requests in each whole period. */
  perPeriod: number[];
  /**
   * The long-run rate, as a share of the limit: W over the mean time from one admitted request to the L-th after it.
   * Unlike `usedPct` it is not rounded to whole bursts, so it shows what a safety margin costs.
   */
  sustainedPct: number;
  /** The most requests sent (admitted or not) in any span of one period W. */
  maxSentInAnyPeriod: number;
  periods: number;
}

export function summarise(sent: Sent[], startAt: number, cfg: WorkerConfig): Summary {
  const { limit, periodMs } = cfg.rateLimit;
  const periods = Math.floor(cfg.durationMs / periodMs);
  const perPeriod = new Array<number>(periods).fill(0);
  for (const s of sent) {
    const i = Math.floor((s.t - startAt) / periodMs);
    if (s.status !== 429 && i >= 0 && i < periods) perPeriod[i]!++;
  }
  const admitted = sent.filter((s) => s.status !== 429).map((s) => s.t);
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    requests: sent.length,
    ok: admitted.length,
    limited: sent.length - admitted.length,
    usedPct: round((100 * perPeriod.reduce((a, b) => a + b, 0)) / (periods * limit)),
    minPeriodPct: round((100 * Math.min(...perPeriod)) / limit),
    perPeriod,
    sustainedPct: round((100 * periodMs) / meanSpan(admitted, limit)),
    maxSentInAnyPeriod: maxInAnyPeriod(
      sent.map((s) => s.t),
      periodMs,
    ),
    periods,
  };
}

/** Mean of t[i + n] - t[i] over sorted times. */
function meanSpan(times: number[], n: number): number {
  let sum = 0;
  for (let i = 0; i + n < times.length; i++) sum += times[i + n]! - times[i]!;
  return sum / Math.max(1, times.length - n);
}

/** The most times that lie in any (t - W, t]. */
export function maxInAnyPeriod(times: number[], periodMs: number): number {
  let max = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while (times[lo]! <= times[hi]! - periodMs) lo++;
    max = Math.max(max, hi - lo + 1);
  }
  return max;
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2]!) as WorkerConfig;
  const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  process.stdout.write('ready\n');
  const go = (await lines.next()).value as string;
  const sent = await run(cfg, Number(go.split(' ')[1]));
  await new Promise<void>((resolve) => process.stdout.write(`${JSON.stringify(sent)}\n`, () => resolve()));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`limiter worker failed: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
