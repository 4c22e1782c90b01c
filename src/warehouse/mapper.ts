import { tableInfo, type ColumnInfo, type Row, type TableInfo } from './catalog.ts';
import { hashKey, keyText } from './record-keys.ts';
import { getPath, isPlainObject } from './paths.ts';
import type { ChildTarget, Target } from './targets.ts';

/**
 * The generic mapper: an item of any resource → one row of its table plus rows of its child tables.
 * Nested single objects flatten into prefixed snake_case columns, nested lists named by the target go to
 * child tables, and whatever has no column is kept in `_extra` with its original nesting.
 */

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
  f = {
    drop: NEVER_STORED.test(k) || s.skip.has(path),
    name,
    col,
    jsonb: col?.sqlType === 'jsonb',
    path,
    nested: undefined,
  };
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
      const nested = flatten(
        v as Record<string, unknown>,
        (f.nested ??= scope(s.table, s.skip, `${f.name}_`, f.path)),
        row,
      );
      if (nested) (extra ??= {})[k] = nested;
    } else if (v !== null && v !== undefined) {
      (extra ??= {})[k] = scrub(v);
    }
  }
  return extra;
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
    return {
      child,
      table: t,
      scope: scope(t, new Set()),
      parentColumns: child.parentColumns ?? target.key,
      hasOrd: t.byName.has('_ord'),
    };
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
function mapChild(
  c: ChildPlan,
  item: Record<string, unknown>,
  parent: Row,
  parentKey: readonly string[],
  rejects: Rejects,
): Row[] {
  const list = getPath(item, c.child.path);
  if (!Array.isArray(list)) return [];
  const elements = list.filter(isPlainObject).flatMap((el) => expand(el, c.child.each));
  const seen = new Map<string, number>();
  const rows: Row[] = [];
  elements.forEach((el, ord) => {
    const row = c.table.blank();
    row.company_key = parent.company_key;
    for (const [i, col] of c.parentColumns.entries()) row[col] = parent[parentKey[i]!];
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
      rejects.push({
        raw: { parent: keyObject(parent, parentKey), [c.child.path]: el },
        reason: `${c.table.name}: ${missing.join(', ')} is null`,
      });
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

/**
 * What every record of one page is mapped with: its company, and the page's envelope fields. Whatever a company's
 * options decide about the values of its rows belongs here, applied once per record at the end of mapRecord.
 */
export interface PageContext {
  readonly companyKey: string;
  /** Envelope fields of the page (FormId, FormTitle, RunLogTypeId, ...): part of some records. */
  readonly extras?: Record<string, unknown>;
}

/** A record mapped to its rows, without the fingerprint. */
export function mapRecord(target: Target, input: Record<string, unknown>, page: PageContext): MappedItem {
  const plan = planFor(target);
  let item = target.prepare ? target.prepare(input) : input;
  const envelope = page.extras;
  if (envelope && target.envelopeFields) {
    item = { ...item };
    for (const f of target.envelopeFields) if (envelope[f] !== undefined && item[f] == null) item[f] = envelope[f];
  }
  const row = plan.table.blank();
  row.company_key = page.companyKey;
  const extra = flatten(item, plan.scope, row);
  fillLocalTimes(plan.table, row);
  if (target.keyFields) row._key = hashKey(item, target.keyFields);
  row._extra = extra ?? null;
  const rejects: Rejects = [];
  const children = plan.children.map((c) => mapChild(c, item, row, target.key, rejects));
  const deleted = target.deletedFlag ? item[target.deletedFlag] === true : false;
  return { row, rejects, children, keyText: keyText(row, target.key), deleted };
}
