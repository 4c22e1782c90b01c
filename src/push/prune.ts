import type { Warehouse } from '../warehouse/connection.ts';
import { horizon, inBatches, PRUNE_BATCH } from '../warehouse/retention.ts';
import { FINAL_STATES } from './outbox.ts';

/**
 * Empties the payload (to `{}`) and the sealed SSN of a company's changes that became final (applied, refused,
 * failed) longer ago than the horizon. The row keeps its outcome, ids and refusal; it can no longer be retried
 * (outbox.ts retryChange). Answers how many.
 */
export async function prunePushPayloads(wh: Warehouse, companyKey: string, days: number, size = PRUNE_BATCH): Promise<number> {
  const t = wh.sql`${wh.sql(wh.schema)}.push_outbox`;
  return inBatches(async (limit) => {
    const rows = await wh.sql`
      update ${t} set payload = '{}'::jsonb, sealed = null where id in (
        select id from ${t}
        where company_key = ${companyKey} and status = any(${FINAL_STATES as string[]}) and updated_at < now() - ${horizon(days)}::interval
          and (payload <> '{}'::jsonb or sealed is not null)
        limit ${limit})`;
    return rows.count;
  }, size);
}
