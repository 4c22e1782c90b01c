import type { Warehouse } from './connection.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { appliedCount } from './migrate.ts';

/** What the timeline last said of the warehouse: its migrations and the version that ran them. */
interface Seen {
  migrations?: number;
  version?: string;
}

/**
 * At start, each company's timeline says when the warehouse gained migrations or the version changed since the
 * last start that said so. Compared with what the timeline holds, so migrations another command applied count.
 */
export async function recordStart(wh: Warehouse, companies: readonly string[], version: string): Promise<NewEvent[]> {
  const migrations = await appliedCount(wh.sql, wh.schema);
  const [last] = await wh.sql<{ detail: Seen | null }[]>`
    select detail from ${wh.sql(wh.schema)}.events where event in ('migrated', 'version_changed') order by id desc limit 1`;
  const seen = last?.detail ?? {};
  const now = { migrations, version };
  const events: NewEvent[] = [];
  for (const companyKey of companies) {
    if (seen.migrations !== migrations)
      events.push({ companyKey, event: 'migrated', detail: { ...now, before: seen.migrations ?? null } });
    if (seen.version !== undefined && seen.version !== version)
      events.push({ companyKey, event: 'version_changed', detail: { ...now, before: seen.version } });
  }
  await recordEvents(wh, events);
  return events;
}
