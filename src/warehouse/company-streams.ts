import type { Warehouse } from './connection.ts';
import { CompanyError, findCompany, type CompanyRecord, type Purged } from './company-records.ts';
import { recordEvents, type NewEvent } from './events.ts';
import { inBatches, PRUNE_BATCH } from './retention.ts';

/**
 * The streams a company has turned off (`companies.streams_off`): stored here, read by running processes at their
 * next refresh of the table. Which change is allowed (a stream others read) is the catalog's to say: the caller
 * passes the rule in.
 */

const table = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.companies`;

/** Attempts at a change that another change raced: each reads the streams off again and applies the rule again. */
const ATTEMPTS = 5;

/**
 * Sets the company's streams off to what `next` makes of the current ones (it throws to refuse), and puts each
 * stream turned off or on on the company's timeline. A change made meanwhile by someone else is not overwritten:
 * the rule runs again on it.
 */
export async function changeStreamsOff(
  wh: Warehouse,
  key: string,
  next: (current: readonly string[]) => string[],
): Promise<{ before: CompanyRecord; after: CompanyRecord }> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const before = await findCompany(wh, key);
    if (!before) throw new CompanyError('unknown_company', `company ${key} is not added (wfsync companies list)`);
    const wanted = next(before.streamsOff);
    const [row] = await wh.sql<{ company_key: string }[]>`
      update ${table(wh)} set streams_off = ${wanted}, updated_at = now()
      where company_key = ${key} and streams_off = ${before.streamsOff}::text[] returning company_key`;
    if (!row) continue;
    await recordEvents(wh, switchEvents(key, before.streamsOff, wanted));
    return { before, after: (await findCompany(wh, key))! };
  }
  throw new CompanyError('invalid', `company ${key}: its streams kept changing meanwhile; try again`);
}

function switchEvents(key: string, before: readonly string[], after: readonly string[]): NewEvent[] {
  const off = after.filter((s) => !before.includes(s));
  const on = before.filter((s) => !after.includes(s));
  return [
    ...off.map((stream): NewEvent => ({ companyKey: key, stream, event: 'stream_turned_off' })),
    ...on.map((stream): NewEvent => ({ companyKey: key, stream, event: 'stream_turned_on' })),
  ];
}

/** The streams each company has turned off (a company with none is absent). */
export async function streamsOffOf(wh: Warehouse, keys?: readonly string[]): Promise<Map<string, string[]>> {
  const rows = await wh.sql<{ key: string; off: string[] }[]>`
    select company_key as key, streams_off as off from ${table(wh)}
    where cardinality(streams_off) > 0 ${keys ? wh.sql`and company_key = any(${keys as string[]})` : wh.sql``}`;
  return new Map(rows.map((r) => [r.key, r.off]));
}

/** Refuses a stream the company has turned off: a re-sync of it would read what the company does not want. */
export async function refuseIfOff(wh: Warehouse, key: string, stream: string): Promise<void> {
  if ((await streamsOffOf(wh, [key])).get(key)?.includes(stream))
    throw new CompanyError(
      'stream_off',
      `company ${key}: stream ${stream} is off; turn it on first (wfsync companies streams ${key} --on ${stream})`,
    );
}

/** A stream and the tables its rows land in (its target, child tables and history). */
export interface StreamRows {
  stream: string;
  tables: readonly string[];
}

/**
 * Deletes the company's rows of the streams: their tables, their refused records and their checkpoints (so a
 * stream turned on again starts with a first sync). In batches, each its own transaction, as a company's purge;
 * the timeline gets one `stream_purged` per stream.
 */
export async function purgeStreamRows(
  wh: Warehouse,
  key: string,
  streams: readonly StreamRows[],
  size = PRUNE_BATCH,
): Promise<Purged> {
  const purged: Purged = {};
  const s = wh.sql(wh.schema);
  const names = streams.map((x) => x.stream);
  for (const name of [...new Set(streams.flatMap((x) => x.tables))]) {
    const t = wh.sql`${s}.${wh.sql(name)}`;
    purged[name] = await inBatches(async (limit) => {
      const done =
        await wh.sql`delete from ${t} where ctid in (select ctid from ${t} where company_key = ${key} limit ${limit})`;
      return done.count;
    }, size);
  }
  for (const name of ['sync_rejects', 'sync_state']) {
    const t = wh.sql`${s}.${wh.sql(name)}`;
    purged[name] = await inBatches(async (limit) => {
      const done = await wh.sql`delete from ${t} where ctid in (
        select ctid from ${t} where company_key = ${key} and stream = any(${names}) limit ${limit})`;
      return done.count;
    }, size);
  }
  await recordEvents(
    wh,
    streams.map((x) => ({
      companyKey: key,
      stream: x.stream,
      event: 'stream_purged',
      detail: { rows: x.tables.reduce((n, t) => n + (purged[t] ?? 0), 0) },
    })),
  );
  return purged;
}
