import type { Warehouse } from '../../src/warehouse/connection.ts';

/** A refused record as a sync run stores it, for pages and tests that show rejects. */
export async function insertReject(
  wh: Warehouse,
  r: { company: string; stream: string; raw: Record<string, unknown>; reason: string; secondsAgo?: number },
): Promise<void> {
  const s = wh.sql(wh.schema);
  const seenAt = new Date(Date.now() - (r.secondsAgo ?? 0) * 1000);
  const [keyed] = await wh.sql`
    select 1 from information_schema.columns where table_schema = ${wh.schema} and table_name = 'sync_rejects' and column_name = 'record_key'`;
  const row: Record<string, unknown> = {
    company_key: r.company,
    stream: r.stream,
    raw: wh.sql.json(r.raw as never),
    reason: r.reason,
    seen_at: seenAt,
  };
  // One row per record and reason where the warehouse keeps rejects once each.
  if (keyed) row.record_key = `ServiceId:${String(r.raw.ServiceId ?? JSON.stringify(r.raw))}`;
  await wh.sql`insert into ${s}.sync_rejects ${wh.sql(row)}`;
}
