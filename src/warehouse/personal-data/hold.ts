import { tableInfo, type Row } from '../catalog.ts';
import { sha256Hex32 } from '../digest.ts';
import { mapRecord, snake } from '../mapper.ts';
import type { Target } from '../targets.ts';
import { wrappedContentHash } from './hmac.ts';
import type { CompanyPolicy } from './policy.ts';

/**
 * `hold` on the row path: a field no column maps and no class names (a path of `_extra` that neither
 * field_classes nor the catalog names) is not stored. The record's content hash, taken from what the service sent,
 * is keyed and marked with which paths were held (`<keyed hash>~<tag>`), so that:
 *   - a record read again unchanged finds its stored hash (switching to hold, rewrite-held.ts marks stored rows
 *     the same way) and writes nothing;
 *   - once one of those fields is classified, or the company goes back to keep, its next read finds the mark
 *     changed and writes the record, now with that field's values.
 * A field's path: the record's own by name (`BadgeNumber`), a list element's after the list's (`Answers.Comment`).
 */

/** A mapped record, its row and its child rows (in the order of the target's children). */
export interface HeldItem {
  readonly row: Row;
  readonly children: readonly Row[][];
}

/** Whether a path is classified: by field_classes (any class) or by the catalog's names. */
export const classifiedPath = (policy: CompanyPolicy, names: Readonly<Record<string, string>>, path: string) =>
  policy.classes.has(path) || Object.hasOwn(names, path);

/** `extra` without its unclassified fields (null when none is left); their paths go to `held`. */
function withoutHeld(
  extra: Record<string, unknown>,
  prefix: string,
  classified: (path: string) => boolean,
  held: string[],
): Record<string, unknown> | null {
  let out: Record<string, unknown> | undefined;
  for (const k in extra) {
    const path = prefix ? prefix + k : k;
    if (classified(path)) continue;
    held.push(path);
    out ??= { ...extra };
    delete out[k];
  }
  if (!out) return extra;
  for (const _ in out) return out;
  return null;
}

/** Tags by the held paths they stand for: a page's records mostly hold the same few. */
const tags = new Map<string, string>();
const MAX_TAGS = 1024;

/** The mark of a set of held paths: the first 16 hex digits of sha-256 of the paths, sorted, one a line. */
export function heldTag(held: readonly string[]): string {
  const key = [...new Set(held)].sort().join('\n');
  let tag = tags.get(key);
  if (tag === undefined) {
    if (tags.size >= MAX_TAGS) tags.clear();
    tags.set(key, (tag = sha256Hex32(key).slice(0, 16)));
  }
  return tag;
}

/** Holds one mapped record's unclassified fields, its list elements' too, and marks its content hash. */
export function holdRecord(
  m: HeldItem,
  target: Target,
  policy: CompanyPolicy,
  names: Readonly<Record<string, string>>,
): void {
  const classified = (path: string) => classifiedPath(policy, names, path);
  const held: string[] = [];
  const extra = m.row._extra as Record<string, unknown> | null;
  if (extra) m.row._extra = withoutHeld(extra, '', classified, held);
  const lists = target.children ?? [];
  for (let i = 0; i < m.children.length; i++) {
    const prefix = `${lists[i]!.path}.`;
    for (const child of m.children[i]!) {
      const e = child._extra as Record<string, unknown> | null;
      if (e) child._extra = withoutHeld(e, prefix, classified, held);
    }
  }
  if (held.length > 0) m.row._hash = `${wrappedContentHash(policy.hmac!, m.row._hash as string)}~${heldTag(held)}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` without what `leftover` (the part of it no column maps) holds, by the same keys; empty objects stay. */
function subtract(value: Record<string, unknown>, leftover: Record<string, unknown>): Record<string, unknown> {
  const out = { ...value };
  for (const k in leftover) {
    const v = out[k];
    const l = leftover[k];
    if (isObject(v) && isObject(l)) out[k] = subtract(v, l);
    else delete out[k];
  }
  return out;
}

/**
 * A refusal's raw payload under `hold`: a record without its unclassified fields (what the mapper would keep in
 * `_extra`); a list element refused on its own (`{ parent, [list path]: element }`) keeps only the fields its
 * table has a column for.
 */
export function holdRaw(raw: unknown, target: Target, classified: (path: string) => boolean): unknown {
  if (!isObject(raw)) return raw;
  const list = isObject(raw.parent) ? target.children?.find((c) => isObject(raw[c.path])) : undefined;
  if (list) {
    const table = tableInfo(list.table);
    const el = raw[list.path] as Record<string, unknown>;
    const kept = Object.keys(el).filter((k) => table.byName.has(snake(k)) || classified(`${list.path}.${k}`));
    return { ...raw, [list.path]: Object.fromEntries(kept.map((k) => [k, el[k]])) };
  }
  let extra: unknown;
  try {
    extra = mapRecord(target, raw, { companyKey: '-' }).row._extra;
  } catch {
    return {};
  }
  if (!isObject(extra)) return raw;
  const held = Object.fromEntries(Object.entries(extra).filter(([k]) => !classified(k)));
  return Object.keys(held).length === 0 ? raw : subtract(raw, held);
}
