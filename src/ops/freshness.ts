import { Cron } from 'croner';
import type { JobDef } from '../queue/job.ts';
import { cronOf } from '../queue/job.ts';

/** fresh: synced within its schedule; late: a run is overdue; stale: no success for two schedule intervals. */
export type Freshness = 'fresh' | 'late' | 'stale';

export interface StreamSchedule {
  stream: string;
  job: string;
  cron: string;
  /** The time between two runs of its job. */
  intervalMs: number;
  next: Date | null;
}

export interface ScheduleOptions {
  jobs: readonly JobDef[];
  cronOverrides: Record<string, string>;
  timezone: string;
}

/** Each stream's schedule: the first incremental job that runs it (a weekly full re-read is not its pace). */
export function streamSchedules(opts: ScheduleOptions, now = new Date()): Map<string, StreamSchedule> {
  const out = new Map<string, StreamSchedule>();
  const ordered = [...opts.jobs.filter((j) => !j.fullRefresh), ...opts.jobs.filter((j) => j.fullRefresh)];
  for (const job of ordered) {
    const pattern = cronOf(job, opts.cronOverrides);
    const cron = new Cron(pattern, { timezone: opts.timezone, paused: true });
    const [a, b] = cron.nextRuns(2, now);
    const intervalMs = a && b ? b.getTime() - a.getTime() : Number.POSITIVE_INFINITY;
    for (const stream of job.streams) {
      if (!out.has(stream)) out.set(stream, { stream, job: job.name, cron: pattern, intervalMs, next: a ?? null });
    }
    cron.stop();
  }
  return out;
}

/**
 * How fresh a stream is: its lag is the time since its last successful run started (the data is as of then).
 * A run that is due may take a while, so "late" starts at 1.5 intervals; "stale" is two intervals with no success.
 */
export function freshnessOf(lastOkStartedAt: Date | null, intervalMs: number, now = Date.now()): { freshness: Freshness; lagMs: number | null } {
  if (!lastOkStartedAt) return { freshness: 'stale', lagMs: null };
  const lagMs = Math.max(0, now - lastOkStartedAt.getTime());
  if (lagMs > 2 * intervalMs) return { freshness: 'stale', lagMs };
  if (lagMs > 1.5 * intervalMs) return { freshness: 'late', lagMs };
  return { freshness: 'fresh', lagMs };
}

/** A duration the way an operator reads it: 45 s, 12 min, 3 h 5 min, 2 d 4 h. */
export function formatLag(ms: number | null): string {
  if (ms === null) return 'never';
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
