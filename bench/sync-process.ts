import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresAt } from '../src/warehouse/socket.ts';
import { migrationsTable } from '../src/warehouse/migrate.ts';
import { nodeFlagsOf, WFSYNC } from '../test/support/processes.ts';
import { gcTotals, isGcTraceLine, type GcTotals } from './gc-trace.ts';
import type { RunningPostgres } from '../test/support/services.ts';

/**
 * The parts of a bench that runs `wfsync sync --once` the way an operator does: the sandbox and the sync each in a
 * process of their own, so the sync's memory and time are its own; and the warehouse it writes into, emptied or
 * given by URL. Used by bench/memory.ts, bench/backfill.ts, bench/rowpath.ts and bench/floor.ts.
 */

export const BENCH_KEY = 'bench-key';

export interface SandboxProcess {
  url: string;
  proc: ChildProcess;
  info: { formIds: number[]; runTypeIds: number[]; now: string };
  stop(): void;
}

/** Peak resident set of a process so far, in kB (VmHWM), or undefined once it is gone. */
export function peakKb(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time a process has used so far (user + system), in seconds, or undefined once it is gone. With `children`,
 * that of its children that have ended as well (a Postgres server's finished backends).
 */
export function cpuSeconds(pid: number, o: { children?: boolean } = {}): number | undefined {
  try {
    // Fields after the command's closing parenthesis: utime, stime, cutime and cstime are the 12th to 15th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const own = Number(fields[11]) + Number(fields[12]);
    return (o.children ? own + Number(fields[13]) + Number(fields[14]) : own) / 100;
  } catch {
    return undefined;
  }
}

/** CPU time of a Postgres server and its backends, those still running and those ended, in seconds; undefined once it is gone. */
export function postgresCpuSeconds(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    const own = cpuSeconds(pid, { children: true });
    return own === undefined ? undefined : children.reduce((sum, c) => sum + (cpuSeconds(c) ?? 0), own);
  } catch {
    return undefined;
  }
}

/** A warehouse schema and its record of migrations dropped: the next sync into it is a first one. */
export async function dropWarehouse(url: string, schema: string): Promise<void> {
  const sql = postgresAt(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
    await sql.unsafe(`drop table if exists drizzle."${migrationsTable(schema)}"`);
  } finally {
    await sql.end();
  }
}

/** A server given by URL (its role a superuser, which reads `data_directory`), left running after. */
export async function givenPostgres(url: string): Promise<RunningPostgres> {
  const sql = postgresAt(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`;
    return { url, dataDir: row!.dir, stop: async () => {} };
  } finally {
    await sql.end();
  }
}

/** `keys`: the API keys the sandbox accepts (default: BENCH_KEY alone). */
export async function startSandboxProcess(o: {
  size: string;
  rateLimit: string;
  latencyMs?: number;
  seed?: number;
  keys?: readonly string[];
}): Promise<SandboxProcess> {
  const args = [WFSYNC, 'sandbox', '--port', '0', '--size', o.size, '--rate-limit', o.rateLimit];
  for (const key of o.keys ?? [BENCH_KEY]) args.push('--key', key);
  if (o.seed !== undefined) args.push('--seed', String(o.seed));
  if (o.latencyMs) args.push('--latency-ms', String(o.latencyMs));
  const proc = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const look = (d: Buffer) => {
      out += d.toString();
      const m = /sandbox serving (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    proc.stdout!.on('data', look);
    proc.stderr!.on('data', look);
    proc.once('exit', (code) => reject(new Error(`sandbox exited (${code}) before serving: ${out.slice(-500)}`)));
  });
  const info = (await (await fetch(`${url}/_sandbox/info`)).json()) as SandboxProcess['info'];
  return { url, proc, info, stop: () => void proc.kill('SIGTERM') };
}

export interface StreamSummary {
  stream: string;
  outcome: string;
  requests: number;
  durationMs: number;
}

export interface SyncSummary {
  rows: number;
  requests: number;
  durationMs: number;
  streams: StreamSummary[];
}

export interface SyncProcessResult {
  peakRssMb: number;
  /** From spawning the process to its exit: start-up and migrations included. */
  processSeconds: number;
  /** CPU time the sync process used (user + system), as last sampled before it exited. */
  cpuSeconds: number;
  /** The machine's 1-minute load average at the end: on a shared machine, how much CPU others took. */
  loadAverage: number;
  exitCode: number | null;
  summary: SyncSummary;
  stderr: string;
  /** With `traceGc`: what the garbage collector did. */
  gc?: GcTotals;
}

/** Runs `wfsync sync --once --json` against `baseUrl` into `databaseUrl`, sampling its peak RSS while it runs. */
export async function runSyncProcess(o: {
  baseUrl: string;
  databaseUrl: string;
  rateLimit: string;
  sandbox: SandboxProcess;
  env?: Record<string, string>;
  /** Another checkout's bin/wfsync.js (default: this one's). */
  wfsync?: string;
  /** Runs it with V8's --trace-gc-nvp beside its own flags and reports the collector's totals (gc-trace.ts). */
  traceGc?: boolean;
}): Promise<SyncProcessResult> {
  const cwd = mkdtempSync(join(tmpdir(), 'wfsync-bench-'));
  try {
    const started = Date.now();
    const wfsync = o.wfsync ?? WFSYNC;
    // Started as an operator starts it, as its own executable: its first line gives node its flags. A traced run
    // passes node those flags itself, and the trace's.
    const [file, args] = o.traceGc
      ? [process.execPath, [...nodeFlagsOf(wfsync), '--trace-gc-nvp', wfsync, 'sync', '--once', '--json']]
      : [wfsync, ['sync', '--once', '--json']];
    const sync = spawn(file, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/root',
        WFS_BASE_URL: o.baseUrl,
        WFS_API_KEY: BENCH_KEY,
        DATABASE_URL: o.databaseUrl,
        WFS_RATE_LIMIT: o.rateLimit,
        WFS_FORM_IDS: o.sandbox.info.formIds.join(','),
        WFS_RUN_TYPE_IDS: o.sandbox.info.runTypeIds.join(','),
        LOG_LEVEL: 'error',
        ...o.env,
      },
    });
    let stdout = '';
    let stderr = '';
    sync.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    sync.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    let peak = 0;
    let cpu = 0;
    const poll = setInterval(() => {
      peak = Math.max(peak, peakKb(sync.pid!) ?? 0);
      cpu = cpuSeconds(sync.pid!) ?? cpu;
    }, 50);
    const exitCode = await new Promise<number | null>((resolve) => sync.once('exit', (code) => resolve(code)));
    clearInterval(poll);
    const lines = stdout.split('\n');
    let summary: SyncSummary;
    try {
      summary = JSON.parse(lines.filter((l) => !isGcTraceLine(l)).join('\n')) as SyncSummary;
    } catch {
      throw new Error(`sync printed no summary (exit ${exitCode}): ${stderr.slice(-1000)}`);
    }
    return {
      peakRssMb: Math.round(peak / 102.4) / 10,
      processSeconds: Math.round((Date.now() - started) / 100) / 10,
      cpuSeconds: Math.round(cpu * 10) / 10,
      loadAverage: Math.round(loadavg()[0]! * 10) / 10,
      exitCode,
      summary,
      stderr,
      ...(o.traceGc ? { gc: gcTotals(lines) } : {}),
    };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
