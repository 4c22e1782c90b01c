import type { Warehouse } from '../../src/warehouse/connection.ts';

/**
 * Every row of every table of the warehouse as text, as a dump would hold it; with `company`, only that company's
 * rows (the sandboxes of two companies share employee numbers).
 */
export async function dump(wh: Warehouse, company?: string): Promise<string> {
  const tables = await wh.sql<{ name: string; keyed: boolean }[]>`
    select t.table_name as name, exists (select 1 from information_schema.columns c
      where c.table_schema = t.table_schema and c.table_name = t.table_name and c.column_name = 'company_key') as keyed
    from information_schema.tables t where t.table_schema = ${wh.schema} and t.table_type = 'BASE TABLE' order by 1`;
  const parts: string[] = [];
  for (const { name, keyed } of tables) {
    const only = company && keyed ? ` where company_key = '${company}'` : '';
    const rows = await wh.sql.unsafe(`select x::text as t from "${wh.schema}"."${name}" x${only}`);
    for (const r of rows) parts.push(r.t as string);
  }
  return parts.join('\n');
}

/** The values of `values` found in the dump as whole values (not inside a longer one). */
export function found(text: string, values: Iterable<string>): string[] {
  const escaped = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...new Set(values)].filter((v) => new RegExp(`(^|[^A-Za-z0-9@.])${escaped(v)}($|[^A-Za-z0-9@.])`).test(text));
}
