import { streamSchedules, type ScheduleOptions } from './schedules.ts';
import { streamDependencies, type StreamName } from '../resources/index.ts';
import type { JobDef } from './job.ts';

/** The streams a job reads only because its own streams depend on them (the credentials job: `individuals`). */
export function dependenciesOf(job: JobDef): StreamName[] {
  return streamDependencies.dependenciesOf(job.streams) as StreamName[];
}

/**
 * For each job, the bound of each stream it reads only as a dependency: the interval of that stream's own job,
 * what the status page calls fresh. A dependency no job runs on its own has none, and is read by every run.
 */
export function dependencyBounds(opts: ScheduleOptions, now = new Date()): Map<string, Record<string, number>> {
  const schedules = streamSchedules(opts, now);
  const out = new Map<string, Record<string, number>>();
  for (const job of opts.jobs) {
    const bounds: Record<string, number> = {};
    for (const d of dependenciesOf(job)) {
      const interval = schedules.get(d)?.intervalMs;
      if (interval !== undefined && Number.isFinite(interval)) bounds[d] = interval;
    }
    out.set(job.name, bounds);
  }
  return out;
}
