import type { z } from 'zod';
import type { Logger } from '../log.ts';
import type { Endpoint, ItemOf } from './endpoints.ts';
import { SourceError } from './errors.ts';
import { quickParse, REFUSED } from './quick-parse.ts';

/** One record that failed its schema: kept raw, with the reason, so its page goes on. */
export interface RecordReject {
  raw: unknown;
  reason: string;
}

export interface ParsedItems<T> {
  items: T[];
  rejects: RecordReject[];
}

/** zod's messages with the path of each issue, on one line (`Employee.ServiceId: Invalid input: ...`). */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length > 0 ? i.path.map(String).join('.') : '(record)'}: ${i.message}`)
    .join('; ');
}

/** Parses each record on its own: one bad record is a RecordReject, not a failed page. */
export function parseItems<T>(schema: z.ZodType<T>, raw: readonly unknown[]): ParsedItems<T> {
  const items: T[] = [];
  const rejects: RecordReject[] = [];
  const quick = quickParse(schema);
  for (const r of raw) {
    const parsed = quick(r);
    if (parsed !== REFUSED) {
      items.push(parsed as T);
      continue;
    }
    const result = schema.safeParse(r);
    if (result.success) items.push(result.data);
    else rejects.push({ raw: r, reason: formatIssues(result.error) });
  }
  return { items, rejects };
}

/** The items of a response and what the container said besides them. */
export interface Container {
  raw: unknown[];
  hasMore: boolean;
  extras: Record<string, unknown>;
  /** Set when the body was read in another shape than the endpoint's: says which, for a warning. */
  shape?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function notContainer(e: Endpoint, expected: string, body: unknown): SourceError {
  const got = Array.isArray(body) ? 'an array' : body === null ? 'null' : typeof body;
  return new SourceError('schema', `${e.name}: expected ${expected}, got ${got}`, { endpoint: e.name });
}

/** The envelope fields that are paging, not data; everything else at the top level is passed on as extras. */
function envelopeExtras(body: Record<string, unknown>): Record<string, unknown> {
  const { HasMoreResults: _h, Offset: _o, ResultCount: _r, Results: _c, Data: _d, ...extras } = body;
  return extras;
}

/** Fields only an envelope has: an object holding one of them is a broken envelope, not an item. */
const ENVELOPE_FIELDS = ['Data', 'HasMoreResults', 'ResultCount', 'Results'];

/**
 * An object read as the one item of a list, as the service's own documentation answers some lists. An object
 * with envelope fields but no Data array cannot be read as the resource.
 */
function singleItem(e: Endpoint, body: Record<string, unknown>, expected: string): Container {
  if (ENVELOPE_FIELDS.some((f) => f in body)) throw notContainer(e, expected, body);
  return { raw: [body], hasMore: false, extras: {}, shape: 'a single object where a list is expected' };
}

/**
 * Reads a paged envelope (`HasMoreResults`, `Offset`, `ResultCount` or `Results`, `Data`, extras). Tolerates the
 * other shapes the service's documentation shows for these lists: a bare array (the whole list, no paging) and
 * a single object (one item).
 */
export function readEnvelope(e: Endpoint, body: unknown): Container {
  if (Array.isArray(body))
    return { raw: body, hasMore: false, extras: {}, shape: 'a bare array where an envelope is expected' };
  if (isObject(body) && !Array.isArray(body.Data)) return singleItem(e, body, 'an envelope with a Data array');
  if (!isObject(body)) throw notContainer(e, 'an envelope with a Data array', body);
  if (typeof body.HasMoreResults !== 'boolean') {
    throw new SourceError('schema', `${e.name}: envelope without a boolean HasMoreResults`, { endpoint: e.name });
  }
  return { raw: body.Data as unknown[], hasMore: body.HasMoreResults, extras: envelopeExtras(body) };
}

/** Reads a plain array; tolerates an envelope (its Data, as the whole list) and a single object (one item). */
export function readArray(e: Endpoint, body: unknown): Container {
  if (Array.isArray(body)) return { raw: body, hasMore: false, extras: {} };
  if (isObject(body) && Array.isArray(body.Data)) {
    return {
      raw: body.Data,
      hasMore: false,
      extras: envelopeExtras(body),
      shape: 'an envelope where an array is expected',
    };
  }
  if (isObject(body)) return singleItem(e, body, 'an array');
  throw notContainer(e, 'an array', body);
}

/**
 * Reads a container the spec leaves open: an array, an object holding `Data` (or, failing that, holding
 * nothing but one array, whatever its name), or one bare item.
 */
export function readArrayOrObject(e: Endpoint, body: unknown): Container {
  if (Array.isArray(body)) return { raw: body, hasMore: false, extras: {} };
  if (isObject(body) && Array.isArray(body.Data))
    return { raw: body.Data, hasMore: false, extras: envelopeExtras(body) };
  const values = isObject(body) ? Object.values(body) : [];
  if (values.length === 1 && Array.isArray(values[0])) return { raw: values[0], hasMore: false, extras: {} };
  if (isObject(body)) return { raw: [body], hasMore: false, extras: {} };
  throw notContainer(e, 'an array or an object', body);
}

export function readContainer(e: Endpoint, body: unknown): Container {
  switch (e.response.kind) {
    case 'envelope':
      return readEnvelope(e, body);
    case 'array':
      return readArray(e, body);
    case 'array-or-object':
      return readArrayOrObject(e, body);
    default:
      throw new SourceError(
        'bad_request',
        `${e.name} answers with ${e.response.kind}, not a list: use lookup or send`,
        {
          endpoint: e.name,
        },
      );
  }
}

/** The declared count of an envelope page, when it carries one under the endpoint's name for it. */
export function declaredCount(e: Endpoint, body: unknown): number | undefined {
  if (e.response.kind !== 'envelope' || !isObject(body)) return undefined;
  const n = body[e.response.countField];
  return typeof n === 'number' ? n : undefined;
}

export interface PageResult<T> {
  items: T[];
  rejects: RecordReject[];
  /** Offset of the page's first record. */
  offset: number;
  hasMore: boolean;
  /** Envelope fields besides the paging ones (FormId, FormTitle, RunLogTypeId, ...). */
  extras: Record<string, unknown>;
}

/** Turns list bodies into pages of parsed records, and warns of what a sync goes on despite. */
export class PageReader {
  readonly #log: Logger;
  /** Endpoints already warned of for answering in another shape than documented. */
  readonly #shapesWarned = new Set<string>();

  constructor(log: Logger) {
    this.#log = log;
  }

  page<E extends Endpoint>(
    e: E,
    raw: unknown[],
    offset: number,
    hasMore: boolean,
    extras: Record<string, unknown>,
  ): PageResult<ItemOf<E>> {
    const { items, rejects } = parseItems(e.item as z.ZodType<ItemOf<E>>, raw);
    if (rejects.length > 0) {
      this.#log.warn(
        { endpoint: e.name, offset, rejects: rejects.length, first: rejects[0]!.reason },
        'records failed their schema',
      );
    }
    return { items, rejects, offset, hasMore, extras };
  }

  /** A whole list's body (an array or one of the shapes tolerated for it) as its one page. */
  whole<E extends Endpoint>(e: E, body: unknown): PageResult<ItemOf<E>> {
    const container = readContainer(e, body);
    this.#noteShape(e, container);
    return this.page(e, container.raw, 0, false, container.extras);
  }

  /** One envelope read into a page, and how many records it held. */
  envelope<E extends Endpoint>(e: E, offset: number, body: unknown): { page: PageResult<ItemOf<E>>; received: number } {
    const envelope = readEnvelope(e, body);
    this.#noteShape(e, envelope);
    const count = declaredCount(e, body);
    if (count !== undefined && count !== envelope.raw.length) {
      this.#log.warn(
        { endpoint: e.name, offset, count, received: envelope.raw.length },
        'page count differs from its Data',
      );
    }
    return {
      page: this.page(e, envelope.raw, offset, envelope.hasMore, envelope.extras),
      received: envelope.raw.length,
    };
  }

  /** A list read in another shape than its endpoint's is warned of once per endpoint, and synced all the same. */
  #noteShape(e: Endpoint, c: Container): void {
    if (!c.shape || this.#shapesWarned.has(e.name)) return;
    this.#shapesWarned.add(e.name);
    this.#log.warn(
      { endpoint: e.name, shape: c.shape },
      'list answered in another shape than documented; read as the resource',
    );
  }
}
