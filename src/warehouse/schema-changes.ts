import type { Warehouse } from './connection.ts';
import type { WarehouseTables } from './schema.ts';

/**
 * The `schema_changes` table: fields the service sends that no column maps (they land in `_extra`), one row per
 * company, stream and JSON path. Each statement here runs only when a read meets something new, or once at the
 * end of a read that met such fields; the row path itself never touches the table.
 */

export type SchemaChangeRow = WarehouseTables['schemaChanges']['$inferSelect'];

export interface NewField {
  path: string;
  jsonType: string;
  example: unknown;
}

/** A field a read reports on at its end: the records that carried it. */
export interface FieldCount {
  path: string;
  records: number;
}

/** How many complete reads in a row without a field make it gone. */
export const GONE_AFTER_READS = 3;

const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.schema_changes`;

/** The stream's recorded fields, each with whether it is gone. */
export async function recordedFields(wh: Warehouse, companyKey: string, stream: string): Promise<Map<string, boolean>> {
  const rows = await wh.sql<{ path: string; gone: boolean }[]>`
    select field_path as path, gone_at is not null as gone from ${t(wh)} where company_key = ${companyKey} and stream = ${stream}`;
  return new Map(rows.map((r) => [r.path, r.gone]));
}

/**
 * Records fields first seen (or seen again after they were gone), in one statement. Returns the paths this call
 * recorded: another process that met the same field at the same time records it once between them.
 */
export async function recordAppeared(
  wh: Warehouse,
  companyKey: string,
  stream: string,
  fields: readonly NewField[],
): Promise<string[]> {
  if (fields.length === 0) return [];
  const rows = await wh.sql<{ path: string }[]>`
    insert into ${t(wh)} as c (company_key, stream, field_path, json_type, example)
    select ${companyKey}, ${stream}, f.path, f.type, f.example
    from unnest(${fields.map((f) => f.path)}::text[], ${fields.map((f) => f.jsonType)}::text[],
                ${fields.map((f) => JSON.stringify(f.example ?? null))}::text[]::jsonb[]) f(path, type, example)
    on conflict (company_key, stream, field_path) do update
      set gone_at = null, reads_without = 0, field_last_seen_at = excluded.field_last_seen_at
      where c.gone_at is not null
    returning c.field_path as path`;
  return rows.map((r) => r.path);
}

/**
 * At the end of a read: the fields it saw get their count and last-seen time; when the read was complete, each
 * field still coming that it did not see counts one more read without, and is gone at GONE_AFTER_READS. One
 * statement; returns the paths found gone by it.
 */
export async function recordRead(
  wh: Warehouse,
  companyKey: string,
  stream: string,
  seen: readonly FieldCount[],
  complete: boolean,
): Promise<string[]> {
  const rows = await wh.sql<{ path: string; gone: boolean }[]>`
    with seen as (select * from unnest(${seen.map((s) => s.path)}::text[], ${seen.map((s) => s.records)}::bigint[]) s(field_path, records)),
      -- Citus takes no function short of immutable inside a CASE of an UPDATE: the time comes as a column.
      clock as (select now() as at)
    update ${t(wh)} c set
      records_seen = c.records_seen + coalesce(s.records, 0),
      field_last_seen_at = case when s.records is null then c.field_last_seen_at else k.at end,
      reads_without = case when s.records is null then c.reads_without + 1 else 0 end,
      gone_at = case when s.records is null and c.reads_without + 1 >= ${GONE_AFTER_READS} then k.at end
    from ${t(wh)} c0 cross join clock k left join seen s on s.field_path = c0.field_path
    where c0.company_key = ${companyKey} and c0.stream = ${stream} and c0.gone_at is null
      and c.company_key = c0.company_key and c.stream = c0.stream and c.field_path = c0.field_path
      and (s.records is not null or ${complete})
    returning c.field_path as path, c.gone_at is not null as gone`;
  return rows.filter((r) => r.gone).map((r) => r.path);
}

/** Every recorded field, of one company or all, the latest first. */
export async function listSchemaChanges(
  wh: Warehouse,
  o: { companyKey?: string; limit?: number } = {},
): Promise<SchemaChangeRow[]> {
  const { companyKey, limit } = o;
  return wh.sql<SchemaChangeRow[]>`
    select company_key, stream, field_path, json_type, example, field_first_seen_at, field_last_seen_at,
           records_seen::float8 as records_seen, reads_without, gone_at
    from ${t(wh)}
    ${companyKey ? wh.sql`where company_key = ${companyKey}` : wh.sql``}
    order by greatest(field_first_seen_at, coalesce(gone_at, field_first_seen_at)) desc, company_key, stream, field_path
    ${limit ? wh.sql`limit ${limit}` : wh.sql``}`;
}
