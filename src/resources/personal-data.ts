import type { z } from 'zod';
import {
  PERSONAL_FIELDS,
  PERSONAL_FIELD_NAMES,
  personalFieldNamed,
  type PersonalField,
  type PersonalFieldSpec,
} from '../source/schemas/personal.ts';
import { tableInfo } from '../warehouse/catalog.ts';
import { snake } from '../warehouse/mapper.ts';
import {
  columnsByTable,
  type PersonColumns,
  type PersonalCatalog,
  type PersonalColumn,
  type PersonalKind,
} from '../warehouse/personal-data/catalog.ts';
import type { ChildTarget, Target } from '../warehouse/targets.ts';

/**
 * The personal-data catalog: every column a personal field of the service lands in, found by walking each
 * stream's record schema the way the mapper (warehouse/mapper.ts) flattens records. The fields themselves are
 * named once, in source/schemas/personal.ts.
 */

/** Every name a personal field goes by in records → the field. */
export const PERSONAL_NAMES: Readonly<Record<string, string>> = Object.fromEntries(
  PERSONAL_FIELD_NAMES.flatMap((f) => {
    const spec: PersonalFieldSpec = PERSONAL_FIELDS[f];
    return [f, ...(spec.alsoNamed ?? [])].map((n) => [n, f]);
  }),
);

/** Each personal field's kind: an employee's unless the field says `patient`. */
export const FIELD_KINDS: Readonly<Record<string, PersonalKind>> = Object.fromEntries(
  PERSONAL_FIELD_NAMES.map((f) => [f, (PERSONAL_FIELDS[f] as PersonalFieldSpec).kind ?? 'personal']),
);

type Shape = Record<string, z.ZodType>;
type Unwrapped = { kind: 'object'; shape: Shape } | { kind: 'array'; element: z.ZodType };

interface ZodDef {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Shape;
  element?: z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: ZodDef } })._zod.def;

/** The object or array under optional, nullable, preprocess and transform wrappers; undefined for a scalar. */
function unwrap(schema: z.ZodType | undefined): Unwrapped | undefined {
  for (let s = schema; s; ) {
    const def = defOf(s);
    if (def.type === 'object') return { kind: 'object', shape: def.shape! };
    if (def.type === 'array') return { kind: 'array', element: def.element! };
    if (def.type === 'pipe') return unwrap(def.out) ?? unwrap(def.in);
    s = def.innerType;
  }
  return undefined;
}

interface Place {
  readonly table: string;
  readonly prefix: string;
  /** The path of the object within the record (children: within the child element). */
  readonly path: string;
  readonly shape: Shape;
  /** In a child table: the parent record's place and how a child row names its parent. */
  readonly parent?: { readonly place: Place; readonly on: readonly (readonly [string, string])[] };
  /** Inside an object field of the catalog (IncidentAddress): every part is that field, whatever its name. */
  readonly within?: PersonalField;
}

function column(table: string, name: string): string | undefined {
  const info = tableInfo(table);
  return info.byName.has(name) && !info.derived.has(name) ? name : undefined;
}

/** The columns naming the person whose fields an object holds: its ServiceId and EmployeeNumber. */
function personAt(place: Place, prefix: string, shape: Shape): PersonColumns {
  return {
    serviceId: 'ServiceId' in shape ? column(place.table, `${prefix}service_id`) : undefined,
    employeeNumber: 'EmployeeNumber' in shape ? column(place.table, `${prefix}employee_number`) : undefined,
  };
}

/**
 * Whose a field is: the object's own person, the field `of` names beside it, or (`../X`) the parent record's X.
 * A patient's field is nobody's here: an employee's erasure does not reach it.
 */
function owner(place: Place, spec: PersonalFieldSpec): Pick<PersonalColumn, 'person' | 'parent'> {
  if (spec.kind === 'patient') return { person: {} };
  if (!spec.of) return { person: personAt(place, place.prefix, place.shape) };
  if (spec.of.startsWith('../') && place.parent) {
    const p = place.parent.place;
    const name = spec.of.slice(3);
    const inner = unwrap(p.shape[name]);
    const person = inner?.kind === 'object' ? personAt(p, `${p.prefix}${snake(name)}_`, inner.shape) : {};
    return { person: {}, parent: { table: p.table, on: place.parent.on, person } };
  }
  return { person: { serviceId: column(place.table, place.prefix + snake(spec.of)) } };
}

function visit(place: Place, children: ReadonlyMap<string, ChildTarget>, target: Target, out: PersonalColumn[]): void {
  const info = tableInfo(place.table);
  for (const [k, schema] of Object.entries(place.shape)) {
    const path = place.path ? `${place.path}.${k}` : k;
    const child = place.parent ? undefined : children.get(path);
    if (child) {
      visitChild(place, child, unwrap(schema), target, out);
      continue;
    }
    const name = place.prefix + snake(k);
    const col = column(place.table, name);
    const field = place.within ?? personalFieldNamed(k);
    const inner = unwrap(schema);
    const flattened = inner?.kind === 'object' && !(col && info.byName.get(col)!.sqlType === 'jsonb');
    if (field && col && !flattened) {
      out.push(personalColumn(place, col, field as PersonalField));
    } else if (flattened) {
      const within = field as PersonalField | undefined;
      visit(
        { ...place, prefix: `${name}_`, path, shape: inner.shape, ...(within ? { within } : {}) },
        children,
        target,
        out,
      );
    }
  }
}

/** The catalog's entry of one column carrying `field`, with the date companions that go with it. */
function personalColumn(place: Place, col: string, field: PersonalField): PersonalColumn {
  const info = tableInfo(place.table);
  const local = info.localTimes.find((l) => l.column === col);
  const companions = local ? [local.utcOffset, local.localDate ?? local.instant!] : [];
  const spec: PersonalFieldSpec = PERSONAL_FIELDS[field];
  return {
    table: place.table,
    column: col,
    field,
    kind: spec.kind ?? 'personal',
    sqlType: info.byName.get(col)!.sqlType,
    companions,
    ...owner(place, spec),
  };
}

function visitChild(
  parent: Place,
  child: ChildTarget,
  list: Unwrapped | undefined,
  target: Target,
  out: PersonalColumn[],
): void {
  const element = list?.kind === 'array' ? unwrap(list.element) : undefined;
  if (element?.kind !== 'object') return;
  const parentColumns = child.parentColumns ?? target.key;
  const on = parentColumns.map((c, i) => [c, target.key[i]!] as const);
  const place: Place = {
    table: child.table,
    prefix: '',
    path: '',
    shape: element.shape,
    parent: { place: parent, on },
  };
  visit(place, new Map(), target, out);
  const inner = child.each ? unwrap(element.shape[child.each]) : undefined;
  const innerElement = inner?.kind === 'array' ? unwrap(inner.element) : undefined;
  if (innerElement?.kind === 'object') visit({ ...place, shape: innerElement.shape }, new Map(), target, out);
}

/** The personal columns of a target's table, its child tables and its history, from the schema of its records. */
export function personalColumnsOf(target: Target, item: z.ZodType): PersonalCatalog {
  const root = unwrap(item);
  if (root?.kind !== 'object') return [];
  const out: PersonalColumn[] = [];
  const children = new Map((target.children ?? []).map((c) => [c.path, c]));
  visit({ table: target.table, prefix: '', path: '', shape: root.shape }, children, target, out);
  const history = target.history;
  if (history) out.push(...out.filter((c) => c.table === target.table).map((c) => ({ ...c, table: history })));
  return out;
}

/** The catalog of every stream's target. */
export function catalogOf(targets: readonly Target[]): PersonalCatalog {
  return targets.flatMap((t) => t.personal ?? []);
}

/** Every column holding personal data, by table (history tables and copies included). */
export function personalColumnsByTable(catalog: PersonalCatalog): Record<string, string[]> {
  return columnsByTable(catalog);
}
