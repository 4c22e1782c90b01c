import { availableParallelism } from 'node:os';
import { parseRateLimit } from '../src/config.ts';
import { isPaged, PAGE_LIMIT_MAX } from '../src/source/endpoints.ts';
import { endpointByPath, endpoints, type EndpointName } from '../src/resources/index.ts';
import { startProxy, type SeenRequest } from '../test/support/proxy.ts';
import { DEFAULT_SCHEMA } from '../src/warehouse/schema.ts';
import { startPostgres } from '../test/support/services.ts';
import { measureMemory, MEMORY_GOAL_MB, type Measured } from './memory.ts';
import {
  cpuSeconds,
  dropWarehouse,
  givenPostgres,
  postgresCpuSeconds,
  runSyncProcess,
  startSandboxProcess,
} from './sync-process.ts';

/**
 * A first sync (`wfsync sync --once` into an empty warehouse), measured three ways. Prints one JSON object.
 *
 * - requests against the minimum: every read the sync made (an endpoint with its query, paging aside: one
 *   stream, partition and window) needs ceil(records / 200) pages, at least one, counted from the sandbox's
 *   truth; every request sent, retries included, is counted against that sum. Goal ≤ 1.01.
 * - wall time against the floor, at a compressed budget with latency: the floor is requests ÷ L × W, the time
 *   the budget alone needs. Goal ≤ 1.05.
 * - peak RSS of the same command at other sizes, with the limit out of the way (bench/memory.ts). Goal ≤ 250 MB.
 *
 *   node --import tsx bench/backfill.ts
 *
 * Knobs (environment): BENCH_SIZE (medium), BENCH_RATE_LIMIT (100/2s), BENCH_LATENCY_MS (50),
 * BENCH_MEMORY_SIZES (small,large; empty to skip), BENCH_MEMORY_RATE_LIMIT (100000/1s), BENCH_DATABASE_URL (the
 * speed run writes into that server's warehouse schema, emptied first, instead of an embedded Postgres; its role
 * must be a superuser, which reads `data_directory`, so that the server's CPU can be counted).
 */

const env = (name: string, fallback: string) => process.env[name] ?? fallback;

interface Read {
  endpoint: EndpointName;
  /** The query without paging. */
  query: URLSearchParams;
  requests: number;
}

/** The reads a run made: requests grouped by endpoint and query, paging and api-version left out. */
function readsOf(seen: readonly SeenRequest[]): Map<string, Read> {
  const reads = new Map<string, Read>();
  for (const r of seen) {
    const e = endpointByPath('GET', r.url.pathname);
    if (!e) continue;
    const query = new URLSearchParams(r.url.search);
    for (const k of [...query.keys()]) if (/^(offset|limit|api-version)$/i.test(k)) query.delete(k);
    query.sort();
    const id = `${e.name}?${query}`;
    const read = reads.get(id) ?? { endpoint: e.name as EndpointName, query, requests: 0 };
    read.requests++;
    reads.set(id, read);
  }
  return reads;
}

/** The fewest requests a read can take: a page per 200 records of a paged list, at least one. */
async function minimumOf(sandboxUrl: string, read: Read): Promise<number> {
  if (!isPaged(endpoints[read.endpoint])) return 1;
  const res = await fetch(`${sandboxUrl}/_sandbox/truth/${read.endpoint}?${read.query}`);
  if (!res.ok) throw new Error(`truth of ${read.endpoint}?${read.query}: HTTP ${res.status} ${await res.text()}`);
  const records = ((await res.json()) as unknown[]).length;
  return Math.max(1, Math.ceil(records / PAGE_LIMIT_MAX));
}

interface Speed {
  size: string;
  rateLimit: string;
  latencyMs: number;
  requests: number;
  minimumRequests: number;
  requestsOverMinimum: number;
  rateLimited: number;
  floorSeconds: number;
  /** The run itself, from its first request to its summary (the sync's `durationMs`). */
  runSeconds: number;
  wallOverFloor: number;
  /** From spawning `wfsync` to its exit: start-up and migrations included. */
  processSeconds: number;
  /** CPU the sync process used, and the machine's load: a floor needs the CPU to write L pages per W. */
  cpuSeconds: number;
  /** CPU the sandbox and Postgres (its backends included) used during the run. */
  sandboxCpuSeconds: number;
  postgresCpuSeconds: number;
  /** The sync's and Postgres's CPU per request (a page, or a lookup), in ms. */
  syncCpuMsPerPage: number;
  postgresCpuMsPerPage: number;
  /**
   * The three processes' CPU against what the machine's cores give in the floor's time: above 1, this machine cannot
   * give the floor the CPU they used. `syncCpuOverFloor` above 1: the sync's one JavaScript thread cannot either.
   */
  cpuOverMachineAtFloor: number;
  syncCpuOverFloor: number;
  cpus: number;
  loadAverage: number;
  peakRssMb: number;
  failedStreams: string[];
  byEndpoint: Record<string, { reads: number; requests: number; minimum: number }>;
  byStream: Record<string, { requests: number; seconds: number }>;
}

async function measureSpeed(size: string, rateLimit: string, latencyMs: number): Promise<Speed> {
  const limit = parseRateLimit(rateLimit);
  const given = process.env.BENCH_DATABASE_URL;
  if (given) await dropWarehouse(given, DEFAULT_SCHEMA);
  const pg = given ? await givenPostgres(given) : await startPostgres({ durable: true });
  const sandbox = await startSandboxProcess({ size, rateLimit, latencyMs });
  const proxy = await startProxy(sandbox.url);
  try {
    const sandboxCpu0 = cpuSeconds(sandbox.proc.pid!) ?? 0;
    const postgresCpu0 = postgresCpuSeconds(pg.dataDir) ?? 0;
    const run = await runSyncProcess({ baseUrl: proxy.url, databaseUrl: pg.url, rateLimit, sandbox });
    const sandboxCpu = (cpuSeconds(sandbox.proc.pid!) ?? 0) - sandboxCpu0;
    const postgresCpu = (postgresCpuSeconds(pg.dataDir) ?? 0) - postgresCpu0;
    const stats = (await (await fetch(`${sandbox.url}/_sandbox/stats`)).json()) as {
      requests: number;
      rateLimited: number;
    };
    const reads = [...readsOf(proxy.seen).values()];
    const byEndpoint: Speed['byEndpoint'] = {};
    let minimum = 0;
    for (const read of reads) {
      const m = await minimumOf(sandbox.url, read);
      minimum += m;
      const b = (byEndpoint[read.endpoint] ??= { reads: 0, requests: 0, minimum: 0 });
      b.reads++;
      b.requests += read.requests;
      b.minimum += m;
    }
    const requests = stats.requests;
    const floorSeconds = (requests / limit.limit) * (limit.periodMs / 1000);
    const runSeconds = run.summary.durationMs / 1000;
    const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;
    return {
      size,
      rateLimit,
      latencyMs,
      requests,
      minimumRequests: minimum,
      requestsOverMinimum: round(requests / minimum),
      rateLimited: stats.rateLimited,
      floorSeconds: round(floorSeconds, 1),
      runSeconds: round(runSeconds, 1),
      wallOverFloor: round(runSeconds / floorSeconds),
      processSeconds: run.processSeconds,
      cpuSeconds: run.cpuSeconds,
      sandboxCpuSeconds: round(sandboxCpu, 1),
      postgresCpuSeconds: round(postgresCpu, 1),
      syncCpuMsPerPage: round((run.cpuSeconds * 1000) / requests, 2),
      postgresCpuMsPerPage: round((postgresCpu * 1000) / requests, 2),
      cpuOverMachineAtFloor: round(
        (run.cpuSeconds + sandboxCpu + postgresCpu) / (floorSeconds * availableParallelism()),
      ),
      syncCpuOverFloor: round(run.cpuSeconds / floorSeconds),
      cpus: availableParallelism(),
      loadAverage: run.loadAverage,
      peakRssMb: run.peakRssMb,
      failedStreams: run.summary.streams.filter((s) => s.outcome !== 'ok').map((s) => s.stream),
      byEndpoint,
      byStream: Object.fromEntries(
        run.summary.streams.map((s) => [s.stream, { requests: s.requests, seconds: round(s.durationMs / 1000, 1) }]),
      ),
    };
  } finally {
    await proxy.close();
    sandbox.stop();
    await pg.stop();
  }
}

async function main(): Promise<void> {
  const speed = await measureSpeed(
    env('BENCH_SIZE', 'medium'),
    env('BENCH_RATE_LIMIT', '100/2s'),
    Number(env('BENCH_LATENCY_MS', '50')),
  );
  const memoryRateLimit = env('BENCH_MEMORY_RATE_LIMIT', '100000/1s');
  const memory: Measured[] = [];
  for (const size of env('BENCH_MEMORY_SIZES', 'small,large')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    memory.push(await measureMemory(size, memoryRateLimit));
  }
  const goals = { requestsOverMinimum: 1.01, wallOverFloor: 1.05, peakRssMb: MEMORY_GOAL_MB };
  process.stdout.write(
    `${JSON.stringify({ bench: 'backfill', goals, speed, memory: { rateLimit: memoryRateLimit, results: memory } }, null, 2)}\n`,
  );
}

await main();
