import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { DEFAULT_SCHEMA } from '../src/warehouse/schema.ts';
import { postgresAt } from '../src/warehouse/socket.ts';
import { WFSYNC_NODE_FLAGS } from '../test/support/processes.ts';
import { startPostgres, type RunningPostgres } from '../test/support/services.ts';
import type { GcTotals } from './gc-trace.ts';
import {
  BENCH_KEY,
  cpuSeconds,
  dropWarehouse,
  givenPostgres,
  postgresCpuSeconds,
  runSyncProcess,
  startSandboxProcess,
  type SandboxProcess,
} from './sync-process.ts';

/**
 * The floor of a page's CPU on this machine, beside what the sync spends. Against one sandbox (BENCH_SIZE, default
 * medium, its budget out of the way) and one warehouse, emptied before each, a round runs these programs over a first
 * sync's pages, each in a process of its own started with the sync's node flags:
 *
 *   read       requests and parses every page (bench/floor-process.ts)
 *   write      the same, and inserts each page's top-level scalar fields into their table: one statement a page
 *   stages     the sync's own parse, validation, mapping, fingerprint and encoding, and one statement per table
 *   copy       the same stages, then one COPY per table straight into it: the other set-based write
 *   unindexed  `stages` into tables with their primary keys and unique indexes alone: what the other indexes (the
 *              analysts' queries, the sync's ranged reads) cost the write
 *   writePage  the sync's parse and validation, and its writePage
 *   client     the same through the sync's client (limiter, retries, read-ahead)
 *   sync       `wfsync sync --once`, all of it
 *   base       the same from another checkout, BENCH_BASE (its directory, dependencies installed or linked): goals
 *              in milliseconds depend on the machine, so with both `sync` and `base` it prints `syncOverBase`, the
 *              ratio of their medians, which holds from one machine to another
 *
 * For each: the process's CPU per page (of the whole process, and for floor-process.ts's programs of its loop
 * alone), and Postgres's (server and backends). BENCH_PROGRAMS=a,b runs some of them; rounds alternate the order
 * (BENCH_ROUNDS, default 2). The warehouse is an embedded Postgres 18, or the server of BENCH_DATABASE_URL (a
 * superuser's, which reads `data_directory`; its warehouse schema is dropped). With BENCH_GC=1, `sync` and `base`
 * run under V8's --trace-gc-nvp and print the collector's work a page as well (bench/gc-trace.ts): KB promoted out
 * of the young generation, the scavenges' pauses, and the full collections. Prints one JSON object.
 *
 *   node --import tsx bench/floor.ts
 */

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const SIZE = env('BENCH_SIZE', 'medium');
const ROUNDS = Number(env('BENCH_ROUNDS', '2'));
const TRACE_GC = env('BENCH_GC', '') === '1';
const RATE_LIMIT = '1000000/1s';
const FLOOR = fileURLToPath(new URL('./floor-process.ts', import.meta.url));

const ALL_PROGRAMS = ['read', 'write', 'stages', 'copy', 'unindexed', 'writePage', 'client', 'sync', 'base'] as const;
type Program = (typeof ALL_PROGRAMS)[number];
const BASE = process.env.BENCH_BASE;
const DEFAULT_PROGRAMS = ALL_PROGRAMS.filter((p) => p !== 'base' || BASE !== undefined);
const PROGRAMS = env('BENCH_PROGRAMS', DEFAULT_PROGRAMS.join(','))
  .split(',')
  .map((p) => p.trim());
const unknown = PROGRAMS.filter((p) => !(ALL_PROGRAMS as readonly string[]).includes(p));
if (unknown.length > 0) {
  process.stderr.write(
    `BENCH_PROGRAMS: no program named ${unknown.join(', ')} (there are ${ALL_PROGRAMS.join(', ')})\n`,
  );
  process.exit(2);
}
const BASE_WFSYNC = BASE === undefined ? undefined : resolve(BASE, 'bin/wfsync.js');
if (PROGRAMS.includes('base') && (BASE_WFSYNC === undefined || !existsSync(BASE_WFSYNC))) {
  process.stderr.write(
    `BENCH_BASE: the base program needs another checkout's directory, with bin/wfsync.js (got ${BASE ?? 'nothing'})\n`,
  );
  process.exit(2);
}

interface Measured {
  pages: number;
  records: number;
  processMsPerPage: number;
  /** floor-process.ts's CPU from their first request to their last write, start-up and imports aside. */
  loopMsPerPage?: number;
  postgresMsPerPage: number;
  sandboxMsPerPage: number;
  /** `sync` and `base` with BENCH_GC=1: the collector's work a page (bench/gc-trace.ts). */
  gc?: {
    promotedKbPerPage: number;
    scavengePauseMsPerPage: number;
    fullCollections: number;
    fullCollectionMsPerPage: number;
  };
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The warehouse schema dropped and made again: each program writes into empty tables. */
async function emptyWarehouse(url: string): Promise<void> {
  await dropWarehouse(url, DEFAULT_SCHEMA);
  const wh = await openWarehouse({ databaseUrl: url, schema: DEFAULT_SCHEMA });
  try {
    await wh.migrate();
  } finally {
    await wh.close();
  }
}

interface FloorOutput {
  pages: number;
  records: number;
  loopCpuMs: number;
  processCpuMs: number;
}

/** Drops every index of the warehouse but primary keys and unique ones, which no write needs. */
async function dropQueryIndexes(url: string, schema: string): Promise<void> {
  const sql = postgresAt(url, { max: 1, onnotice: () => {} });
  try {
    const indexes = await sql<{ name: string }[]>`select i.indexrelid::regclass::text as name from pg_index i
      join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and not i.indisprimary and not i.indisunique`;
    for (const { name } of indexes) await sql.unsafe(`drop index ${name}`);
  } finally {
    await sql.end();
  }
}

type FloorMode = Exclude<Program, 'sync' | 'base' | 'unindexed'>;

async function runFloor(mode: FloorMode, sandbox: SandboxProcess, databaseUrl: string): Promise<FloorOutput> {
  const child = spawn(process.execPath, [...WFSYNC_NODE_FLAGS, '--import', 'tsx', FLOOR], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      FLOOR_MODE: mode,
      FLOOR_SANDBOX_URL: sandbox.url,
      FLOOR_API_KEY: BENCH_KEY,
      FLOOR_SCHEMA: DEFAULT_SCHEMA,
      DATABASE_URL: databaseUrl,
    },
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`floor ${mode} exited ${code}: ${err.slice(-1000)}`);
  return JSON.parse(out) as FloorOutput;
}

async function requestsServed(sandbox: SandboxProcess): Promise<number> {
  return ((await (await fetch(`${sandbox.url}/_sandbox/stats`)).json()) as { requests: number }).requests;
}

async function measure(program: Program, sandbox: SandboxProcess, pg: RunningPostgres): Promise<Measured> {
  // Another checkout makes its own schema, as its first run would.
  if (program === 'base') await dropWarehouse(pg.url, DEFAULT_SCHEMA);
  else await emptyWarehouse(pg.url);
  if (program === 'unindexed') await dropQueryIndexes(pg.url, DEFAULT_SCHEMA);
  const requests0 = await requestsServed(sandbox);
  const sandbox0 = cpuSeconds(sandbox.proc.pid!) ?? 0;
  const pg0 = postgresCpuSeconds(pg.dataDir) ?? 0;
  let processMs: number;
  let loopMs: number | undefined;
  let records: number | undefined;
  let gc: GcTotals | undefined;
  if (program === 'sync' || program === 'base') {
    const wfsync = program === 'base' ? BASE_WFSYNC : undefined;
    const run = await runSyncProcess({
      baseUrl: sandbox.url,
      databaseUrl: pg.url,
      rateLimit: RATE_LIMIT,
      sandbox,
      wfsync,
      traceGc: TRACE_GC,
    });
    const failed = run.summary.streams.filter((s) => s.outcome !== 'ok');
    if (failed.length > 0)
      throw new Error(`${program}: ${failed.map((s) => s.stream).join(', ')} failed: ${run.stderr.slice(-1000)}`);
    processMs = run.cpuSeconds * 1000;
    records = run.summary.rows;
    gc = run.gc;
  } else {
    const floor = await runFloor(program === 'unindexed' ? 'stages' : program, sandbox, pg.url);
    processMs = floor.processCpuMs;
    loopMs = floor.loopCpuMs;
    records = floor.records;
  }
  // Only the sandbox counts what it served: the sync reads /_sandbox/info as well, and so do the floors.
  const pages = (await requestsServed(sandbox)) - requests0;
  const perPage = (ms: number) => round(ms / pages);
  return {
    pages,
    records,
    processMsPerPage: perPage(processMs),
    ...(loopMs === undefined ? {} : { loopMsPerPage: perPage(loopMs) }),
    postgresMsPerPage: perPage(((postgresCpuSeconds(pg.dataDir) ?? 0) - pg0) * 1000),
    sandboxMsPerPage: perPage(((cpuSeconds(sandbox.proc.pid!) ?? 0) - sandbox0) * 1000),
    ...(gc
      ? {
          gc: {
            promotedKbPerPage: round((gc.promotedMb * 1000) / pages, 1),
            scavengePauseMsPerPage: perPage(gc.scavengePauseMs),
            fullCollections: gc.fullCollections,
            fullCollectionMsPerPage: perPage(gc.fullCollectionMs),
          },
        }
      : {}),
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** This checkout's CPU per page over the base's, of the sync process and of Postgres: a figure that holds across machines. */
function ratioOfMedians(these: Measured[], base: Measured[]): { process: number; postgres: number } {
  const of = (runs: Measured[], pick: (m: Measured) => number) => median(runs.map(pick));
  return {
    process: round(of(these, (m) => m.processMsPerPage) / of(base, (m) => m.processMsPerPage), 3),
    postgres: round(of(these, (m) => m.postgresMsPerPage) / of(base, (m) => m.postgresMsPerPage), 3),
  };
}

async function main(): Promise<void> {
  const given = process.env.BENCH_DATABASE_URL;
  const pg = given ? await givenPostgres(given) : await startPostgres({ durable: true });
  const sandbox = await startSandboxProcess({ size: SIZE, rateLimit: RATE_LIMIT });
  const runs = Object.fromEntries(PROGRAMS.map((p) => [p, [] as Measured[]]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const order = PROGRAMS.slice() as Program[];
      if (r % 2 === 1) order.reverse();
      for (const program of order) runs[program]!.push(await measure(program, sandbox, pg));
    }
  } finally {
    sandbox.stop();
    await pg.stop();
  }
  const overBase = runs.base?.length && runs.sync?.length ? { syncOverBase: ratioOfMedians(runs.sync, runs.base) } : {};
  process.stdout.write(
    `${JSON.stringify({ bench: 'floor', size: SIZE, warehouse: given ? 'given' : 'embedded', goals: { syncMsPerPage: 4, postgresMsPerPage: 3 }, runs, ...overBase }, null, 2)}\n`,
  );
}

await main();
