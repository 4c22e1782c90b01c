import { jobs } from '../../jobs/index.ts';
import type { ScheduleOptions } from '../../src/queue/schedules.ts';
import { spawnWfsync, waitFor, type Spawned } from './processes.ts';

/** The default crons of every job, as a process with no WFS_CRON_* overrides schedules them. */
export const defaultSchedule: ScheduleOptions = { jobs, cronOverrides: {}, timezone: 'UTC' };

/** The setting that overrides a job's cron (`WFS_CRON_CREDENTIAL_STATUS` for `credential-status`). */
export const cronSetting = (job: string) => `WFS_CRON_${job.toUpperCase().replace(/-/g, '_')}`;

/** A cron that fires once a day at `at`'s second (croner takes seconds as the first field). */
const onceAt = (at: Date) => `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;

/**
 * A `wfsync scheduler` whose jobs `names` each fire once, a few seconds after it has scheduled them. A scheduler
 * that had not printed its schedule a moment before the firing (a loaded machine starts a process late) would
 * never fire: it is killed and started again with more time.
 */
export async function spawnSchedulerFiringOnce(
  names: readonly string[],
  env: Record<string, string>,
): Promise<Spawned> {
  for (let leadMs = 5_000; ; leadMs *= 2) {
    // Croner fires at the start of a second.
    const at = new Date(Math.floor((Date.now() + leadMs) / 1000) * 1000);
    const crons = Object.fromEntries(names.map((name) => [cronSetting(name), onceAt(at)]));
    const scheduler = spawnWfsync(['scheduler'], { ...env, ...crons });
    const scheduled = () => scheduler.output().includes('scheduled incremental syncs');
    await waitFor('', async () => scheduled() || Date.now() > at.getTime() - 500, leadMs, 50);
    if (scheduled() && Date.now() < at.getTime() - 200) return scheduler;
    if (scheduler.proc.exitCode !== null) throw new Error(`the scheduler exited: ${scheduler.output().slice(-2000)}`);
    if (leadMs > 60_000) throw new Error(`the scheduler did not start in a minute: ${scheduler.output().slice(-2000)}`);
    scheduler.proc.kill('SIGKILL');
    await scheduler.exited();
  }
}
