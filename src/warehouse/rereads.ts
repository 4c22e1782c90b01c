import type { Warehouse } from './connection.ts';
import { tableInfo } from './rows.ts';

/**
 * What the warehouse knows that tells a sync what to read again: rows that changed since an instant, change
 * records that arrived since, and where another stream's writes are settled.
 */

/**
 * The instant before which every run of `stream` that wrote rows has committed: now, or the start of the
 * earliest run still going (runs left unfinished by a crash stop counting after a day).
 */
export async function settledBefore(wh: Warehouse, companyKey: string, stream: string): Promise<Date> {
  const [row] = await wh.sql<{ at: Date | null }[]>`
    select min(started_at) as at from ${wh.sql(wh.schema)}.sync_runs
    where company_key = ${companyKey} and stream = ${stream} and finished_at is null and started_at > now() - interval '1 day'`;
  const now = new Date();
  return row?.at && row.at < now ? row.at : now;
}

/** Individuals whose row got a new version (changed, hired, back from gone) at or after `after`. */
export async function individualsChangedSince(wh: Warehouse, companyKey: string, after: Date): Promise<number[]> {
  const rows = await wh.sql<{ service_id: number }[]>`
    select distinct service_id from ${wh.sql(wh.schema)}.individuals_history
    where company_key = ${companyKey} and valid_from >= ${after}`;
  return rows.map((r) => Number(r.service_id));
}

/** Live individuals in none of `statuses`. */
export async function individualsOutside(wh: Warehouse, companyKey: string, statuses: readonly string[]): Promise<number[]> {
  const rows = await wh.sql<{ service_id: number }[]>`
    select service_id from ${wh.sql(wh.schema)}.individuals
    where company_key = ${companyKey} and _deleted_at is null and status <> all(${[...statuses]})`;
  return rows.map((r) => Number(r.service_id));
}

export interface ChangeColumns {
  table: string;
  /** The start of the record that changed. */
  dayColumn: string;
  keyColumn: string;
  deleted: { column: string; value: string };
  /** When the change happened, by the service's stamp. */
  eventColumn: string;
}

/**
 * Change records written to the warehouse at or after `after` (an append table's rows are written once, so
 * `_synced_at` is when each arrived): the starts of the records they name and the keys of those they delete.
 */
export async function changesArrivedSince(
  wh: Warehouse,
  c: ChangeColumns,
  companyKey: string,
  after: Date,
  /** Changes stamped before this instant are left out: a complete read made after them holds what they changed. */
  eventsFrom?: Date,
): Promise<{ starts: Date[]; deletedKeys: string[] }> {
  const { sql, schema } = wh;
  const t = tableInfo(c.table);
  const col = (name: string) => {
    if (!t.byName.has(name)) throw new Error(`table ${t.name} has no column "${name}"`);
    return sql(name);
  };
  const rows = await sql<{ start: Date | null; deleted: boolean; key: string }[]>`
    select ${col(c.dayColumn)} as start, ${col(c.deleted.column)} = ${c.deleted.value} as deleted, ${col(c.keyColumn)}::text as key
    from ${sql(schema)}.${sql(t.name)}
    where company_key = ${companyKey} and _synced_at >= ${after}
      ${eventsFrom ? sql`and ${col(c.eventColumn)} >= ${eventsFrom}` : sql``}`;
  return {
    starts: rows.flatMap((r) => (r.start ? [new Date(r.start)] : [])),
    deletedKeys: rows.filter((r) => r.deleted).map((r) => r.key),
  };
}

export interface StartsOptions {
  table: string;
  column: string;
  companyKey: string;
  from: Date;
  to: Date;
  /** Only rows whose `column` holds one of the values. */
  whereIn?: { column: string; values: readonly string[] };
}

/**
 * The instants (epoch ms, ascending) in `column` of the live rows between `from` and `to`, both included: how
 * many records a read of a span returns, to plan the fewest requests that cover what must be read again.
 */
export async function startsBetween(wh: Warehouse, o: StartsOptions): Promise<number[]> {
  const { sql, schema } = wh;
  const t = tableInfo(o.table);
  const col = (name: string) => {
    if (!t.byName.has(name)) throw new Error(`table ${t.name} has no column "${name}"`);
    return sql(name);
  };
  const filter = o.whereIn ? sql`and ${col(o.whereIn.column)}::text = any(${[...o.whereIn.values]})` : sql``;
  const rows = await sql<{ ms: string }[]>`
    select (extract(epoch from ${col(o.column)}) * 1000)::bigint::text as ms from ${sql(schema)}.${sql(t.name)}
    where company_key = ${o.companyKey} and _deleted_at is null and ${col(o.column)} between ${o.from} and ${o.to} ${filter}`;
  return rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
}

/** Holders of credentials written (changed, added) or marked deleted at or after `after`. */
export async function credentialHoldersChangedSince(wh: Warehouse, companyKey: string, after: Date): Promise<number[]> {
  const rows = await wh.sql<{ service_id: number }[]>`
    select distinct service_id from ${wh.sql(wh.schema)}.individual_certifications
    where company_key = ${companyKey} and service_id is not null and (_synced_at >= ${after} or _deleted_at >= ${after})`;
  return rows.map((r) => Number(r.service_id));
}

/** Holders of live credentials whose expiration day lies in [fromDay, toDay] (yyyy-MM-dd): their status turns Expired. */
export async function credentialHoldersExpiring(wh: Warehouse, companyKey: string, fromDay: string, toDay: string): Promise<number[]> {
  const rows = await wh.sql<{ service_id: number }[]>`
    select distinct service_id from ${wh.sql(wh.schema)}.individual_certifications
    where company_key = ${companyKey} and service_id is not null and _deleted_at is null
      and expiration_date between ${fromDay}::date and ${toDay}::date`;
  return rows.map((r) => Number(r.service_id));
}
