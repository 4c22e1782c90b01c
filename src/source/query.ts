import { API_VERSION, PAGE_PARAMS, type Endpoint, type QueryParam } from './endpoints.ts';
import { SourceError } from './errors.ts';
import { ISO_DATE_OR_DATETIME } from './schemas/common.ts';

/**
 * Turns a typed query into the service's query string, from the catalog's param descriptions.
 * Everything is checked before a request is made: a request the service would refuse costs budget.
 */

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

const PAGE_NAMES: ReadonlySet<string> = new Set(PAGE_PARAMS.map((p) => p.name));

export interface PageControls {
  offset: number;
  limit: number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `yyyy-MM-dd` of the UTC day. */
export function formatDate(d: Date): string {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/**
 * ISO 8601 in UTC with the offset written out (`+00:00`, the DateTimeOffset form the spec shows);
 * milliseconds only when there are some.
 */
export function formatDateTime(d: Date): string {
  const ms = d.getUTCMilliseconds();
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${ms ? `.${pad(ms, 3)}` : ''}`;
  return `${formatDate(d)}T${time}+00:00`;
}

function invalid(e: Endpoint, message: string): SourceError {
  return new SourceError('bad_request', `${e.name}: ${message}`, { endpoint: e.name, code: 'invalid_parameters' });
}

function formatValue(e: Endpoint, p: QueryParam, v: unknown): string {
  switch (p.type) {
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw invalid(e, `${p.name} must be an integer`);
      if ((p.min !== undefined && v < p.min) || (p.max !== undefined && v > p.max)) {
        throw invalid(e, `${p.name} must be between ${p.min ?? '-∞'} and ${p.max ?? '∞'}, got ${v}`);
      }
      return String(v);
    case 'bool':
      if (typeof v !== 'boolean') throw invalid(e, `${p.name} must be true or false`);
      return v ? 'true' : 'false';
    case 'date':
      if (v instanceof Date) return formatDate(checkedDate(e, p, v));
      if (typeof v !== 'string' || !DATE_ONLY.test(v)) throw invalid(e, `${p.name} must be a Date or yyyy-MM-dd`);
      return v;
    case 'datetime':
      if (v instanceof Date) return formatDateTime(checkedDate(e, p, v));
      if (typeof v !== 'string' || !ISO_DATE_OR_DATETIME.test(v)) {
        throw invalid(e, `${p.name} must be a Date or an ISO 8601 date-time`);
      }
      return v;
    case 'csv':
      return formatCsv(e, p, v);
    case 'enum':
      if (typeof v !== 'string' || !p.values?.includes(v))
        throw invalid(e, `${p.name} must be one of ${p.values?.join(', ')}`);
      return v;
    case 'string':
      if (typeof v !== 'string') throw invalid(e, `${p.name} must be a string`);
      return v;
  }
}

function checkedDate(e: Endpoint, p: QueryParam, d: Date): Date {
  if (Number.isNaN(d.getTime())) throw invalid(e, `${p.name} is an invalid Date`);
  return d;
}

function formatCsv(e: Endpoint, p: QueryParam, v: unknown): string {
  const items = typeof v === 'string' ? v.split(',').map((s) => s.trim()) : v;
  if (!Array.isArray(items) || items.some((i) => typeof i !== 'string')) {
    throw invalid(e, `${p.name} must be a list of strings or a comma-separated string`);
  }
  const unknown = p.values ? items.filter((i) => !p.values!.includes(i)) : [];
  if (unknown.length > 0)
    throw invalid(e, `${p.name} has unknown values ${unknown.join(', ')} (allowed: ${p.values!.join(', ')})`);
  return items.join(',');
}

/** Whole days between two query dates, for endpoints that refuse long ranges. */
function days(a: string, b: string): number {
  return (Date.parse(b) - Date.parse(a)) / 86_400_000;
}

/**
 * The query string (without `?`) for one request of `e`: `api-version` first, then the params in catalog order,
 * then the page controls. encodeURIComponent writes a `+` as `%2B`, which the service requires for offsets.
 */
export function buildQuery(e: Endpoint, query: Readonly<Record<string, unknown>>, page?: PageControls): string {
  const known = new Map(e.query.map((p) => [p.name, p] as const));
  for (const key of Object.keys(query)) {
    if (PAGE_NAMES.has(key))
      throw invalid(e, `${key} is a page control; use the pageSize and startOffset call options`);
    if (!known.has(key))
      throw invalid(
        e,
        `unknown query parameter ${key} (known: ${[...known.keys()].filter((k) => !PAGE_NAMES.has(k)).join(', ') || 'none'})`,
      );
  }
  const pairs: [string, string][] = [['api-version', API_VERSION]];
  for (const p of e.query) {
    if (PAGE_NAMES.has(p.name)) continue;
    const v = query[p.name];
    if (v === undefined || v === null) {
      if (p.required) throw invalid(e, `${p.name} is required`);
      continue;
    }
    pairs.push([p.name, formatValue(e, p, v)]);
  }
  checkRange(e, pairs);
  if (page) pairs.push(['Offset', String(page.offset)], ['Limit', String(page.limit)]);
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

function checkRange(e: Endpoint, pairs: readonly [string, string][]): void {
  if (!e.maxRange) return;
  const get = (name: string) => pairs.find(([k]) => k === name)?.[1];
  const start = get(e.maxRange.start);
  const end = get(e.maxRange.end);
  if (start && end && days(start, end) > e.maxRange.days) {
    throw invalid(e, `${e.maxRange.start}..${e.maxRange.end} spans more than ${e.maxRange.days} days`);
  }
}
