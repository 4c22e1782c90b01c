import type { Warehouse } from './connection.ts';
import { FINAL_STATES } from './tables/push.ts';

/** Rows deleted (or emptied) per statement: a first prune of a large table holds its locks briefly, batch by batch. */
export const PRUNE_BATCH = 5000;

export const horizon = (days: number) => `${Math.round(days * 86_400_000)} milliseconds`;

/**
 * Runs `batch` (one statement that prunes at most `size` rows and answers how many) until it prunes fewer: each
 * statement is its own transaction.
 */
export async function inBatches(batch: (size: number) => Promise<number>, size = PRUNE_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await batch(size);
    total += n;
    if (n < size) return total;
  }
}

/**
 * Deletes a company's runs finished longer ago than the horizon, except each stream's latest run and latest
 * successful run: the status page, freshness and the resumption of an interrupted sync read those.
 */
export async function pruneRuns(wh: Warehouse, companyKey: string, days: number, size = PRUNE_BATCH): Promise<number> {
  const t = wh.sql`${wh.sql(wh.schema)}.sync_runs`;
  return inBatches(async (limit) => {
    const rows = await wh.sql`
      delete from ${t} where company_key = ${companyKey} and id in (
        select r.id from ${t} r
        where r.company_key = ${companyKey} and r.finished_at < now() - ${horizon(days)}::interval
          and r.id <> (select l.id from ${t} l where l.company_key = ${companyKey} and l.stream = r.stream
                       order by l.started_at desc limit 1)
          and r.id is distinct from (select o.id from ${t} o where o.company_key = ${companyKey} and o.stream = r.stream
                       and o.outcome = 'ok' order by o.started_at desc limit 1)
        limit ${limit})`;
    return rows.count;
  }, size);
}

/** Deletes a company's rejects resolved longer ago than the horizon; open ones stay however old. */
export async function pruneResolvedRejects(
  wh: Warehouse,
  companyKey: string,
  days: number,
  size = PRUNE_BATCH,
): Promise<number> {
  const t = wh.sql`${wh.sql(wh.schema)}.sync_rejects`;
  return inBatches(async (limit) => {
    const rows = await wh.sql`
      delete from ${t} where company_key = ${companyKey} and id in (
        select id from ${t} where company_key = ${companyKey} and resolved_at < now() - ${horizon(days)}::interval limit ${limit})`;
    return rows.count;
  }, size);
}

/**
 * Empties the payload (to `{}`) and the sealed SSN of a company's changes that became final (applied, refused,
 * failed) longer ago than the horizon. The row keeps its outcome, ids and refusal; it can no longer be retried
 * (push/outbox.ts retryChange). Answers how many.
 */
export async function prunePushPayloads(
  wh: Warehouse,
  companyKey: string,
  days: number,
  size = PRUNE_BATCH,
): Promise<number> {
  const t = wh.sql`${wh.sql(wh.schema)}.push_outbox`;
  return inBatches(async (limit) => {
    const rows = await wh.sql`
      update ${t} set payload = '{}'::jsonb, sealed = null where company_key = ${companyKey} and id in (
        select id from ${t}
        where company_key = ${companyKey} and status = any(${FINAL_STATES as string[]}) and updated_at < now() - ${horizon(days)}::interval
          and (payload <> '{}'::jsonb or sealed is not null)
        limit ${limit})`;
    return rows.count;
  }, size);
}

/** Deletes a company's timeline events older than the horizon (the runs' own). */
export async function pruneEvents(
  wh: Warehouse,
  companyKey: string,
  days: number,
  size = PRUNE_BATCH,
): Promise<number> {
  const t = wh.sql`${wh.sql(wh.schema)}.events`;
  return inBatches(async (limit) => {
    const rows = await wh.sql`
      delete from ${t} where company_key = ${companyKey} and id in (
        select id from ${t} where company_key = ${companyKey} and happened_at < now() - ${horizon(days)}::interval limit ${limit})`;
    return rows.count;
  }, size);
}
