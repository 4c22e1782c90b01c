import type { Logger } from 'pino';
import { streams as catalog } from '../resources/index.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { JobDef } from './job.ts';
import type { Fairness } from './sync-queue.ts';

/** How often the set of companies still in their first sync is read again. */
const REFRESH_MS = 30_000;

/** Companies with a catalog stream never synced successfully: one statement for all of them. */
export async function backfillingCompanies(wh: Warehouse, companies: readonly string[]): Promise<Set<string>> {
  const runs = wh.sql`${wh.sql(wh.schema)}.sync_runs`;
  const rows = await wh.sql<{ company: string }[]>`
    select c.company from unnest(${companies as string[]}::text[]) c(company)
    where exists (
      select 1 from unnest(${catalog.map((s) => s.name)}::text[]) st(stream)
      where not exists (select 1 from ${runs} r where r.company_key = c.company and r.stream = st.stream and r.outcome = 'ok'))`;
  return new Set(rows.map((r) => r.company));
}

/**
 * The enqueuer's fairness (sync-queue.ts): slots from the jobs' order, and which companies backfill, read again
 * every 30 seconds (a company added in between counts as backfilling: it has synced nothing).
 */
export function fleetFairness(
  wh: Warehouse,
  jobs: readonly JobDef[],
  companies: () => readonly string[],
  log: Logger,
): Fairness & { stop(): void } {
  let backfilling = new Set<string>();
  let known = new Set<string>();
  const read = async () => {
    const now = [...companies()];
    backfilling = await backfillingCompanies(wh, now);
    known = new Set(now);
  };
  void read().catch((err: unknown) => log.warn({ err }, 'could not read which companies backfill'));
  const timer = setInterval(
    () => void read().catch((err: unknown) => log.warn({ err }, 'could not read which companies backfill')),
    REFRESH_MS,
  );
  timer.unref();
  const slots = new Map(jobs.map((j, i) => [j.name, i]));
  return {
    backfilling: (company) => backfilling.has(company) || !known.has(company),
    // A job run by hand (run now, a re-sync) comes first among its company's.
    slotOf: (job) => slots.get(job) ?? 0,
    stop: () => clearInterval(timer),
  };
}
