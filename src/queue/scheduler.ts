import { Cron } from 'croner';
import type { Logger } from 'pino';
import { cronOf, type JobDef } from './job.ts';
import { dependencyBounds } from './dependencies.ts';
import { runOffsetMs, sharesOf } from './spread.ts';

/** One firing of a job for one company. */
export interface ScheduledRun {
  company: string;
  job: JobDef;
  /** The scheduled time (the same in every scheduler replica, which makes it a dedupe key). */
  firedAt: Date;
  /** How old each stream the job reads only as a dependency may be and not be read again (runner.ts `Freshness`). */
  dependencyBoundsMs?: Readonly<Record<string, number>>;
  /** How long after the firing the run is queued (spread.ts); runs in-process start at the firing. */
  startAfterMs?: number;
  /** The job's interval, from its cron: a saturated queue's turns are this far apart (turns.ts). */
  intervalMs?: number;
  /** The company's share of the job's spread and interval among the companies fired (spread.ts `sharesOf`). */
  share?: number;
}

export type Dispatch = (run: ScheduledRun) => Promise<void>;

/** The order a firing dispatches its companies in, given their shares (a map in share order). */
export type FiringOrder = (
  job: string,
  intervalMs: number,
  shares: ReadonlyMap<string, number>,
  firedAt: Date,
) => Promise<readonly string[]>;

export interface SchedulerOptions {
  jobs: readonly JobDef[];
  /**
   * The companies to run `job` for at its firing: those not paused with a stream of the job on, as the companies
   * table says at the time.
   */
  companies: (job: JobDef) => readonly string[];
  timezone: string;
  cronOverrides: Record<string, string>;
  dispatch: Dispatch;
  /** The order of their turns on a shared queue (turns.ts `turnOrder`); share order without. */
  order?: FiringOrder;
  log: Logger;
}

export interface Scheduler {
  /** The next firing of each job. */
  upcoming(): { job: string; cron: string; next: Date | null }[];
  stop(): void;
}

/**
 * Companies a firing dispatches at once. Queueing a run is one or two round trips to Redis: one company at a time, the
 * last company of a large fleet is queued only after every other company's round trips, which a busy Redis makes
 * long, and the first companies' next firing may come before it.
 */
export const DISPATCHES_AT_ONCE = 16;

/** Calls `each` for every item, at most `atOnce` at a time, in the items' order. */
async function eachAtOnce<T>(items: readonly T[], atOnce: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, items.length) }, lane));
}

/** The firing's companies in `opts.order`; in share order when there is none, or it cannot be read. */
async function firingOrder(
  opts: SchedulerOptions,
  job: string,
  intervalMs: number,
  shares: ReadonlyMap<string, number>,
  firedAt: Date,
): Promise<readonly string[]> {
  if (!opts.order) return [...shares.keys()];
  try {
    return await opts.order(job, intervalMs, shares, firedAt);
  } catch (err) {
    opts.log.warn({ err, job }, 'could not read the order of turns; the firing goes in share order');
    return [...shares.keys()];
  }
}

/** croner fires every job on its cron; `dispatch` decides whether it runs here or is enqueued. */
export function startScheduler(opts: SchedulerOptions): Scheduler {
  const bounds = dependencyBounds(opts);
  const crons = opts.jobs.map((job) => {
    const pattern = cronOf(job, opts.cronOverrides);
    return new Cron(pattern, { timezone: opts.timezone, catch: true }, async (self) => {
      const firedAt = self.currentRun() ?? new Date();
      const [next, after] = self.nextRuns(2, firedAt);
      const intervalMs = next && after ? after.getTime() - next.getTime() : 0;
      const companies = opts.companies(job);
      const shares = sharesOf(companies, job.name);
      await eachAtOnce(
        await firingOrder(opts, job.name, intervalMs, shares, firedAt),
        DISPATCHES_AT_ONCE,
        async (company) => {
          const share = shares.get(company)!;
          const startAfterMs = runOffsetMs(share, intervalMs, companies.length);
          await opts
            .dispatch({
              company,
              job,
              firedAt,
              dependencyBoundsMs: bounds.get(job.name),
              startAfterMs,
              intervalMs,
              share,
            })
            .catch((err: unknown) => {
              opts.log.error({ err, job: job.name, company }, 'could not dispatch a scheduled run');
            });
        },
      );
    });
  });
  opts.log.info(
    { jobs: opts.jobs.map((j) => ({ job: j.name, cron: cronOf(j, opts.cronOverrides) })), timezone: opts.timezone },
    'scheduler started',
  );
  return {
    upcoming: () =>
      opts.jobs.map((job, i) => ({ job: job.name, cron: cronOf(job, opts.cronOverrides), next: crons[i]!.nextRun() })),
    stop: () => {
      for (const c of crons) c.stop();
    },
  };
}
