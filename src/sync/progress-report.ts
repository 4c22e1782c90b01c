/** Tells where a stream's run stands while it runs: to the observers, and to its `sync_runs` row for `status`. */
import { storeRunProgress } from '../warehouse/runs.ts';
import type { ProgressEvent } from '../observers.ts';
import type { SyncContext } from './context.ts';
import { requestsPerSecond, type StreamProgress } from './estimate.ts';

/** How often the observers hear of a run's progress (the terminal's live lines). */
export const PROGRESS_TELL_MS = 1_000;
/**
 * How often a run's progress is stored in its row: a write every few seconds per running stream, whatever its
 * pages, so `status` is at most this far behind, and its ETA is carried forward over the gap.
 */
export const PROGRESS_STORE_MS = 5_000;

export interface ProgressReport {
  /** Tells where the run stands now, whatever the time since the last report. */
  now(): void;
  stop(): void;
}

/** Starts reporting one stream run's progress; `stop` when the run ends. */
export function reportProgress(
  ctx: SyncContext,
  stream: string,
  progress: StreamProgress,
  runId?: number,
): ProgressReport {
  let stored = 0;
  const perSecond = ctx.budget ? requestsPerSecond(ctx.budget) : null;
  const tell = () => {
    const event: ProgressEvent = { company: ctx.companyKey, stream, ...progress.estimate(), perSecond };
    ctx.observers?.emit('progress', event);
    if (runId === undefined || Date.now() - stored < PROGRESS_STORE_MS) return;
    stored = Date.now();
    const { company: _c, stream: _s, ...fields } = event;
    const run = { companyKey: ctx.companyKey, id: runId };
    void storeRunProgress(ctx.warehouse, run, { ...fields, at: new Date().toISOString() }).catch((err: unknown) =>
      ctx.log.debug({ err, stream }, 'could not store the run progress'),
    );
  };
  const timer = setInterval(tell, PROGRESS_TELL_MS);
  timer.unref();
  return { now: tell, stop: () => clearInterval(timer) };
}
