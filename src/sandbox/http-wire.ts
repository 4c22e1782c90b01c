import type { z } from 'zod';
import type { Endpoint, Response } from '../source/endpoints.ts';
import * as s from '../source/schemas/index.ts';
import type { Page, ReadResult, SandboxData } from './service.ts';
import { COMPANY_ZONE, dateTime } from './time.ts';
import { ITEM, toXml, xmlContent, xmlDocument, xmlElement } from './xml.ts';

/**
 * Records on the wire: canonical names → the names the service sends (the schemas' alias maps), the earlier
 * representation when asked for, and JSON or XML bodies built by joining each record's cached serialization.
 */

export type Format = 'json' | 'xml';

/**
 * Departures from the spec that the real service is known to make, off by default, for testing readers:
 * `date-times` writes the fields the spec types `date` as date-times with fractions and an offset (as the service's
 * own documentation examples do, `1980-01-02T00:00:00.000-05:00`); `single-object` answers a plain-array list of
 * one item with the item alone; `bare-array` answers an envelope list with its Data array alone. The last two
 * apply to JSON bodies. `new-field` adds a field the spec does not have to every individual (`BadgeNumber`, a
 * string), as a service release that adds one would.
 */
export const QUIRKS = ['date-times', 'single-object', 'bare-array', 'new-field'] as const;
export type Quirk = (typeof QUIRKS)[number];

/** Fields the spec types `date` (service-spec.md, Resources), as they appear at the top level of records. */
const DATE_FIELDS = [
  'DateOfBirth',
  'HireDate',
  'ActivationDate',
  'ExpirationDate',
  'UpdateDate',
  'StartDate',
  'EndDate',
  'ExamStartDate',
  'ExamEndDate',
  'IssueDate',
];
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `yyyy-MM-dd` → `yyyy-MM-ddT00:00:00.000±hh:mm`, midnight in the company's time zone. */
export function asDateTime(date: string): string {
  const local = Date.parse(`${date}T00:00:00Z`);
  const text = dateTime(COMPANY_ZONE.toUtc(local), COMPANY_ZONE);
  return `${text.slice(0, 19)}.000${text.slice(19)}`;
}

function dateTimesQuirk(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const f of DATE_FIELDS) {
    const v = (value as Record<string, unknown>)[f];
    if (typeof v === 'string' && DATE_ONLY.test(v)) {
      out ??= { ...(value as Record<string, unknown>) };
      out[f] = asDateTime(v);
    }
  }
  return out ?? value;
}

/** The individual with the field the `new-field` quirk adds. */
function newFieldQuirk(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const serviceId = (value as Record<string, unknown>).ServiceId;
  return { ...(value as Record<string, unknown>), BadgeNumber: `B-${String(serviceId).padStart(8, '0')}` };
}

type Rename = (value: unknown) => unknown;

/** Each schema that carries aliases, with its map; where they sit in an item is found by walking the schema. */
const ALIASED = new Map<z.ZodType, s.Aliases>([
  [s.Individual, s.individualAliases],
  [s.JobTitle, s.jobTitleAliases],
  [s.TimeOffEmployee, s.timeOffEmployeeAliases],
  [s.FormAudit, s.formAuditAliases],
]);

interface Def {
  type: string;
  innerType?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function objectRenamer(shape: Record<string, z.ZodType>, seen: Set<z.ZodType>): Rename | undefined {
  const fields: Array<[string, Rename]> = [];
  for (const [key, field] of Object.entries(shape)) {
    const rename = compileRenamer(field, seen);
    if (rename) fields.push([key, rename]);
  }
  if (fields.length === 0) return undefined;
  return (value) => {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = { ...value };
    for (const [key, rename] of fields) if (out[key] != null) out[key] = rename(out[key]);
    return out;
  };
}

/** canonical → wire renaming for values of `schema`, or undefined when nothing in it is renamed. */
export function compileRenamer(schema: z.ZodType, seen = new Set<z.ZodType>()): Rename | undefined {
  if (seen.has(schema)) return undefined;
  seen.add(schema);
  const def = defOf(schema);
  let inner: Rename | undefined;
  switch (def.type) {
    case 'pipe':
      inner = def.out && compileRenamer(def.out, seen);
      break;
    case 'object':
      inner = def.shape && objectRenamer(def.shape, seen);
      break;
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
    case 'prefault':
      inner = def.innerType && compileRenamer(def.innerType, seen);
      break;
    case 'array': {
      const item = def.element && compileRenamer(def.element, seen);
      inner = item && ((v) => (Array.isArray(v) ? v.map(item) : v));
      break;
    }
  }
  seen.delete(schema);
  const aliases = ALIASED.get(schema);
  if (!aliases) return inner;
  return inner ? (v) => s.renameKeys(inner(v), aliases) : (v) => s.renameKeys(v, aliases);
}

/**
 * A bounded cache by record identity in two generations: new entries go to the young one; when it holds
 * `budget` bytes it becomes the old one and the previous old one is dropped, so at most about twice the budget
 * is kept. Pages read again soon (retries, overlapping windows, benchmarks) are served from it; a backfill that
 * reads a million records once does not keep them all.
 */
export class TwoGenerations<V extends { length: number }> {
  #young = new Map<object, V>();
  #old = new Map<object, V>();
  #bytes = 0;
  readonly #budget: number;

  constructor(budget: number) {
    this.#budget = budget;
  }

  get(key: object): V | undefined {
    const hit = this.#young.get(key);
    if (hit !== undefined) return hit;
    const old = this.#old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: object, value: V): void {
    this.#young.set(key, value);
    this.#bytes += value.length;
    if (this.#bytes >= this.#budget) {
      this.#old = this.#young;
      this.#young = new Map();
      this.#bytes = 0;
    }
  }
}

/** Bytes of serialized records kept per generation, per representation (v2, earlier) and format. */
export const CODEC_CACHE_BYTES = 48 * 1024 * 1024;

/** The caches codecs of one representation share, so the bound holds however many endpoints are read. */
export interface CodecCaches {
  json: TwoGenerations<Buffer>;
  xml: TwoGenerations<string>;
}

export function codecCaches(budget = CODEC_CACHE_BYTES): CodecCaches {
  return { json: new TwoGenerations(budget), xml: new TwoGenerations(budget) };
}

/**
 * One record's wire form, serialized once per record object while it stays in the cache (records are immutable).
 * JSON is kept as UTF-8 bytes, so a page is one Buffer.concat of cached bytes.
 */
export class RecordCodec {
  readonly #shape: (record: object) => unknown;
  readonly #json: TwoGenerations<Buffer>;
  readonly #xml: TwoGenerations<string>;

  /** Records reach one representation's caches through one codec only: a record's item schema is fixed. */
  constructor(shape: (record: object) => unknown, caches: CodecCaches = codecCaches()) {
    this.#shape = shape;
    this.#json = caches.json;
    this.#xml = caches.xml;
  }

  wire(record: object): unknown {
    return this.#shape(record);
  }

  json(record: object): Buffer {
    let bytes = this.#json.get(record);
    if (bytes === undefined) {
      bytes = Buffer.from(JSON.stringify(this.#shape(record)) ?? 'null');
      this.#json.set(record, bytes);
    }
    return bytes;
  }

  /** The record as one `<Item>` element. */
  xmlItem(record: object): string {
    let text = this.#xml.get(record);
    if (text === undefined) {
      text = xmlElement(ITEM, this.#shape(record));
      this.#xml.set(record, text);
    }
    return text;
  }
}

const COMMA = Buffer.from(',');
const CLOSE_ARRAY = Buffer.from(']');
const CLOSE_ENVELOPE = Buffer.from(']}');

/** `head`, the records separated by commas, then `tail`, in one allocation. */
function joinJson(head: string, items: readonly object[], codec: RecordCodec, tail: Buffer): Buffer {
  const parts: Buffer[] = new Array(items.length * 2 + 1);
  parts[0] = Buffer.from(head);
  let n = 1;
  let length = parts[0].length + tail.length;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) {
      parts[n++] = COMMA;
      length += 1;
    }
    const bytes = codec.json(items[i]!);
    parts[n++] = bytes;
    length += bytes.length;
  }
  parts[n++] = tail;
  parts.length = n;
  return Buffer.concat(parts, length);
}

/** Codecs per item schema and version, so records shared by several endpoints are serialized once. */
export class Codecs {
  readonly #data: SandboxData;
  readonly #byKey = new Map<z.ZodType, Map<string, RecordCodec>>();
  readonly #caches = new Map<string, CodecCaches>();
  readonly #dateTimes: boolean;
  readonly #newField: boolean;

  constructor(data: SandboxData, quirks: ReadonlySet<Quirk> = new Set()) {
    this.#data = data;
    this.#dateTimes = quirks.has('date-times');
    this.#newField = quirks.has('new-field');
  }

  for(endpoint: Endpoint, earlier: boolean): RecordCodec {
    const version = earlier && endpoint.earlier ? endpoint.earlier : 'v2';
    let bySchema = this.#byKey.get(endpoint.item);
    if (!bySchema) this.#byKey.set(endpoint.item, (bySchema = new Map()));
    let codec = bySchema.get(version);
    if (!codec) {
      const renamed = compileRenamer(endpoint.item) ?? ((v: unknown) => v);
      const dated = this.#dateTimes ? (v: unknown) => dateTimesQuirk(renamed(v)) : renamed;
      const rename = this.#newField && endpoint.item === s.Individual ? (v: unknown) => newFieldQuirk(dated(v)) : dated;
      const kind = endpoint.earlier;
      const representation = version === 'v2' || !kind ? 'v2' : 'earlier';
      let caches = this.#caches.get(representation);
      if (!caches) this.#caches.set(representation, (caches = codecCaches()));
      codec =
        representation === 'v2' || !kind
          ? new RecordCodec(rename, caches)
          : new RecordCodec((r) => rename(this.#data.earlier(kind, r)), caches);
      bySchema.set(version, codec);
    }
    return codec;
  }
}

function jsonEnvelope(endpoint: Endpoint, result: ReadResult, page: Page, codec: RecordCodec): Buffer {
  if (endpoint.response.kind !== 'envelope') throw new Error(`${endpoint.name} is not an envelope`);
  const { countField, extras = [] } = endpoint.response;
  let head = `{"HasMoreResults":${result.hasMore},"Offset":${page.offset},"${countField}":${result.items.length}`;
  for (const name of extras) head += `,${JSON.stringify(name)}:${JSON.stringify(result.extras?.[name] ?? null)}`;
  return joinJson(`${head},"Data":[`, result.items, codec, CLOSE_ENVELOPE);
}

function xmlEnvelope(endpoint: Endpoint, result: ReadResult, page: Page, codec: RecordCodec): string {
  if (endpoint.response.kind !== 'envelope') throw new Error(`${endpoint.name} is not an envelope`);
  const { countField, extras = [] } = endpoint.response;
  const fields: Record<string, unknown> = {
    HasMoreResults: result.hasMore,
    Offset: page.offset,
    [countField]: result.items.length,
  };
  for (const name of extras) fields[name] = result.extras?.[name] ?? null;
  return xmlDocument(`${xmlContent(fields)}<Data>${result.items.map((r) => codec.xmlItem(r)).join('')}</Data>`);
}

const NO_QUIRKS: ReadonlySet<Quirk> = new Set();

/** How a read's answer is written: the format asked for, the response's shape, and the quirks the service shows. */
export interface ReadShape {
  format: Format;
  kind?: Response['kind'];
  quirks?: ReadonlySet<Quirk>;
}

/**
 * The body of a successful read, shaped as the catalog's response description says, or as `kind` says where
 * the earlier representation differs (its certification list is a plain array).
 */
export function renderRead(
  endpoint: Endpoint,
  result: ReadResult,
  page: Page,
  codec: RecordCodec,
  { format, kind = endpoint.response.kind, quirks = NO_QUIRKS }: ReadShape,
): Buffer | string {
  const xml = format === 'xml';
  if (!xml && kind === 'envelope' && quirks.has('bare-array')) return joinJson('[', result.items, codec, CLOSE_ARRAY);
  if (
    !xml &&
    (kind === 'array' || kind === 'array-or-object') &&
    result.items.length === 1 &&
    quirks.has('single-object')
  )
    return codec.json(result.items[0]!);
  switch (kind) {
    case 'envelope':
      return xml ? xmlEnvelope(endpoint, result, page, codec) : jsonEnvelope(endpoint, result, page, codec);
    case 'array':
    // The spec leaves reference lists open between array and object; the sandbox answers with the array.
    case 'array-or-object':
      return xml
        ? xmlDocument(result.items.map((r) => codec.xmlItem(r)).join(''))
        : joinJson('[', result.items, codec, CLOSE_ARRAY);
    case 'one':
      return renderValue(codec.wire(result.items[0]!), format);
    case 'boolean':
      return renderValue((result.items[0] as unknown) === true, format);
    case 'empty':
      return '';
  }
}

/** A single value (one record, a write's result, an error body) in the requested format. */
export function renderValue(value: unknown, format: Format): string {
  return format === 'xml' ? toXml(value) : (JSON.stringify(value) ?? 'null');
}

export const CONTENT_TYPE: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  xml: 'text/xml; charset=utf-8',
};

const MEDIA: Record<string, Format> = {
  'application/json': 'json',
  'text/json': 'json',
  'application/*': 'json',
  '*/*': 'json',
  'text/xml': 'xml',
  'application/xml': 'xml',
  'text/*': 'xml',
};

/**
 * The format an Accept header asks for (RFC 2616 media ranges with q-values; the first of equal weight wins);
 * undefined when it names only formats the service does not know (406).
 */
export function negotiate(accept: string | undefined): Format | undefined {
  if (accept === undefined || accept.trim() === '') return 'json';
  let best: Format | undefined;
  let bestQ = 0;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';');
    const format = MEDIA[type.trim().toLowerCase()];
    if (!format) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.toLowerCase().startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (Number.isFinite(q) && q > bestQ) {
      best = format;
      bestQ = q;
    }
  }
  return best;
}

const SUFFIX = /\.(json|xml)$/i;

/** A `.json`/`.xml` suffix picks the format and is not part of the resource path. */
export function splitSuffix(path: string): { path: string; format?: Format } {
  const m = SUFFIX.exec(path);
  if (!m) return { path };
  return { path: path.slice(0, -m[0].length), format: m[1]!.toLowerCase() as Format };
}
