import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startPostgres } from '../test/support/services.ts';

/**
 * Peak RSS of a full `wfsync sync --once` against the sandbox, per sandbox size. The sandbox and Postgres run in
 * processes of their own, so only the sync's memory is measured: its VmHWM (the kernel's high-water mark of its
 * resident set), read from /proc while it runs and last just before it exits. Prints one JSON object.
 *
 *   npx tsx bench/memory.ts [--sizes small,large] [--rate-limit 100000/1s]
 */

const WFSYNC = fileURLToPath(new URL('../bin/wfsync.js', import.meta.url));
const KEY = 'bench-memory-key';

interface Measured {
  size: string;
  peakRssMb: number;
  seconds: number;
  exitCode: number | null;
  rows: number;
  requests: number;
  streams: number;
  failedStreams: string[];
}

/** Peak resident set of a process so far, in kB (VmHWM), or undefined once it is gone. */
function peakKb(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function startSandboxProcess(size: string, rateLimit: string): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [WFSYNC, 'sandbox', '--port', '0', '--size', size, '--rate-limit', rateLimit, '--key', KEY], {
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
  return { url, proc };
}

async function measure(size: string, rateLimit: string, databaseUrl: string): Promise<Measured> {
  const sandbox = await startSandboxProcess(size, rateLimit);
  const info = (await (await fetch(`${sandbox.url}/_sandbox/info`)).json()) as { formIds: number[]; runTypeIds: number[] };
  const cwd = mkdtempSync(join(tmpdir(), 'wfsync-bench-memory-'));
  try {
    const started = Date.now();
    const sync = spawn(process.execPath, [WFSYNC, 'sync', '--once', '--json'], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '/root',
        WFS_BASE_URL: sandbox.url,
        WFS_API_KEY: KEY,
        DATABASE_URL: databaseUrl,
        WFS_RATE_LIMIT: rateLimit,
        WFS_FORM_IDS: info.formIds.join(','),
        WFS_RUN_TYPE_IDS: info.runTypeIds.join(','),
        LOG_LEVEL: 'error',
      },
    });
    let stdout = '';
    let stderr = '';
    sync.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    sync.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    let peak = 0;
    const poll = setInterval(() => (peak = Math.max(peak, peakKb(sync.pid!) ?? 0)), 100);
    const exitCode = await new Promise<number | null>((resolve) => sync.once('exit', (code) => resolve(code)));
    clearInterval(poll);
    const summary = (() => {
      try {
        return JSON.parse(stdout) as { rows: number; requests: number; streams: { stream: string; outcome: string }[] };
      } catch {
        throw new Error(`sync printed no summary (exit ${exitCode}): ${stderr.slice(-1000)}`);
      }
    })();
    return {
      size,
      peakRssMb: Math.round(peak / 102.4) / 10,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      exitCode,
      rows: summary.rows,
      requests: summary.requests,
      streams: summary.streams.length,
      failedStreams: summary.streams.filter((s) => s.outcome !== 'ok').map((s) => s.stream),
    };
  } finally {
    sandbox.proc.kill('SIGTERM');
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sizes: { type: 'string' }, 'rate-limit': { type: 'string' } } });
  const sizes = (values.sizes ?? 'small,large').split(',').map((s) => s.trim());
  const rateLimit = values['rate-limit'] ?? '100000/1s';
  const results: Measured[] = [];
  for (const size of sizes) {
    // A database of its own per size: each run is a backfill into an empty warehouse.
    const pg = await startPostgres();
    try {
      results.push(await measure(size, rateLimit, pg.url));
    } finally {
      await pg.stop();
    }
  }
  process.stdout.write(`${JSON.stringify({ bench: 'memory', rateLimit, goalMb: 250, results }, null, 2)}\n`);
}

await main();
