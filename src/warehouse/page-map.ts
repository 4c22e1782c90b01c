import { dedupe, mapRecord, type MappedItem, type PageContext } from './mapper.ts';
import { keyText } from './record-keys.ts';
import { getPath } from './paths.ts';
import type { Row } from './catalog.ts';
import type { Target } from './targets.ts';

/**
 * A page mapped once: its records to rows (last of each key wins, in key order), the key of every record as the
 * page gave it, and the key of every record or child element refused. The sync reads the keys from here; the
 * page write writes the rows.
 */

/** A record refused (its schema failed, or a child element could not be a row), with why. */
export interface Refusal {
  raw: unknown;
  reason: string;
}

/** A refusal with the key its row would have had; null when its payload gives none. */
export interface KeyedRefusal extends Refusal {
  key: string | null;
}

/** A page's records mapped to rows: last of each key wins, in key order (see compareKeys). */
export interface MappedPage {
  readonly target: Target;
  readonly companyKey: string;
  readonly mapped: MappedItem[];
  /** The key text of each record as given, in page order: what the page says is there. */
  readonly keys: string[];
  readonly envelope?: { target: Target; mapped: MappedItem[] };
  /** Records that failed their schema, in page order, each with its key. */
  readonly refused: KeyedRefusal[];
  /** Child elements that could not be rows, each with its parent's key. */
  readonly childRejects: KeyedRefusal[];
}

/** Maps a page's records (and its envelope's) to rows, without fingerprints, and keys its refusals. */
export function mapPage(
  target: Target,
  items: readonly object[],
  page: PageContext,
  refused: readonly Refusal[] = [],
): MappedPage {
  const { mapped, keys } = mapAll(target, items, page);
  sortByKey(mapped, target.key);
  const e = envelopeItems(target, page.extras);
  const childRejects = mapped.flatMap((m) =>
    m.rejects.map((r) => ({ ...r, key: childRejectKey(target, page, r.raw) })),
  );
  return {
    target,
    companyKey: page.companyKey,
    mapped,
    keys,
    refused: refused.map((r) => ({ ...r, key: refusedRecordKey(target, r.raw, page) ?? null })),
    childRejects,
    ...(e ? { envelope: { target: e.target, mapped: mapAll(e.target, e.items, page).mapped } } : {}),
  };
}

function mapAll(t: Target, items: readonly object[], page: PageContext): { mapped: MappedItem[]; keys: string[] } {
  const all = items.map((it) => mapRecord(t, it as Record<string, unknown>, page));
  return { mapped: dedupe(all, (m) => m.keyText), keys: all.map((m) => m.keyText) };
}

function envelopeItems(
  target: Target,
  extras: Record<string, unknown> | undefined,
): { target: Target; items: object[] } | undefined {
  const e = target.envelopeTarget;
  if (!e || !extras || extras[e.fields[0]!] == null) return undefined;
  return { target: e.target, items: [Object.fromEntries(e.fields.map((f) => [f, extras[f] ?? null]))] };
}

/** One order for a table's keys in every writer (numbers as numbers), so new rows are inserted in it too. */
function compareKeys(a: Row, b: Row, key: readonly string[]): number {
  for (let i = 0; i < key.length; i++) {
    const x = a[key[i]!];
    const y = b[key[i]!];
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/** Sorts mapped items by key (compareKeys), leaving a page that came in key order as it is. */
function sortByKey(mapped: MappedItem[], key: readonly string[]): void {
  for (let i = 1; i < mapped.length; i++) {
    if (compareKeys(mapped[i - 1]!.row, mapped[i]!.row, key) > 0) {
      mapped.sort((a, b) => compareKeys(a.row, b.row, key));
      return;
    }
  }
}

/**
 * The key of a record that failed its schema, where its raw payload gives one (its key columns, or the fields its
 * key is made from); undefined when it gives none.
 */
function refusedRecordKey(target: Target, raw: unknown, page: PageContext): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  try {
    const m = mapRecord(target, raw as Record<string, unknown>, page);
    if (target.keyFields) {
      const fields = target.keyFields.flatMap((f) => (typeof f === 'string' ? [f] : f));
      if (!fields.some((f) => getPath(raw, f) != null)) return undefined;
    } else if (target.key.some((k) => m.row[k] == null)) return undefined;
    return m.keyText;
  } catch {
    return undefined;
  }
}

/** A child element that could not be a row is refused under its parent's key (mapper.ts mapChild names the parent). */
function childRejectKey(target: Target, page: PageContext, raw: unknown): string | null {
  const parent = (raw as { parent?: unknown } | null)?.parent;
  if (parent && typeof parent === 'object' && target.key.every((k) => (parent as Row)[k] != null))
    return keyText(parent as Row, target.key);
  return refusedRecordKey(target, raw, page) ?? null;
}
