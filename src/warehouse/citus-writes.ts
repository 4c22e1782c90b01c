import type { Row, TableInfo } from './catalog.ts';
import { encode } from './encoding.ts';
import { cached, historyContent, keyProbe, onConflictUpdate, q, qt, reopenOnConflict } from './write-sql.ts';

/**
 * A page's rows written on Citus. Citus plans an INSERT … SELECT of unnested arrays by pulling the rows to the
 * coordinator and copying them into the shard over connections of their own, which makes every page's
 * transaction two-phase. A multi-row VALUES insert whose rows all carry one company key is a router query: the
 * coordinator sends it to the one shard, on the connection the page's other statements use. A row opens its
 * history version from the table it was written to (an INSERT … SELECT between co-located shards, also one
 * shard), as a CTE over the write's RETURNING would again go through the coordinator.
 */

/** Postgres's limit on the parameters of one statement. */
const MAX_PARAMETERS = 65535;

/**
 * A multi-row VALUES insert of `rows` rows, each value a text parameter cast to its column's type. A parameter
 * of the column's own type would have postgres.js serialize the text by that type (a boolean's `true` as `f`).
 */
function valuesInsert(schema: string, table: TableInfo, rows: number): string {
  const width = table.columns.length;
  const cast = (c: { sqlType: string }) => (c.sqlType === 'text' ? '::text' : `::text::${c.sqlType}`);
  const tuple = (r: number) => `(${table.columns.map((c, i) => `$${r * width + i + 1}${cast(c)}`).join(', ')})`;
  return `insert into ${qt(schema, table.name)} as t (${table.columns.map((c) => q(c.name)).join(', ')})
values ${Array.from({ length: rows }, (_, r) => tuple(r)).join(',\n')}`;
}

/** Rows of `table` per statement: as many as Postgres's parameter limit lets through. */
export const rowsPerStatement = (table: TableInfo) => Math.floor(MAX_PARAMETERS / table.columns.length);

export function valuesStatement(schema: string, table: TableInfo, rows: number, upsert: boolean): string {
  return cached(`values:${upsert}:${schema}.${table.name}:${rows}`, () =>
    upsert ? `${valuesInsert(schema, table, rows)}\n${onConflictUpdate(table)}` : valuesInsert(schema, table, rows),
  );
}

/**
 * The rows of `table` at the given keys that are not deleted open their history version from `$2` on: company
 * key `$1`, the keys after it as arrays of their types from `$3`.
 */
export function openingHistoryFrom(schema: string, table: TableInfo, history: TableInfo): string {
  return cached(`opening-from:${schema}.${table.name}`, () => {
    const content = historyContent(history);
    return `insert into ${qt(schema, history.name)} (${content.join(', ')}, valid_from, valid_to)
select ${content.map((c) => `x.${c}`).join(', ')}, $2::timestamptz, null from ${qt(schema, table.name)} x
where x.company_key = $1::text and ${keyProbe(table, 'x', 3)} and x."_deleted_at" is null
${reopenOnConflict(history, content)}`;
  });
}

/** One VALUES parameter per cell of `rows`, row by row. */
export function cells(rows: readonly Row[], table: TableInfo): (string | null)[] {
  const out: (string | null)[] = [];
  for (const row of rows) for (const c of table.columns) out.push(encode(row[c.name], c.sqlType));
  return out;
}
