import type { z } from 'zod';
import { aliasedRecordOf, pureTransformOf, renameKeys } from './schemas/common.ts';

/**
 * A record as its zod schema would parse it, made without zod wherever that is cheap. zod builds a new object for
 * every object it parses (a new result and a small object per field): more than every later stage of a page's
 * way to the warehouse allocates. The quick parse hands back the record itself when
 * zod would give it back unchanged, and otherwise rebuilds only the objects zod would change: a loose object whose
 * fields came in another order than the schema's, or under a wire alias. Anything else goes to zod, which then
 * decides, with its own messages.
 *
 * Each parse is made once per schema from the schema's definition. It answers only for values zod accepts, and
 * answers what zod returns: the same primitives, and objects and arrays with the same content in the same order
 * (a loose object's declared fields first in the schema's order, then the others as they came). A part of a
 * schema it does not know (a refinement, a transform not declared pure) is asked of zod itself, and passes only when
 * zod returns the very value it was given.
 *
 * Order counts at every level, the top of a record included: a nested value may be stored whole (jsonb), and
 * `_extra` gathers what no column takes in the order the mapper meets the record's fields; the fingerprint reads
 * both in order.
 */

/** What a quick parse answers when zod has to decide: the value is invalid, or the parse cannot vouch for it. */
export const REFUSED: unique symbol = Symbol('refused');

/** The value as zod would parse it (the value itself when zod keeps it), or REFUSED. */
export type QuickParse = (value: unknown) => unknown;

type Schema = z.core.$ZodType;

interface Def {
  readonly type: string;
  readonly checks?: readonly {
    _zod: { def: { check: string; format?: string; pattern?: RegExp; minimum?: number } };
  }[];
  readonly innerType?: Schema;
  readonly element?: Schema;
  readonly options?: readonly Schema[];
  readonly shape?: Readonly<Record<string, Schema>>;
  readonly catchall?: Schema;
}

const made = new WeakMap<Schema, QuickParse>();

/** The quick parse of values of `schema`, made on first use. */
export function quickParse(schema: Schema): QuickParse {
  let parse = made.get(schema);
  if (!parse) made.set(schema, (parse = compile(schema)));
  return parse;
}

const defOf = (s: Schema) => s._zod.def as unknown as Def;

/** A parse that keeps the values `test` accepts and refuses the others. */
const keeping =
  (test: (v: unknown) => boolean): QuickParse =>
  (v) =>
    test(v) ? v : REFUSED;

function compile(schema: Schema): QuickParse {
  const pure = pureTransformOf(schema);
  if (pure) return pureTransformParse(quickParse(pure.input as Schema), pure.transform as (value: unknown) => unknown);
  const def = defOf(schema);
  const checks = def.checks ?? [];
  switch (def.type) {
    case 'string':
      return stringParse(checks) ?? unchanged(schema);
    case 'number':
      return numberParse(checks) ?? unchanged(schema);
    case 'boolean':
      return checks.length === 0 ? keeping((v) => typeof v === 'boolean') : unchanged(schema);
    case 'unknown':
      return (v) => v;
    case 'enum':
    case 'literal': {
      const values = schema._zod.values!;
      return keeping((v) => values.has(v as never));
    }
    case 'optional': {
      const inner = quickParse(def.innerType!);
      return (v) => (v === undefined ? v : inner(v));
    }
    case 'nullable': {
      const inner = quickParse(def.innerType!);
      return (v) => (v === null ? v : inner(v));
    }
    case 'array':
      return checks.length === 0 ? arrayParse(quickParse(def.element!)) : unchanged(schema);
    case 'union':
      return unionParse(def.options!.map(quickParse));
    case 'object':
      return checks.length === 0 && def.catchall && defOf(def.catchall).type === 'unknown'
        ? looseObjectParse(def.shape!)
        : unchanged(schema);
    case 'pipe':
      return aliasedParse(schema) ?? unchanged(schema);
    default:
      return unchanged(schema);
  }
}

type Check = NonNullable<Def['checks']>[number];

function stringParse(checks: readonly Check[]): QuickParse | undefined {
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
  return keeping((v) => {
    if (typeof v !== 'string') return false;
    for (const t of tests) if (!t(v)) return false;
    return true;
  });
}

function numberParse(checks: readonly Check[]): QuickParse | undefined {
  if (checks.length === 0) return keeping((v) => typeof v === 'number' && Number.isFinite(v));
  if (
    checks.length === 1 &&
    checks[0]!._zod.def.check === 'number_format' &&
    checks[0]!._zod.def.format === 'safeint'
  ) {
    return keeping((v) => Number.isSafeInteger(v));
  }
  return undefined;
}

/** The array itself when every element is kept; else a copy holding each element as parsed. */
function arrayParse(element: QuickParse): QuickParse {
  return (v) => {
    if (!Array.isArray(v)) return REFUSED;
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const r = element(v[i]);
      if (r === REFUSED) return REFUSED;
      if (out) out.push(r);
      else if (r !== v[i]) (out = v.slice(0, i)).push(r);
    }
    return out ?? v;
  };
}

/**
 * zod answers with the first option that parses. An option that keeps the value keeps it; a value some option
 * would rebuild is left to zod, since an earlier option the quick parse cannot vouch for may be the one zod takes.
 */
function unionParse(options: readonly QuickParse[]): QuickParse {
  return (v) => {
    for (const o of options) if (o(v) === v) return v;
    return REFUSED;
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A loose object (its other fields kept) comes out of zod with its declared fields first, in the schema's order,
 * then the others in the order they came. The value is kept when it already has that order and its fields are
 * kept; else it is rebuilt in that order. A declared field that is absent stays absent, when it may be.
 */
function looseObjectParse(shape: Readonly<Record<string, Schema>>): QuickParse {
  const fields = Object.keys(shape);
  const position = new Map(fields.map((f, i) => [f, i]));
  const parses = fields.map((f) => quickParse(shape[f]!));
  const mayBeAbsent = fields.map((f) => shape[f]!._zod.optin === 'optional' && shape[f]!._zod.optout === 'optional');
  return (v) => {
    if (!isRecord(v)) return REFUSED;
    let last = -1;
    let others = false;
    let inOrder = true;
    let present = 0;
    // The parsed value of each declared field that parsing changed; REFUSED where it kept the field.
    let changed: unknown[] | undefined;
    for (const k in v) {
      if (k === '__proto__') return REFUSED;
      const at = position.get(k);
      if (at === undefined) {
        others = true;
        continue;
      }
      if (others || at < last) inOrder = false;
      last = at;
      present++;
      const r = parses[at]!(v[k]);
      if (r === REFUSED) return REFUSED;
      if (r !== v[k]) (changed ??= new Array<unknown>(fields.length).fill(REFUSED))[at] = r;
    }
    if (present < fields.length)
      for (let i = 0; i < fields.length; i++) if (!(fields[i]! in v) && !mayBeAbsent[i]) return REFUSED;
    if (inOrder && !changed) return v;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      if (f in v) out[f] = changed && changed[i] !== REFUSED ? changed[i] : v[f];
    }
    for (const k in v) if (!position.has(k)) out[k] = v[k];
    return out;
  };
}

/** The input parsed, then transformed; the value itself when the transform hands back what it was given. */
function pureTransformParse(input: QuickParse, transform: (value: unknown) => unknown): QuickParse {
  return (v) => {
    const r = input(v);
    return r === REFUSED ? REFUSED : transform(r);
  };
}

/** A record whose fields the service may send under other names: renamed as zod renames them, then parsed. */
function aliasedParse(schema: Schema): QuickParse | undefined {
  const aliased = aliasedRecordOf(schema);
  if (!aliased) return undefined;
  const object = quickParse(aliased.object as Schema);
  const aliases = Object.keys(aliased.toCanonical);
  return (v) => {
    if (!isRecord(v)) return REFUSED;
    for (const a of aliases) if (a in v) return object(renameKeys(v, aliased.toCanonical));
    return object(v);
  };
}

/** What the parse does not know: zod parses the value, which is kept when zod hands back that very value. */
function unchanged(schema: Schema): QuickParse {
  const s = schema as z.ZodType;
  return (v) => {
    if (typeof v === 'object' && v !== null) return REFUSED;
    const r = s.safeParse(v);
    return r.success && Object.is(r.data, v) ? v : REFUSED;
  };
}
