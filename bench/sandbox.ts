import { fork } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startSandbox, type SandboxSize } from '../src/sandbox/index.ts';
import { backfill, type BackfillJob, type BackfillResult } from './sandbox-backfill.ts';

/**
 * Sandbox speed and memory: requests/s serving 200-record pages of shift assignments with the rate limit off,
 * loaded from a separate process (so the load does not share the server's event loop or inflate its RSS),
 * and the server's peak RSS after generating the data and after serving. Prints one JSON object.
 *
 *   npm run bench:sandbox -- [--size large] [--seconds 10] [--warmup 3] [--connections 32] [--pages 500]
 *
 * `--mode backfill` instead serves a first sync's load, every endpoint read whole page by page (see
 * bench/sandbox-backfill.ts), and reports the server's peak RSS while serving it:
 *
 *   npm run bench:sandbox -- --mode backfill [--size large] [--connections 4]
 */

interface LoadJob {
  url: string;
  apiKey: string;
  paths: string[];
  seconds: number;
  connections: number;
}

interface LoadResult {
  requests: number;
  failures: number;
  bytes: number;
  seconds: number;
  cpuPercent: number;
}

const MB = 1024 * 1024;

/** The load generator: `connections` loops, each one request at a time, cycling through the pages. */
async function load(job: LoadJob): Promise<LoadResult> {
  const pool = new Pool(job.url, { connections: job.connections, pipelining: 1 });
  const headers = { 'Authorization-Token': job.apiKey };
  let requests = 0;
  let failures = 0;
  let bytes = 0;
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + job.seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const path = job.paths[next++ % job.paths.length]!;
      const res = await pool.request({ method: 'GET', path, headers });
      const body = await res.body.arrayBuffer();
      bytes += body.byteLength;
      if (res.statusCode === 200) requests += 1;
      else failures += 1;
    }
  };
  await Promise.all(Array.from({ length: job.connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await pool.close();
  return {
    requests,
    failures,
    bytes,
    seconds,
    cpuPercent: Math.round(((cpu.user + cpu.system) / 1e6 / seconds) * 100),
  };
}

async function inChild<R>(job: LoadJob | BackfillJob, flag = '--load'): Promise<R> {
  const child = fork(fileURLToPath(import.meta.url), [flag], { execArgv: process.execArgv, stdio: 'inherit' });
  child.send(job);
  const [result] = (await once(child, 'message')) as [R];
  await once(child, 'exit');
  return result;
}

/** Serves a backfill's load and samples this process's RSS meanwhile. */
async function backfillMode(size: SandboxSize, connections: number): Promise<void> {
  const t0 = performance.now();
  const sb = await startSandbox({ size, seed: 1, rateLimit: null });
  const generatedSeconds = (performance.now() - t0) / 1000;
  global.gc?.();
  const afterGeneration = memory();
  let peakServingMB = afterGeneration.rssMB;
  const sampler = setInterval(
    () => (peakServingMB = Math.max(peakServingMB, Math.round(process.memoryUsage().rss / MB))),
    100,
  );
  try {
    const r = await inChild<BackfillResult>({ url: sb.url, apiKey: sb.apiKey, connections }, '--backfill');
    clearInterval(sampler);
    const result = {
      bench: 'sandbox-backfill',
      size,
      generatedSeconds: Number(generatedSeconds.toFixed(2)),
      connections,
      requests: r.requests,
      failures: r.failures,
      records: r.records,
      megabytes: Number((r.bytes / MB).toFixed(1)),
      seconds: Number(r.seconds.toFixed(1)),
      requestsPerSecond: Math.round(r.requests / r.seconds),
      byEndpoint: r.byEndpoint,
      memory: { afterGeneration, peakWhileServingRssMB: peakServingMB, afterServing: memory() },
      goals: { peakRssMB: 2048 },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    clearInterval(sampler);
    await sb.close();
  }
}

function memory() {
  return {
    rssMB: Math.round(process.memoryUsage().rss / MB),
    peakRssMB: Math.round((process.resourceUsage().maxRSS * 1024) / MB),
    heapUsedMB: Math.round(process.memoryUsage().heapUsed / MB),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      size: { type: 'string', default: 'large' },
      seconds: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '3' },
      connections: { type: 'string', default: '32' },
      pages: { type: 'string', default: '500' },
      mode: { type: 'string', default: 'pages' },
    },
  });
  const size = values.size as SandboxSize;
  if (values.mode === 'backfill')
    return backfillMode(size, Number(values.connections === '32' ? 4 : values.connections));
  const t0 = performance.now();
  const sb = await startSandbox({ size, seed: 1, rateLimit: null, log: undefined });
  const generatedSeconds = (performance.now() - t0) / 1000;
  const afterGeneration = memory();
  try {
    const now = sb.data.now().getTime();
    const query = new URLSearchParams({
      'api-version': '2.0',
      StartDate: new Date(now - 365 * 86_400_000).toISOString(),
      EndDate: new Date(now + 365 * 86_400_000).toISOString(),
      Limit: '200',
    });
    const total = sb.data.truth('shiftAssignments', {
      StartDate: new Date(now - 365 * 86_400_000),
      EndDate: new Date(now + 365 * 86_400_000),
    }).length;
    // A fixed set of pages, served once in the warm-up (records serialized then), so the measured phase is steady state.
    const pages = Math.min(Number(values.pages), Math.ceil(total / 200));
    const paths = Array.from({ length: pages }, (_, i) => `/ShiftAssignment/GetList?${query}&Offset=${i * 200}`);
    const job = { url: sb.url, apiKey: sb.apiKey, paths, connections: Number(values.connections) };
    const warm = await inChild<LoadResult>({ ...job, seconds: Number(values.warmup) });
    const cpuBefore = process.cpuUsage();
    const measured = await inChild<LoadResult>({ ...job, seconds: Number(values.seconds) });
    const cpu = process.cpuUsage(cpuBefore);
    const result = {
      bench: 'sandbox',
      size,
      generatedSeconds: Number(generatedSeconds.toFixed(2)),
      shiftAssignmentsInWindow: total,
      pages,
      connections: job.connections,
      warmup: { requestsPerSecond: Math.round(warm.requests / warm.seconds), failures: warm.failures },
      requestsPerSecond: Math.round(measured.requests / measured.seconds),
      recordsPerSecond: Math.round((measured.requests * 200) / measured.seconds),
      megabytesPerSecond: Number((measured.bytes / MB / measured.seconds).toFixed(1)),
      avgPageKB: Number((measured.bytes / 1024 / Math.max(1, measured.requests + measured.failures)).toFixed(1)),
      failures: measured.failures,
      serverCpuPercent: Math.round(((cpu.user + cpu.system) / 1e6 / measured.seconds) * 100),
      // Under CPU contention from other processes, the server's CPU per request says what one core could serve.
      serverCpuMsPerRequest: Number(((cpu.user + cpu.system) / 1000 / Math.max(1, measured.requests)).toFixed(3)),
      loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
      loadCpuPercent: measured.cpuPercent,
      seconds: Number(measured.seconds.toFixed(2)),
      memory: { afterGeneration, afterServing: memory() },
      goals: { requestsPerSecond: 2000, peakRssMB: 2048 },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await sb.close();
  }
}

if (process.argv.includes('--backfill')) {
  process.once('message', (job: BackfillJob) => {
    backfill(job).then((r) => process.send!(r, () => process.exit(0)));
  });
} else if (process.argv.includes('--load')) {
  process.once('message', (job: LoadJob) => {
    load(job).then((r) => process.send!(r, () => process.exit(0)));
  });
} else {
  await main();
}
