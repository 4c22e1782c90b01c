import { instantText } from './instant-text.ts';
import { sha256Hex32 } from './digest.ts';
import { atPath, splitPath } from './paths.ts';
import type { Row } from './catalog.ts';
import type { KeyField } from './targets.ts';

/** How a row is named: the text of its key columns, and the hashed key of a record that has no id. */

export function keyText(row: Row, key: readonly string[]): string {
  if (key.length === 1) {
    const v = row[key[0]!];
    return v == null ? '[null]' : `[${JSON.stringify(String(v))}]`;
  }
  return JSON.stringify(key.map((k) => (row[k] == null ? null : String(row[k]))));
}

const OFFSET_DATETIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

/** The shortest text OFFSET_DATETIME matches: `yyyy-MM-ddTHH:mmZ`. */
const OFFSET_DATETIME_MIN_LENGTH = 17;
const HYPHEN = 45;

/** Key parts compare by meaning: one instant written with two offsets is one key. */
function keyPart(v: unknown): unknown {
  // Most key parts are ids and words: the length and the date's first hyphen rule them out before the match.
  if (
    typeof v === 'string' &&
    v.length >= OFFSET_DATETIME_MIN_LENGTH &&
    v.charCodeAt(4) === HYPHEN &&
    OFFSET_DATETIME.test(v)
  ) {
    const ms = Date.parse(v);
    if (!Number.isNaN(ms)) return instantText(ms);
  }
  return v ?? null;
}

/** Each identifying field as the split paths of its alternatives (a plain field is one): split once per list of fields. */
const keyPathsOf = new WeakMap<readonly KeyField[], readonly (readonly string[])[][]>();

function keyPaths(fields: readonly KeyField[]): readonly (readonly string[])[][] {
  let paths = keyPathsOf.get(fields);
  if (!paths) keyPathsOf.set(fields, (paths = fields.map((f) => (typeof f === 'string' ? [f] : f).map(splitPath))));
  return paths;
}

/** The first of the alternatives that is not null or undefined. */
function firstPresent(item: unknown, alternatives: readonly (readonly string[])[]): unknown {
  for (let i = 0; i < alternatives.length; i++) {
    const v = atPath(item, alternatives[i]!);
    if (v != null) return v;
  }
  return undefined;
}

/** sha-256 hex (first 32) of the identifying fields of a record that has no id. */
export function hashKey(item: unknown, fields: readonly KeyField[]): string {
  const paths = keyPaths(fields);
  const parts = new Array<unknown>(paths.length);
  for (let i = 0; i < paths.length; i++) parts[i] = keyPart(firstPresent(item, paths[i]!));
  return sha256Hex32(JSON.stringify(parts));
}
