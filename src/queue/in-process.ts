import type { Logger } from 'pino';
import { runStreams, selectStreams, type FreshEnough, type SyncSummary } from '../sync/runner.ts';
import type { CompanyContexts, Progress } from '../sync/context.ts';
import type { JobDef } from './job.ts';
import { asResync } from './resync.ts';
import type { ScheduledRun } from './scheduler.ts';

/**
 * Runs jobs in this process (no Redis): the same jobs on the same schedule, a job never overlapping itself, and a
 * stream read by one run at a time (runner.ts waits on this process's stream locks).
 */
export interface InProcessRunner {
  dispatch(run: ScheduledRun): Promise<void>;
  runNow(company: string, job: JobDef, onProgress?: (p: Progress) => void): Promise<SyncSummary | null>;
  /** Stops after the pages being written; resolves when every run has ended. */
  close(): Promise<void>;
}

export function createInProcessRunner(env: CompanyContexts, log: Logger): InProcessRunner {
  const running = new Map<string, Promise<SyncSummary>>();
  const shutdown = new AbortController();

  const run = async (
    company: string,
    job: JobDef,
    o: { onProgress?: (p: Progress) => void; freshness?: FreshEnough } = {},
  ) => {
    const key = `${company}/${job.name}`;
    if (running.has(key) || shutdown.signal.aborted) {
      log.info({ job: job.name, company }, 'previous run of this job is still going; this run is skipped');
      return null;
    }
    const registered = await env.resolve(company);
    if (!registered || registered.paused) {
      log.info(
        { job: job.name, company },
        registered ? 'company paused; this run is skipped' : 'company not in the companies table; this run is skipped',
      );
      return null;
    }
    const { ctx } = registered;
    // A company paused or removed meanwhile stops like a shutdown: after the page in flight.
    const signal = AbortSignal.any([shutdown.signal, registered.stopped]);
    const jobLog = log.child({ jobId: `${key}@${new Date().toISOString()}`, job: job.name, company });
    const going = job.run
      ? job.run({ ...ctx, log: jobLog, signal })
      : asResync(ctx.warehouse, company, job.name, () =>
          runStreams({ ...ctx, log: jobLog, signal, onProgress: o.onProgress }, selectStreams(job.streams), {
            fullRefresh: job.fullRefresh,
            freshness: o.freshness,
          }),
        );
    running.set(key, going);
    try {
      return await going;
    } finally {
      running.delete(key);
    }
  };

  return {
    dispatch: async (scheduled) => {
      await run(scheduled.company, scheduled.job, {
        freshness: { firedAt: scheduled.firedAt, dependencyBoundsMs: scheduled.dependencyBoundsMs },
      });
    },
    runNow: (company, job, onProgress) => run(company, job, { onProgress }),
    close: async () => {
      shutdown.abort();
      await Promise.allSettled(running.values());
    },
  };
}
