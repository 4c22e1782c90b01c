import { instantText } from './instant-text.ts';
import { tableInfo, type Row } from './catalog.ts';
import type { MappedPage } from './page-map.ts';

/** Values as the text Postgres parses for their column's type, and array literals of them: every value travels as text. */

/** A value as the text Postgres parses for the column's type (every value travels as text). */
export function encode(value: unknown, sqlType: string): string | null {
  if (value === null || value === undefined) return null;
  if (sqlType === 'jsonb') return JSON.stringify(value);
  if (value instanceof Date) return encodedInstant(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The ISO text of an instant. Every row of a page carries the page's one `_synced_at`: the last one's text is kept. */
export function encodedInstant(d: Date): string {
  const ms = d.getTime();
  if (ms !== lastInstant.ms) lastInstant = { ms, text: Number.isNaN(ms) ? d.toISOString() : instantText(ms) };
  return lastInstant.text;
}
let lastInstant = { ms: Number.NaN, text: '' };

/**
 * `value` as one element of an array literal for a column of `sqlType`: encode, then arrayElement. Numbers,
 * booleans and instants outside jsonb never need quotes, so only text is tested for them.
 */
export function encodeElement(value: unknown, sqlType: string): string {
  if (value === null || value === undefined) return 'NULL';
  if (sqlType !== 'jsonb') {
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (value instanceof Date) return encodedInstant(value);
  }
  return arrayElement(encode(value, sqlType));
}

/**
 * What makes an element of an array literal need quotes, as Postgres's own array output decides: the literal's
 * braces, delimiter, quotes and backslashes, white space (trimmed from unquoted elements; `\s` takes in more
 * than Postgres's six characters, which only quotes more), the empty string, and the word NULL.
 */
const NEEDS_QUOTES = /[{}",\\\s]|^$|^null$/i;
const ARRAY_ESCAPED = /["\\]/;

/**
 * One element of an array literal: NULL, the value as it is, or quoted with its quotes and backslashes escaped.
 * Most values (numbers, instants, names) need no quotes, and are used as they are instead of copied.
 */
export function arrayElement(v: string | null): string {
  if (v === null) return 'NULL';
  if (!NEEDS_QUOTES.test(v)) return v;
  return ARRAY_ESCAPED.test(v) ? `"${v.replace(/["\\]/g, '\\$&')}"` : `"${v}"`;
}

/**
 * An array literal of values already encoded: Postgres parses it for a `$n::<type>[]` parameter. Built here
 * rather than by postgres.js, whose array serializer runs two regular expressions over every element.
 */
export function textArray(values: readonly (string | null)[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) parts[i] = arrayElement(values[i]!);
  return arrayLiteral(parts);
}

/**
 * `{a,b,…}` from its elements (overwrites the first and last), made by one join. Braces put around a join
 * instead make a cons string, which postgres.js flattens into a second full copy when it writes the parameter;
 * that copy lives as long as the query and survives the scavenges meanwhile.
 */
export function arrayLiteral(parts: string[]): string {
  const last = parts.length - 1;
  if (last < 0) return '{}';
  parts[0] = `{${parts[0]}`;
  parts[last] = `${parts[last]}}`;
  return parts.join(',');
}

/** The parameters of an unnest: one array literal per column, each value encoded once. */
export function columnsAsArrays(rows: readonly Row[], columns: readonly { name: string; sqlType: string }[]): string[] {
  const parts = new Array<string>(rows.length);
  return columns.map((c) => {
    for (let i = 0; i < rows.length; i++) parts[i] = encodeElement(rows[i]![c.name], c.sqlType);
    return arrayLiteral(parts);
  });
}

/** The text parameters a page's rows travel as when all of them are new (a first sync). */
export function encodePage(page: MappedPage): string[][] {
  const table = tableInfo(page.target.table);
  const out = [
    columnsAsArrays(
      page.mapped.map((m) => m.row),
      table.columns,
    ),
  ];
  for (const [i, child] of (page.target.children ?? []).entries()) {
    out.push(
      columnsAsArrays(
        page.mapped.flatMap((m) => m.children[i]!),
        tableInfo(child.table).columns,
      ),
    );
  }
  return out;
}
