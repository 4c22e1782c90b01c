import type { Warehouse } from './connection.ts';
import { columnOf, tableInfo, type TableInfo } from './catalog.ts';

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

/** What a stream's records repeat of their individual, and what else of the individual shapes them. */
export interface HolderCopies {
  /** The records' table and its column naming the individual's ServiceId. */
  table: string;
  column: string;
  /** Record column → the individual's column it repeats. */
  copies: Readonly<Record<string, string>>;
  /** Record column (jsonb array of { JobTitleId }) repeating the individual's additional job titles. */
  jobTitles?: string;
  /** Individual columns the records do not repeat but derive values from (a locale gives a business unit). */
  derivedFrom: readonly string[];
  /** The statuses whose individuals' records are listed. */
  statuses: readonly string[];
}

/**
 * Listed individuals with a new version at or after `after` whose records may no longer show them: a record's
 * copy of a field differs from the individual's, or a field the records derive from was different at `after` or
 * at any version since, or the individual was unlisted or gone at `after` or at any point since (its records may
 * have been marked gone meanwhile). A change to nothing the records show (a supervisor's name, a phone, a move
 * between listed statuses) is left out.
 */
export async function holdersOutOfStep(
  wh: Warehouse,
  companyKey: string,
  after: Date,
  h: HolderCopies,
): Promise<number[]> {
  const records = tableInfo(h.table);
  const people = tableInfo('individuals');
  const check = (t: TableInfo, name: string) => `"${columnOf(t, name)}"`;
  const copied = Object.entries(h.copies);
  const mine = copied.map(([r]) => `r.${check(records, r)}`).join(', ');
  const theirs = copied.map(([, i]) => `i.${check(people, i)}`).join(', ');
  const derived = h.derivedFrom.map((c) => `v.${check(people, c)} is distinct from i.${check(people, c)}`);
  const titleIds = (
    expr: string,
  ) => `coalesce((select array_agg((e->>'JobTitleId')::int order by (e->>'JobTitleId')::int)
      from jsonb_array_elements(case when jsonb_typeof(${expr}) = 'array' then ${expr} else '[]'::jsonb end) e), '{}')`;
  const titles = h.jobTitles
    ? `or ${titleIds(`r.${check(records, h.jobTitles)}`)} is distinct from coalesce((select array_agg(t.job_title_id order by t.job_title_id)
        from "${wh.schema}".individual_job_titles t where t.company_key = $1 and t.service_id = i.service_id), '{}')`
    : '';
  const rows = await wh.sql.unsafe<{ service_id: number }[]>(
    `with changed as (
       select distinct service_id from "${wh.schema}".individuals_history where company_key = $1 and valid_from >= $2
     )
     select i.service_id from changed c
     join "${wh.schema}".individuals i on i.company_key = $1 and i.service_id = c.service_id
     where i._deleted_at is null and i.status = any($3::text[]) and (
       -- at "after" the individual was unknown, gone or between versions
       not exists (select 1 from "${wh.schema}".individuals_history v
                   where v.company_key = $1 and v.service_id = i.service_id and v.valid_from < $2 and (v.valid_to is null or v.valid_to >= $2))
       -- a version in force at or since "after" was unlisted, or differs in what the records derive from
       or exists (select 1 from "${wh.schema}".individuals_history v
                  where v.company_key = $1 and v.service_id = i.service_id and (v.valid_to is null or v.valid_to >= $2)
                    and (v.status <> all($3::text[])${derived.map((d) => ` or ${d}`).join('')}))
       -- a version ended since "after" without a successor: the individual was gone for a while
       or exists (select 1 from "${wh.schema}".individuals_history v
                  where v.company_key = $1 and v.service_id = i.service_id and v.valid_to >= $2
                    and not exists (select 1 from "${wh.schema}".individuals_history n
                                    where n.company_key = $1 and n.service_id = v.service_id and n.valid_from = v.valid_to))
       -- a live record's copy of the individual differs from the individual
       or exists (select 1 from "${wh.schema}"."${records.name}" r
                  where r.company_key = $1 and r.${check(records, h.column)} = i.service_id and r._deleted_at is null
                    and ((${mine}) is distinct from (${theirs}) ${titles}))
     )`,
    [companyKey, after, [...h.statuses]],
  );
  return rows.map((r) => Number(r.service_id));
}

/** Live individuals in none of `statuses`. */
export async function individualsOutside(
  wh: Warehouse,
  companyKey: string,
  statuses: readonly string[],
): Promise<number[]> {
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
  const col = (name: string) => sql(columnOf(t, name));
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
  const col = (name: string) => sql(columnOf(t, name));
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
export async function credentialHoldersExpiring(
  wh: Warehouse,
  companyKey: string,
  fromDay: string,
  toDay: string,
): Promise<number[]> {
  const rows = await wh.sql<{ service_id: number }[]>`
    select distinct service_id from ${wh.sql(wh.schema)}.individual_certifications
    where company_key = ${companyKey} and service_id is not null and _deleted_at is null
      and expiration_date between ${fromDay}::date and ${toDay}::date`;
  return rows.map((r) => Number(r.service_id));
}
