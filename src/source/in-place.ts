import type { z } from 'zod';
import { aliasedRecordOf, keptWhenOf } from './schemas/common.ts';

/**
 * Whether a record parsed by its zod schema would come out as it went in. zod builds a new object for every
 * object it parses (a new result and a small object per field): two kilobytes a record, a quarter of what a
 * page allocates on its way to the warehouse. A record the check accepts is used as parsed, as it is; any
 * other goes through zod, which then decides, with its own messages.
 *
 * The check is made once per schema from the schema's definition. It accepts a value only when zod would
 * accept it and return the same value: the same primitives, and objects and arrays with the same content in
 * the same order (a loose object's declared fields first in the schema's order, then the others). A part of a
 * schema it does not know (a transform, a refinement) is asked of zod itself, and passes only when zod returns
 * the very value it was given, as a transform of a string to a string does.
 *
 * Order counts at every level, the top of a record included: a nested value may be stored whole (jsonb), and
 * `_extra` gathers what no column takes in the order the mapper meets the record's fields; the fingerprint
 * reads both in order.
 */

export type InPlace = (value: unknown) => boolean;

type Schema = z.core.$ZodType;

interface Def {
  readonly type: string;
  readonly checks?: readonly { _zod: { def: { check: string; format?: string; pattern?: RegExp; minimum?: number } } }[];
  readonly innerType?: Schema;
  readonly element?: Schema;
  readonly options?: readonly Schema[];
  readonly shape?: Readonly<Record<string, Schema>>;
  readonly catchall?: Schema;
}

const made = new WeakMap<Schema, InPlace>();

/** The check for values of `schema`, made on first use. */
export function inPlace(schema: Schema): InPlace {
  let check = made.get(schema);
  if (!check) made.set(schema, (check = compile(schema)));
  return check;
}

const defOf = (s: Schema) => s._zod.def as unknown as Def;

function compile(schema: Schema): InPlace {
  const kept = keptWhenOf(schema);
  if (kept) return kept;
  const def = defOf(schema);
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'string':
      return stringCheck(checks) ?? unchanged(schema);
    case 'number':
      return numberCheck(checks) ?? unchanged(schema);
    case 'boolean':
      return checks.length === 0 ? (v) => typeof v === 'boolean' : unchanged(schema);
    case 'unknown':
      return () => true;
    case 'enum':
    case 'literal': {
      const values = schema._zod.values!;
      return (v) => values.has(v as never);
    }
    case 'optional': {
      const inner = inPlace(def.innerType!);
      return (v) => v === undefined || inner(v);
    }
    case 'nullable': {
      const inner = inPlace(def.innerType!);
      return (v) => v === null || inner(v);
    }
    case 'array':
      return checks.length === 0 ? arrayCheck(inPlace(def.element!)) : unchanged(schema);
    case 'union': {
      // zod answers with the first option that parses; any option that keeps the value keeps it.
      const options = def.options!.map(inPlace);
      return (v) => {
        for (const o of options) if (o(v)) return true;
        return false;
      };
    }
    case 'object':
      return checks.length === 0 && def.catchall && defOf(def.catchall).type === 'unknown' ? looseObjectCheck(def.shape!) : unchanged(schema);
    case 'pipe':
      return aliasedCheck(schema) ?? unchanged(schema);
    default:
      return unchanged(schema);
  }
}

type Check = NonNullable<Def['checks']>[number];

function stringCheck(checks: readonly Check[]): InPlace | undefined {
  const tests: ((s: string) => boolean)[] = [];
  for (const c of checks) {
    const d = c._zod.def;
    if (d.check === 'string_format' && d.format === 'regex' && d.pattern) {
      const pattern = d.pattern;
      tests.push((s) => {
        pattern.lastIndex = 0;
        return pattern.test(s);
      });
    } else if (d.check === 'min_length' && typeof d.minimum === 'number') {
      const min = d.minimum;
      tests.push((s) => s.length >= min);
    } else return undefined;
  }
  return (v) => {
    if (typeof v !== 'string') return false;
    for (const t of tests) if (!t(v)) return false;
    return true;
  };
}

function numberCheck(checks: readonly Check[]): InPlace | undefined {
  if (checks.length === 0) return (v) => typeof v === 'number' && Number.isFinite(v);
  if (checks.length === 1 && checks[0]!._zod.def.check === 'number_format' && checks[0]!._zod.def.format === 'safeint') {
    return (v) => Number.isSafeInteger(v);
  }
  return undefined;
}

function arrayCheck(element: InPlace): InPlace {
  return (v) => {
    if (!Array.isArray(v)) return false;
    for (const e of v) if (!element(e)) return false;
    return true;
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A loose object (its other fields kept) comes out of zod with its declared fields first, in the schema's order,
 * then the others in the order they came: the value keeps its order when it already has that one. A declared
 * field that is absent stays absent only when it may be.
 */
function looseObjectCheck(shape: Readonly<Record<string, Schema>>): InPlace {
  const fields = Object.keys(shape);
  const position = new Map(fields.map((f, i) => [f, i]));
  const checks = fields.map((f) => inPlace(shape[f]!));
  const mayBeAbsent = fields.map((f) => shape[f]!._zod.optin === 'optional' && shape[f]!._zod.optout === 'optional');
  return (v) => {
    if (!isRecord(v)) return false;
    let last = -1;
    let others = false;
    let present = 0;
    for (const k in v) {
      if (k === '__proto__') return false;
      const at = position.get(k);
      if (at === undefined) {
        others = true;
        continue;
      }
      if (others || at < last) return false;
      last = at;
      present++;
      if (!checks[at]!(v[k])) return false;
    }
    if (present === fields.length) return true;
    for (let i = 0; i < fields.length; i++) if (!(fields[i]! in v) && !mayBeAbsent[i]) return false;
    return true;
  };
}

/**
 * A record whose fields the service may send under other names: zod renames them first. A value that uses none
 * of those names comes out of the renaming as it went in.
 */
function aliasedCheck(schema: Schema): InPlace | undefined {
  const aliased = aliasedRecordOf(schema);
  if (!aliased) return undefined;
  const object = inPlace(aliased.object as Schema);
  const aliases = Object.keys(aliased.toCanonical);
  return (v) => {
    if (!isRecord(v)) return false;
    for (const a of aliases) if (a in v) return false;
    return object(v);
  };
}

/** What the check does not know: zod parses the value, which is kept when zod hands back that very value. */
function unchanged(schema: Schema): InPlace {
  const s = schema as z.ZodType;
  return (v) => {
    if (typeof v === 'object' && v !== null) return false;
    const r = s.safeParse(v);
    return r.success && Object.is(r.data, v);
  };
}
