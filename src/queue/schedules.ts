import { Cron } from 'croner';
import { cronOf, type JobDef } from './job.ts';

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
