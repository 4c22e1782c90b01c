import { createHash, hash } from 'node:crypto';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { DEFAULT_SCHEMA, warehouseTables } from './schema.ts';
import { instantText } from './instant-text.ts';
import type { ChildTarget, KeyField, Target } from './targets.ts';

/**
 * The generic mapper: an item of any resource → one row of its table plus rows of its child tables.
 * Nested single objects flatten into prefixed snake_case columns, nested lists named by the target go to
 * child tables, and whatever has no column is kept in `_extra` with its original nesting.
 */

export interface ColumnInfo {
  readonly name: string;
  readonly sqlType: string;
}

export interface TableInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  readonly byName: ReadonlyMap<string, ColumnInfo>;
  readonly primaryKey: readonly string[];
  /** Columns the content hash covers: all but _synced_at, _deleted_at and _hash. */
  readonly hashed: readonly string[];
  /** Date and date-time columns with companions the mapper fills from the text the service sent. */
  readonly localTimes: readonly LocalTimeColumns[];
  /** The companion columns: filled by the mapper, never from an item's field. */
  readonly derived: ReadonlySet<string>;
  /** A new row of this table: every column present, undefined until set (see blankRow). */
  readonly blank: () => Row;
}

/** `x` and what the mapper derives from its text: `x_local_date` or `x_instant`, and `x_utc_offset`. */
export interface LocalTimeColumns {
  readonly column: string;
  readonly utcOffset: string;
  /** Set for a date-time column (timestamptz `x`). */
  readonly localDate?: string;
  /** Set for a date column (`x` is the day written; this is the full value when one was sent). */
  readonly instant?: string;
}

export type Row = Record<string, unknown>;

export interface MappedItem {
  readonly row: Row;
  /** Child elements that cannot be rows (a key column null): kept for sync_rejects, the item goes on. */
  readonly rejects: readonly { raw: unknown; reason: string }[];
  /** Child rows by child table, in the order of `target.children`. */
  readonly children: readonly Row[][];
  /** Key values after company_key, as text, joined: identifies the row within the page. */
  readonly keyText: string;
  readonly deleted: boolean;
}

/** Never stored anywhere in the warehouse, at any depth (the spec's SSN; the earlier shape's Password). */
const NEVER_STORED = /^(ssn|password)$/i;

/** Columns the mapper fills itself, never from an item's field. */
export const BOOKKEEPING = new Set(['company_key', '_synced_at', '_deleted_at', '_extra', '_hash', '_key', '_ord']);

const tableInfos: ReadonlyMap<string, TableInfo> = new Map(
  Object.values(warehouseTables(DEFAULT_SCHEMA)).map((t) => {
    const info = describeTable(t);
    return [info.name, info];
  }),
);

function describeTable(table: PgTable): TableInfo {
  const cfg = getTableConfig(table);
  const columns = cfg.columns.map((c) => ({ name: c.name, sqlType: c.getSQLType() }));
  const primaryKey = cfg.primaryKeys[0]?.columns.map((c) => c.name) ?? cfg.columns.filter((c) => c.primary).map((c) => c.name);
  const hashed = columns.map((c) => c.name).filter((n) => n !== '_synced_at' && n !== '_deleted_at' && n !== '_hash');
  const byName = new Map(columns.map((c) => [c.name, c]));
  const localTimes = columns.flatMap((c): LocalTimeColumns[] => {
    const utcOffset = `${c.name}_utc_offset`;
    if (!byName.has(utcOffset)) return [];
    const localDate = byName.has(`${c.name}_local_date`) ? `${c.name}_local_date` : undefined;
    const instant = byName.has(`${c.name}_instant`) ? `${c.name}_instant` : undefined;
    return [{ column: c.name, utcOffset, localDate, instant }];
  });
  const derived = new Set(localTimes.flatMap((l) => [l.utcOffset, l.localDate ?? l.instant!]));
  return { name: cfg.name, columns, byName, primaryKey, hashed, localTimes, derived, blank: blankRow(columns) };
}

/**
 * Makes rows that hold every column of a table from the start, so that all rows of the table share one shape.
 * A row grown one computed column at a time leaves V8's fast properties after a dozen columns and becomes a hash
 * table: several times the memory, which a page's rows then carry through every collection while they live.
 */
function blankRow(columns: readonly ColumnInfo[]): () => Row {
  const literal = columns.map((c) => `${JSON.stringify(c.name)}: undefined`).join(', ');
  return new Function(`return { ${literal} };`) as () => Row;
}

/** A date or date-time as the service writes it: `yyyy-MM-dd`, then optionally a time, then optionally an offset. */
const WRITTEN_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * The offset of a written time (one WRITTEN_TIME matches) as `+HH:MM` / `-HH:MM` (`Z` is `+00:00`); undefined
 * when it carries none. Read by position rather than by a match's groups: this runs for every date column of
 * every row, and a match allocates an array and a string per group.
 */
function writtenOffset(text: string): string | undefined {
  if (text.length <= 10) return undefined;
  if (text.endsWith('Z')) return '+00:00';
  // Past the date, a sign can only begin the offset.
  const sign = Math.max(text.lastIndexOf('+'), text.lastIndexOf('-'));
  if (sign <= 10) return undefined;
  return text.length - sign === 5 ? `${text.slice(sign, sign + 3)}:${text.slice(sign + 3)}` : text.slice(sign);
}

/**
 * Fills the companions of the table's date and date-time columns from the text the service sent: the local
 * day and offset beside an instant, and the full value beside a date column (which keeps the day written).
 */
function fillLocalTimes(table: TableInfo, row: Row): void {
  for (const l of table.localTimes) {
    const v = row[l.column];
    if (typeof v !== 'string' || !WRITTEN_TIME.test(v)) continue;
    const utcOffset = writtenOffset(v);
    const localDate = v.slice(0, 10);
    row[l.utcOffset] = utcOffset ?? null;
    if (l.localDate) row[l.localDate] = localDate;
    if (l.instant) {
      row[l.instant] = utcOffset ? v : null;
      row[l.column] = localDate;
    }
  }
}

export function tableInfo(name: string): TableInfo {
  const info = tableInfos.get(name);
  if (!info) throw new Error(`no warehouse table named "${name}"`);
  return info;
}

/** `name`, once `table` is known to have that column: names given in stream definitions fail loudly when wrong. */
export function columnOf(table: TableInfo, name: string): string {
  if (!table.byName.has(name)) throw new Error(`table ${table.name} has no column "${name}"`);
  return name;
}

export function allTableInfos(): readonly TableInfo[] {
  return [...tableInfos.values()];
}

/** `ServiceId` → `service_id`, `DestinationGPSLocation` → `destination_gps_location`, `Shift Name` → `shift_name`. */
export function snake(name: string): string {
  let s = snakeCache.get(name);
  if (s === undefined) snakeCache.set(name, (s = toSnake(name)));
  return s;
}

// Field names repeat on every item of a page: convert each once.
const snakeCache = new Map<string, string>();

function toSnake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .toLowerCase();
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

/** `value` without the never-stored fields: a deep copy where it holds one, else `value` itself (rows only read it). */
export function scrub(value: unknown): unknown {
  return holdsNeverStored(value) ? scrubbed(value) : value;
}

function holdsNeverStored(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(holdsNeverStored);
  if (!isPlainObject(value)) return false;
  for (const k in value) if (NEVER_STORED.test(k) || holdsNeverStored(value[k])) return true;
  return false;
}

function scrubbed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrubbed);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!NEVER_STORED.test(k)) out[k] = scrubbed(v);
  return out;
}

export function getPath(item: unknown, path: string): unknown {
  return atPath(item, splitPath(path));
}

function atPath(item: unknown, parts: readonly string[]): unknown {
  let v: unknown = item;
  for (let i = 0; i < parts.length; i++) v = isPlainObject(v) ? v[parts[i]!] : undefined;
  return v;
}

// Key field paths repeat on every item: split each once.
const pathParts = new Map<string, readonly string[]>();
function splitPath(path: string): readonly string[] {
  let parts = pathParts.get(path);
  if (!parts) pathParts.set(path, (parts = path.split('.')));
  return parts;
}

const OFFSET_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** The shortest text OFFSET_DATETIME matches: `yyyy-MM-ddTHH:mmZ`. */
const OFFSET_DATETIME_MIN_LENGTH = 17;
const HYPHEN = 45;

/** Key parts compare by meaning: one instant written with two offsets is one key. */
function keyPart(v: unknown): unknown {
  // Most key parts are ids and words: the length and the date's first hyphen rule them out before the match.
  if (typeof v === 'string' && v.length >= OFFSET_DATETIME_MIN_LENGTH && v.charCodeAt(4) === HYPHEN && OFFSET_DATETIME.test(v)) {
    const ms = Date.parse(v);
    if (!Number.isNaN(ms)) return instantText(ms);
  }
  return v ?? null;
}

/** Each identifying field as the split paths of its alternatives (a plain field is one): split once per list of fields. */
const keyPathsOf = new WeakMap<readonly KeyField[], readonly (readonly string[])[][]>();

function keyPaths(fields: readonly KeyField[]): readonly (readonly string[])[][] {
  let paths = keyPathsOf.get(fields);
  if (!paths) keyPathsOf.set(fields, (paths = fields.map((f) => (typeof f === 'string' ? [f] : f).map(splitPath))));
  return paths;
}

/** The first of the alternatives that is not null or undefined. */
function firstPresent(item: unknown, alternatives: readonly (readonly string[])[]): unknown {
  for (let i = 0; i < alternatives.length; i++) {
    const v = atPath(item, alternatives[i]!);
    if (v != null) return v;
  }
  return undefined;
}

/** sha-256 hex (first 32) of the identifying fields of a record that has no id. */
export function hashKey(item: unknown, fields: readonly KeyField[]): string {
  const paths = keyPaths(fields);
  const parts = new Array<unknown>(paths.length);
  for (let i = 0; i < paths.length; i++) parts[i] = keyPart(firstPresent(item, paths[i]!));
  return sha256Hex32(JSON.stringify(parts));
}

/** First 32 hex digits of sha-256: one-shot `crypto.hash` where Node has it (20.12+), else createHash. */
const sha256Hex32: (text: string) => string =
  typeof hash === 'function' ? (text) => hash('sha256', text, 'hex').slice(0, 32) : (text) => createHash('sha256').update(text).digest('hex').slice(0, 32);

/**
 * Where one field name of an object at one place of an item goes: decided once per (table, path, name) and
 * reused for every item of every page, instead of snake-casing and looking up columns item by item.
 */
interface Field {
  /** Never stored, or a child list mapped elsewhere. */
  readonly drop: boolean;
  readonly name: string;
  readonly col: ColumnInfo | undefined;
  readonly jsonb: boolean;
  readonly path: string;
  /** Where the fields of a nested object under this name go (made when first met). */
  nested: Scope | undefined;
}

/** The fields of objects at one path of an item, flattened into one table under one column prefix. */
interface Scope {
  readonly table: TableInfo;
  readonly prefix: string;
  readonly path: string;
  readonly skip: ReadonlySet<string>;
  readonly fields: Map<string, Field>;
}

/** Bounds the field cache of a scope whose objects are keyed by data rather than by a schema. */
const MAX_CACHED_FIELDS = 1024;

function scope(table: TableInfo, skip: ReadonlySet<string>, prefix = '', path = ''): Scope {
  return { table, prefix, path, skip, fields: new Map() };
}

function field(s: Scope, k: string): Field {
  let f = s.fields.get(k);
  if (f) return f;
  const path = s.path ? `${s.path}.${k}` : k;
  const name = s.prefix + snake(k);
  const col = BOOKKEEPING.has(name) || s.table.derived.has(name) ? undefined : s.table.byName.get(name);
  f = { drop: NEVER_STORED.test(k) || s.skip.has(path), name, col, jsonb: col?.sqlType === 'jsonb', path, nested: undefined };
  if (s.fields.size < MAX_CACHED_FIELDS) s.fields.set(k, f);
  return f;
}

/** Flattens `value` into the table's columns; returns what no column took (or undefined). */
function flatten(value: Record<string, unknown>, s: Scope, row: Row): Record<string, unknown> | undefined {
  let extra: Record<string, unknown> | undefined;
  // for-in rather than Object.keys: TurboFan reads `value[k]` by the enum cache's field index, not a keyed lookup.
  for (const k in value) {
    const f = field(s, k);
    if (f.drop) continue;
    const v = value[k];
    const structured = typeof v === 'object' && v !== null && !(v instanceof Date);
    if (f.col && (f.jsonb || !structured)) {
      row[f.name] = f.jsonb ? scrub(v) : v;
    } else if (structured && !Array.isArray(v)) {
      // Nested extras are fresh scrubbed copies already.
      const nested = flatten(v as Record<string, unknown>, (f.nested ??= scope(s.table, s.skip, `${f.name}_`, f.path)), row);
      if (nested) (extra ??= {})[k] = nested;
    } else if (v !== null && v !== undefined) {
      (extra ??= {})[k] = scrub(v);
    }
  }
  return extra;
}

/** Hash of everything a row says, bookkeeping aside, and of its child rows (in column order, so stable). */
function contentHash(table: TableInfo, row: Row, children: readonly Row[][], childTables: readonly TableInfo[]): string {
  const kids: unknown[][][] = [];
  for (let i = 0; i < children.length; i++) {
    const t = childTables[i]!;
    kids.push(children[i]!.map((r) => content(t, r)));
  }
  return sha256Hex32(JSON.stringify([content(table, row), kids]));
}

/** A row's hashed values in column order; instants as ISO text. */
function content(t: TableInfo, r: Row): unknown[] {
  const out = new Array<unknown>(t.hashed.length);
  for (let i = 0; i < t.hashed.length; i++) {
    const v = r[t.hashed[i]!];
    out[i] = v instanceof Date ? encodedInstant(v) : (v ?? null);
  }
  return out;
}

export function keyText(row: Row, key: readonly string[]): string {
  if (key.length === 1) {
    const v = row[key[0]!];
    return v == null ? '[null]' : `[${JSON.stringify(String(v))}]`;
  }
  return JSON.stringify(key.map((k) => (row[k] == null ? null : String(row[k]))));
}

/** What mapping one target needs, worked out once per target rather than per item. */
interface Plan {
  readonly table: TableInfo;
  readonly scope: Scope;
  readonly children: readonly ChildPlan[];
  readonly childTables: readonly TableInfo[];
}

interface ChildPlan {
  readonly child: ChildTarget;
  readonly table: TableInfo;
  readonly scope: Scope;
  readonly parentColumns: readonly string[];
  readonly hasOrd: boolean;
}

const plans = new WeakMap<Target, Plan>();

function planFor(target: Target): Plan {
  let plan = plans.get(target);
  if (plan) return plan;
  const table = tableInfo(target.table);
  const children = (target.children ?? []).map((child) => {
    const t = tableInfo(child.table);
    return { child, table: t, scope: scope(t, new Set()), parentColumns: child.parentColumns ?? target.key, hasOrd: t.byName.has('_ord') };
  });
  plan = {
    table,
    scope: scope(table, new Set((target.children ?? []).map((c) => c.path))),
    children,
    childTables: children.map((c) => c.table),
  };
  plans.set(target, plan);
  return plan;
}

type Rejects = { raw: unknown; reason: string }[];

/**
 * The child rows of one item. An element whose own key column would be null cannot be a row: it goes to
 * `rejects` and its siblings go on. Elements with the same identifying fields in one item (two requirements
 * worded alike) each keep a row: the second and later ones hash their occurrence into `_key` as well.
 */
function mapChild(c: ChildPlan, item: Record<string, unknown>, parent: Row, parentKey: readonly string[], rejects: Rejects): Row[] {
  const list = getPath(item, c.child.path);
  if (!Array.isArray(list)) return [];
  const elements = list.filter(isPlainObject).flatMap((el) => expand(el, c.child.each));
  const seen = new Map<string, number>();
  const rows: Row[] = [];
  elements.forEach((el, ord) => {
    const row = c.table.blank();
    row.company_key = parent.company_key;
    c.parentColumns.forEach((col, i) => (row[col] = parent[parentKey[i]!]));
    const extra = flatten(el, c.scope, row);
    fillLocalTimes(c.table, row);
    if (c.hasOrd) row._ord = ord;
    if (c.child.keyFields) {
      const key = hashKey(el, c.child.keyFields);
      const n = (seen.get(key) ?? 0) + 1;
      seen.set(key, n);
      row._key = n === 1 ? key : hashKey({ key, n }, ['key', 'n']);
    }
    row._extra = extra ?? null;
    const missing = c.child.key.filter((k) => row[k] === null || row[k] === undefined);
    if (missing.length > 0) {
      rejects.push({ raw: { parent: keyObject(parent, parentKey), [c.child.path]: el }, reason: `${c.table.name}: ${missing.join(', ')} is null` });
      return;
    }
    rows.push(row);
  });
  return dedupe(rows, (r) => keyText(r, c.child.key));
}

/** The parent's key columns and values, naming which item a rejected child element belonged to. */
function keyObject(row: Row, key: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(key.map((k) => [k, row[k] ?? null]));
}

/** One element, or with `each` one merged object per inner element (the entry itself when it has none). */
function expand(el: Record<string, unknown>, each: string | undefined): Record<string, unknown>[] {
  if (!each) return [el];
  const { [each]: inner, ...outer } = el;
  const list = Array.isArray(inner) ? inner.filter(isPlainObject) : [];
  return list.length === 0 ? [outer] : list.map((i) => ({ ...outer, ...i }));
}

/** Last occurrence of each key wins, in the order of those last occurrences. */
export function dedupe<T>(items: readonly T[], key: (t: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const it of items) {
    const k = key(it);
    byKey.delete(k);
    byKey.set(k, it);
  }
  return [...byKey.values()];
}

/** A record mapped to its rows with their content fingerprint (`_hash`): mapRecord, then fingerprint. */
export function mapItem(target: Target, companyKey: string, input: Record<string, unknown>, envelope?: Record<string, unknown>): MappedItem {
  const m = mapRecord(target, companyKey, input, envelope);
  fingerprint(target, m);
  return m;
}

/** Sets `_hash` of a mapped record's row: what decides whether its stored row changed. */
export function fingerprint(target: Target, m: MappedItem): void {
  const plan = planFor(target);
  m.row._hash = contentHash(plan.table, m.row, m.children, plan.childTables);
}

/** A record mapped to its rows, without the fingerprint. */
export function mapRecord(target: Target, companyKey: string, input: Record<string, unknown>, envelope?: Record<string, unknown>): MappedItem {
  const plan = planFor(target);
  let item = target.prepare ? target.prepare(input) : input;
  if (envelope && target.envelopeFields) {
    item = { ...item };
    for (const f of target.envelopeFields) if (envelope[f] !== undefined && item[f] == null) item[f] = envelope[f];
  }
  const row = plan.table.blank();
  row.company_key = companyKey;
  const extra = flatten(item, plan.scope, row);
  fillLocalTimes(plan.table, row);
  if (target.keyFields) row._key = hashKey(item, target.keyFields);
  row._extra = extra ?? null;
  const rejects: Rejects = [];
  const children = plan.children.map((c) => mapChild(c, item, row, target.key, rejects));
  const deleted = target.deletedFlag ? item[target.deletedFlag] === true : false;
  return { row, rejects, children, keyText: keyText(row, target.key), deleted };
}

/** A value as the text Postgres parses for the column's type (every value travels as text). */
export function encode(value: unknown, sqlType: string): string | null {
  if (value === null || value === undefined) return null;
  if (sqlType === 'jsonb') return JSON.stringify(value);
  if (value instanceof Date) return encodedInstant(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The ISO text of an instant. Every row of a page carries the page's one `_synced_at`: the last one's text is kept. */
function encodedInstant(d: Date): string {
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
