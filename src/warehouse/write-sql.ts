import type { TableInfo } from './catalog.ts';

/**
 * The SQL text of a page's writes, one statement per table and shape, built once and cached: every value travels
 * as a parameter, so the text depends only on the schema, the table and where the rows come from.
 */

export const q = (name: string) => `"${name}"`;
export const qt = (schema: string, table: string) => `${q(schema)}.${q(table)}`;

const statements = new Map<string, string>();
export function cached(key: string, build: () => string): string {
  let s = statements.get(key);
  if (!s) statements.set(key, (s = build()));
  return s;
}

/**
 * One row per element of the column arrays, unnested in the select list: Postgres streams those rows, where
 * `from unnest(a, b, …)` first copies every row into a tuplestore (a fifth of an INSERT's server time). Each
 * array is a parameter of its column's type, so each value is parsed once, as what it is, rather than first as
 * text and then cast.
 */
function unnestInput(table: TableInfo): string {
  return `select ${table.columns.map((c, i) => `unnest($${i + 1}::${c.sqlType}[]) as ${q(c.name)}`).join(', ')}`;
}

const cast = (alias: string, c: { name: string; sqlType: string }) => `${alias}.${q(c.name)}::${c.sqlType}`;

/**
 * `alias`'s key is one of the keys given as arrays of the key columns' types from parameter `$first` on: one
 * index probe each, never a join the planner could turn into a scan of the company's rows while the statistics
 * of a filling table lag behind. The arrays are typed parameters, not text arrays cast in the statement: a cast
 * array is an expression, which a plan that filters rows (a generic plan made while the table was nearly empty)
 * evaluates again for every row it looks at, parsing the whole page's keys each time.
 */
export function keyProbe(table: TableInfo, alias: string, first: number): string {
  const key = table.primaryKey.slice(1).map((k) => table.byName.get(k)!);
  return key.length === 1
    ? `${alias}.${q(key[0]!.name)} = any($${first}::${key[0]!.sqlType}[])`
    : `(${key.map((c) => `${alias}.${q(c.name)}`).join(', ')}) in (select * from unnest(${key
        .map((c, i) => `$${i + first}::${c.sqlType}[]`)
        .join(', ')}))`;
}

/**
 * Locks the page's existing rows in key order and reads their stored hash and deletion state, in one statement.
 * With every writer taking row locks in one order, pages that share keys (adjacent windows share their boundary)
 * wait for each other instead of deadlocking; and what was read cannot change before the page commits.
 */
export function lockAndReadStatement(schema: string, table: TableInfo): string {
  return cached(`lock-read:${schema}.${table.name}`, () => {
    const key = table.primaryKey.slice(1);
    return `select ${key.map((k) => `t.${q(k)}::text as ${q(k)}`).join(', ')}, t."_hash", t."_deleted_at" is not null as was_deleted
from ${qt(schema, table.name)} t where t.company_key = $1 and ${keyProbe(table, 't', 2)}
order by ${key.map((k) => `t.${q(k)}`).join(', ')} for update`;
  });
}

/**
 * The upsert's conflict clause into `t`: every column but the key takes the new row's; a row deleted before keeps
 * its first deletion time.
 */
export function onConflictUpdate(table: TableInfo): string {
  const key = table.primaryKey;
  const update = table.columns
    .filter((c) => !key.includes(c.name))
    .map((c) =>
      c.name === '_deleted_at'
        ? `"_deleted_at" = case when excluded."_deleted_at" is null then null else coalesce(t."_deleted_at", excluded."_deleted_at") end`
        : `${q(c.name)} = excluded.${q(c.name)}`,
    );
  return `on conflict (${key.map(q).join(', ')}) do update set ${update.join(', ')}`;
}

/** One multi-row upsert of unnested rows. */
export function upsertStatement(schema: string, table: TableInfo): string {
  return cached(
    `upsert:${schema}.${table.name}`,
    () => `insert into ${qt(schema, table.name)} as t (${table.columns.map((c) => q(c.name)).join(', ')})
select ${table.columns.map((c) => cast('i', c)).join(', ')} from (${unnestInput(table)}) i
${onConflictUpdate(table)}`,
  );
}

/** A join condition matching a table's key columns against unnested arrays of their types starting at `$first`. */
export function keyJoin(
  _schema: string,
  table: TableInfo,
  key: readonly string[],
  first: number,
): { from: string; on: string } {
  const cols = key.map((k) => table.byName.get(k)!);
  const arrays = cols.map((c, i) => `$${first + i}::${c.sqlType}[]`).join(', ');
  return {
    from: `unnest(${arrays}) as k(${cols.map((c) => q(c.name)).join(', ')})`,
    on: cols.map((c) => `x.${q(c.name)} = k.${q(c.name)}`).join(' and '),
  };
}

export function insertStatement(schema: string, table: TableInfo): string {
  return cached(
    `insert:${schema}.${table.name}`,
    () =>
      `insert into ${qt(schema, table.name)} (${table.columns.map((c) => q(c.name)).join(', ')})
select ${table.columns.map((c) => cast('i', c)).join(', ')} from (${unnestInput(table)}) i`,
  );
}

/** A history table's columns but its span, `valid_from` and `valid_to`: what a version holds of its row. */
export const historyContent = (history: TableInfo): string[] =>
  history.columns.filter((c) => c.name !== 'valid_from' && c.name !== 'valid_to').map((c) => q(c.name));

/** A version opened again at the same instant takes the newest content and is open again. */
export const reopenOnConflict = (history: TableInfo, content: readonly string[]): string =>
  `on conflict (${history.primaryKey.map(q).join(', ')}) do update set ${content.map((c) => `${c} = excluded.${c}`).join(', ')}, valid_to = null`;

/**
 * `write` (an INSERT … SELECT) with its rows that are not deleted opening their history version in the same
 * statement: RETURNING hands the rows as written to the history insert, so the page's rows are neither sent nor
 * looked up a second time. `at` is the parameter holding the version's start.
 */
export function openingHistory(schema: string, history: TableInfo, write: string, at: string): string {
  return cached(`opening:${history.name}:${write}`, () => {
    const content = historyContent(history);
    return `with w as (${write}
returning ${content.join(', ')}, "_deleted_at" is null as wfsync_opens)
insert into ${qt(schema, history.name)} (${content.join(', ')}, valid_from, valid_to)
select ${content.join(', ')}, ${at}::timestamptz, null from w where wfsync_opens
${reopenOnConflict(history, content)}`;
  });
}
