import { z } from 'zod';

/** Date-only (`yyyy-MM-dd`) or date-time with an optional offset, as the service sends them. */
export const ISO_DATE_OR_DATETIME =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export const int = z.number().int();
export const str = z.string();
export const bool = z.boolean();
export const isoDate = z.string().regex(ISO_DATE_OR_DATETIME, 'expected an ISO 8601 date or date-time');

/** A transform whose output depends on its input alone, as the quick parse (source/quick-parse.ts) runs it. */
export interface PureTransform {
  readonly input: z.ZodType;
  readonly transform: (value: never) => unknown;
}

const pureTransforms = new WeakMap<z.ZodType, PureTransform>();

/** `input.transform(transform)`, known to the quick parse: it parses `input` itself and then transforms. */
export function pureTransform<I extends z.ZodType, O>(input: I, transform: (value: z.output<I>) => O) {
  const schema = input.transform(transform);
  pureTransforms.set(schema, { input, transform });
  return schema;
}

export function pureTransformOf(schema: unknown): PureTransform | undefined {
  return pureTransforms.get(schema as z.ZodType);
}

/** Fields the spec lists as int but which carry name text: accept either, keep text. */
export const nameText = pureTransform(z.union([z.string(), z.number()]), String);

/** Absent fields are null on the wire; both null and missing are accepted. */
export const opt = <T extends z.ZodType>(t: T) => t.nullish();

/**
 * Names the service sends under another name than the spec's field table.
 * The schema renames alias → canonical when parsing; the sandbox renames canonical → alias when serving.
 */
export type Aliases = Readonly<Record<string, string>>;

export function renameKeys(value: unknown, renames: Aliases): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  // for-in rather than Object.entries, which makes an array for every field of every record that uses an alias.
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    const target = renames[k] ?? k;
    if (target !== k && k in out && out[target] !== undefined) continue;
    if (!(target in out) || out[target] === undefined || out[target] === null) out[target] = v;
  }
  return out;
}

export function invert(aliases: Aliases): Aliases {
  return Object.fromEntries(Object.entries(aliases).map(([canonical, alias]) => [alias, canonical]));
}

/**
 * A record schema that keeps unknown fields (they become `_extra` in the warehouse)
 * and accepts each canonical field under its wire alias.
 * `aliases` maps canonical name → the name the service sends.
 */
export function record<S extends z.ZodRawShape>(shape: S, aliases: Aliases = {}) {
  const object = z.looseObject(shape);
  if (Object.keys(aliases).length === 0) return object;
  const toCanonical = invert(aliases);
  const renamed = z.preprocess((v) => renameKeys(v, toCanonical), object);
  aliasedRecords.set(renamed, { object, toCanonical });
  return renamed;
}

/** A record schema made with aliases: the object it parses once the wire names are renamed, and the renames. */
export interface AliasedRecord {
  readonly object: z.ZodType;
  /** alias → canonical */
  readonly toCanonical: Aliases;
}

const aliasedRecords = new WeakMap<z.ZodType, AliasedRecord>();

export function aliasedRecordOf(schema: unknown): AliasedRecord | undefined {
  return aliasedRecords.get(schema as z.ZodType);
}

export const JobTitleRef = record({ JobTitleId: opt(int), JobTitleName: opt(str) });
