import { PAGE_PARAMS, type Endpoint, type QueryParam } from '../source/endpoints.ts';
import type { Page, ParsedQuery, QueryValue } from './service.ts';

/**
 * Query parameters parsed and checked by the catalog's descriptions only: names match case-insensitively,
 * values by the param's type, `required`, `default`, `min`/`max` and `values`.
 */

export interface BadParameter {
  param: string;
  message: string;
}

export type Parsed = { ok: true; query: ParsedQuery; page: Page } | { ok: false; bad: BadParameter };

/** Unpaged reads return everything. */
export const EVERYTHING: Page = Object.freeze({ offset: 0, limit: Number.MAX_SAFE_INTEGER });
const [OFFSET, LIMIT] = PAGE_PARAMS;

// yyyy-MM-dd, optionally THH:mm[:ss[.fffffff]] and Z or ±HH[:]mm.
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

function parseDate(text: string): Date | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h = '0', mi = '0', s = '0'] = m.slice(1, 7) as string[];
  const ms = Number(`${m[7] ?? ''}000`.slice(0, 3));
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const check = new Date(utc);
  // Date.UTC rolls 2024-02-30 over to March; a calendar date that does not exist is refused instead.
  if (
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) ||
    check.getUTCMinutes() !== Number(mi) ||
    check.getUTCSeconds() !== Number(s)
  ) {
    return undefined;
  }
  const offset = m[8];
  if (!offset || offset === 'Z') return check;
  const sign = offset[0] === '-' ? -1 : 1;
  const digits = offset.slice(1).replace(':', '');
  const oh = Number(digits.slice(0, 2));
  const om = Number(digits.slice(2));
  if (oh > 14 || om > 59) return undefined;
  return new Date(utc - sign * (oh * 60 + om) * 60_000);
}

function pick(text: string, allowed: readonly string[] | undefined): string | undefined {
  if (!allowed) return text;
  const lower = text.toLowerCase();
  return allowed.find((v) => v.toLowerCase() === lower);
}

function describe(p: QueryParam): string {
  switch (p.type) {
    case 'int':
      return 'an integer';
    case 'bool':
      return 'true or false';
    case 'date':
    case 'datetime':
      return 'an ISO 8601 date or date-time with offset';
    case 'enum':
      return `one of ${p.values?.join(', ')}`;
    case 'csv':
      return p.values ? `a comma-separated list of ${p.values.join(', ')}` : 'a comma-separated list';
    default:
      return 'a string';
  }
}

function convert(p: QueryParam, text: string): QueryValue | undefined {
  switch (p.type) {
    case 'int': {
      if (!/^[+-]?\d{1,16}$/.test(text)) return undefined;
      const n = Number(text);
      return Number.isSafeInteger(n) ? n : undefined;
    }
    case 'bool': {
      const lower = text.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : undefined;
    }
    case 'date':
    case 'datetime':
      return parseDate(text);
    case 'enum':
      return pick(text, p.values);
    case 'csv': {
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const picked = items.map((s) => pick(s, p.values));
      return picked.every((s) => s !== undefined) ? (picked as string[]) : undefined;
    }
    default:
      return text;
  }
}

function badValue(p: QueryParam, text: string): BadParameter {
  // An unencoded `+` in an offset arrives as a space (form encoding); say so, since it is the usual cause.
  const hint = (p.type === 'date' || p.type === 'datetime') && text.includes(' ') ? ' (send "+" as %2B)' : '';
  return { param: p.name, message: `${p.name} must be ${describe(p)}, got "${text}"${hint}` };
}

function outOfRange(p: QueryParam, n: number): BadParameter | undefined {
  if ((p.min === undefined || n >= p.min) && (p.max === undefined || n <= p.max)) return undefined;
  const range =
    p.min !== undefined && p.max !== undefined
      ? `between ${p.min} and ${p.max}`
      : p.min !== undefined
        ? `at least ${p.min}`
        : `at most ${p.max}`;
  return { param: p.name, message: `${p.name} must be ${range}, got ${n}` };
}

/** Incoming parameters by lower-cased name; the first of repeated names wins. */
export function lowerCaseParams(params: URLSearchParams): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of params) {
    const lower = k.toLowerCase();
    if (!out.has(lower)) out.set(lower, v);
  }
  return out;
}

function checkRange(endpoint: Endpoint, values: Record<string, QueryValue | undefined>): BadParameter | undefined {
  const range = endpoint.maxRange;
  if (!range) return undefined;
  const start = values[range.start];
  const end = values[range.end];
  if (!(start instanceof Date) || !(end instanceof Date)) return undefined;
  if (end.getTime() - start.getTime() <= range.days * 86_400_000) return undefined;
  return {
    param: range.end,
    message: `${range.end}: the range from ${range.start} to ${range.end} must not exceed ${range.days} days`,
  };
}

/**
 * Parses an endpoint's query. With `enforceRequired` false (the admin truth route) a missing required
 * parameter is simply absent.
 */
export function parseQuery(endpoint: Endpoint, incoming: Map<string, string>, enforceRequired = true): Parsed {
  const values: Record<string, QueryValue | undefined> = {};
  const page: Page =
    endpoint.response.kind === 'envelope' ? { offset: OFFSET.default, limit: LIMIT.default } : { ...EVERYTHING };
  for (const p of endpoint.query) {
    const text = incoming.get(p.name.toLowerCase());
    let value: QueryValue | undefined;
    if (text === undefined || text === '') {
      if (p.required && enforceRequired) return { ok: false, bad: { param: p.name, message: `${p.name} is required` } };
      value = p.default;
    } else {
      value = convert(p, text);
      if (value === undefined) return { ok: false, bad: badValue(p, text) };
      const bad = typeof value === 'number' ? outOfRange(p, value) : undefined;
      if (bad) return { ok: false, bad };
    }
    if (p.name === OFFSET.name) {
      page.offset = value as number;
    } else if (p.name === LIMIT.name) {
      page.limit = value as number;
    } else {
      values[p.name] = value;
    }
  }
  const bad = checkRange(endpoint, values);
  if (bad) return { ok: false, bad };
  return { ok: true, query: values, page };
}
