import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startPostgres } from '../test/support/services.ts';
import { runSyncProcess, startSandboxProcess } from './sync-process.ts';

/**
 * Peak RSS of a full `wfsync sync --once` against the sandbox, per sandbox size. The sandbox and Postgres run in
 * processes of their own, so only the sync's memory is measured: its VmHWM (the kernel's high-water mark of its
 * resident set), read from /proc while it runs and last just before it exits. Prints one JSON object.
 * bench/backfill.ts runs the same measure beside its speed figures.
 *
 *   node --import tsx bench/memory.ts [--sizes small,large] [--rate-limit 100000/1s]
 */

export interface Measured {
  size: string;
  peakRssMb: number;
  seconds: number;
  cpuSeconds: number;
  exitCode: number | null;
  rows: number;
  requests: number;
  streams: number;
  failedStreams: string[];
}

/** One backfill into an empty warehouse of its own, at `size`. */
export async function measureMemory(size: string, rateLimit: string): Promise<Measured> {
  const pg = await startPostgres();
  const sandbox = await startSandboxProcess({ size, rateLimit });
  try {
    const r = await runSyncProcess({ baseUrl: sandbox.url, databaseUrl: pg.url, rateLimit, sandbox });
    return {
      size,
      peakRssMb: r.peakRssMb,
      seconds: r.processSeconds,
      cpuSeconds: r.cpuSeconds,
      exitCode: r.exitCode,
      rows: r.summary.rows,
      requests: r.summary.requests,
      streams: r.summary.streams.length,
      failedStreams: r.summary.streams.filter((s) => s.outcome !== 'ok').map((s) => s.stream),
    };
  } finally {
    sandbox.stop();
    await pg.stop();
  }
}

export const MEMORY_GOAL_MB = 250;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sizes: { type: 'string' }, 'rate-limit': { type: 'string' } } });
  const sizes = (values.sizes ?? 'small,large').split(',').map((s) => s.trim());
  const rateLimit = values['rate-limit'] ?? '100000/1s';
  const results: Measured[] = [];
  for (const size of sizes) results.push(await measureMemory(size, rateLimit));
  process.stdout.write(`${JSON.stringify({ bench: 'memory', rateLimit, goalMb: MEMORY_GOAL_MB, results }, null, 2)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
