import type { StreamName } from '../resources/index.ts';
import type { SyncContext } from '../sync/context.ts';
import type { SyncSummary } from '../sync/runner.ts';

/** A scheduled job: a name, a default cron (overridable by `WFS_CRON_<NAME>`), and the streams it runs. */
export interface JobDef<S extends StreamName = StreamName> {
  name: string;
  cron: string;
  streams: readonly S[];
  /** Ignore checkpoints (a periodic full re-read catches what offset paging can miss while data moves). */
  fullRefresh?: boolean;
  /** A job that reads no stream (housekeeping): what it does for one company instead. */
  run?: (ctx: SyncContext) => Promise<SyncSummary>;
  description: string;
}

/** Keeps the literal stream names, so jobs/index.ts can check at compile time that every stream is scheduled. */
export function defineJob<const S extends StreamName = never>(job: JobDef<S>): JobDef<S> {
  return job;
}

/** The job's cron, after `WFS_CRON_<NAME>` (e.g. WFS_CRON_SHIFT_ASSIGNMENTS) overrides. */
export function cronOf(job: JobDef, overrides: Record<string, string>): string {
  return overrides[job.name] ?? job.cron;
}
