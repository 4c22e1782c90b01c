import type { Logger } from 'pino';
import type { Environment } from '../app/environment.ts';
import { runStreams, selectStreams, type SyncSummary } from '../sync/runner.ts';
import type { Progress } from '../sync/context.ts';
import type { JobDef } from './job.ts';
import type { ScheduledRun } from './scheduler.ts';

/**
 * Runs jobs in this process (no Redis): the same jobs on the same schedule, a job never overlapping itself.
 */
export interface InProcessRunner {
  dispatch(run: ScheduledRun): Promise<void>;
  runNow(company: string, job: JobDef, onProgress?: (p: Progress) => void): Promise<SyncSummary | null>;
  /** Stops after the pages being written; resolves when every run has ended. */
  close(): Promise<void>;
}

export function createInProcessRunner(env: Environment, log: Logger): InProcessRunner {
  const running = new Map<string, Promise<SyncSummary>>();
  const shutdown = new AbortController();

  const runNow = async (company: string, job: JobDef, onProgress?: (p: Progress) => void) => {
    const key = `${company}/${job.name}`;
    if (running.has(key) || shutdown.signal.aborted) {
      log.info({ job: job.name, company }, 'previous run of this job is still going; this run is skipped');
      return null;
    }
    const ctx = env.contexts.find((c) => c.companyKey === company);
    if (!ctx) throw new Error(`company "${company}" is not configured`);
    const jobLog = log.child({ jobId: `${key}@${new Date().toISOString()}`, job: job.name, company });
    const run = runStreams({ ...ctx, log: jobLog, signal: shutdown.signal, onProgress }, selectStreams(job.streams), {
      fullRefresh: job.fullRefresh,
    });
    running.set(key, run);
    try {
      return await run;
    } finally {
      running.delete(key);
    }
  };

  return {
    dispatch: async (run) => {
      await runNow(run.company, run.job);
    },
    runNow,
    close: async () => {
      shutdown.abort();
      await Promise.allSettled(running.values());
    },
  };
}
