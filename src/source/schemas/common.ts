import { z } from 'zod';

/** Date-only (`yyyy-MM-dd`) or date-time with an optional offset, as the service sends them. */
export const ISO_DATE_OR_DATETIME =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,7})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export const int = z.number().int();
export const str = z.string();
export const bool = z.boolean();
export const isoDate = z.string().regex(ISO_DATE_OR_DATETIME, 'expected an ISO 8601 date or date-time');

/** Fields the spec lists as int but which carry name text: accept either, keep text. */
export const nameText = z.union([z.string(), z.number()]).transform(String);

/**
 * Schemas with a transform that hands back the value it was given when that value is already what it makes, by
 * the test for such a value: what parsing may skip (source/in-place.ts).
 */
const keptWhen = new WeakMap<z.ZodType, (value: unknown) => boolean>([[nameText, (v) => typeof v === 'string']]);

export function keptWhenOf(schema: unknown): ((value: unknown) => boolean) | undefined {
  return keptWhen.get(schema as z.ZodType);
}

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
  for (const [k, v] of Object.entries(value)) {
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
