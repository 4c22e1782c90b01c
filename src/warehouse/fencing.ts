import type { Warehouse } from './connection.ts';
import type { Pipeline } from './pipeline.ts';
import type { Fence } from './tables/fencing.ts';

export type { Fence };

/** Postgres's answer to a page of a run that was fenced off (check_run_fence). */
export const FENCED_OFF = 'WF409';

export function isFencedOff(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === FENCED_OFF;
}

/**
 * Takes the next fence token of a company's job, for the run that just took the job's lock. It waits for a page
 * of the previous run that is being written (that page holds the fence row) and refuses every later one.
 */
export async function takeFence(wh: Warehouse, companyKey: string, job: string, holder: string): Promise<Fence> {
  const t = wh.sql`${wh.sql(wh.schema)}.run_fences`;
  const [row] = await wh.sql<{ token: string }[]>`
    insert into ${t} (company_key, job, token, holder, taken_at) values (${companyKey}, ${job}, 1, ${holder}, now())
    on conflict (company_key, job) do update set token = run_fences.token + 1, holder = excluded.holder, taken_at = excluded.taken_at
    returning token`;
  return { companyKey, job, token: Number(row!.token) };
}

/** The same warehouse, whose page writes check the fence first. */
export function fenced(wh: Warehouse, fence: Fence): Warehouse {
  return { ...wh, fence };
}

/** Sends the fence check as the first statement of a page's transaction, when the warehouse carries a fence. */
export function sendFenceCheck(pipe: Pipeline, wh: Warehouse): void {
  const f = wh.fence;
  if (!f) return;
  pipe.send(`select "${wh.schema}".check_run_fence($1::text, $2::text, $3::text::bigint)`, [
    f.companyKey,
    f.job,
    String(f.token),
  ]);
}
