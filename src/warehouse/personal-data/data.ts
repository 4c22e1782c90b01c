import type { Target } from '../targets.ts';
import type { PersonalCatalog, PersonalKind } from './catalog.ts';

/**
 * What the personal-data functions are given by the catalog (resources/index.ts): where each personal field lands,
 * the names the fields go by in records and their kinds, and the stream targets (the tables with `_extra`, and the
 * path of each list stored as child rows, which names the fields of its elements).
 */
export interface PersonalData {
  readonly catalog: PersonalCatalog;
  readonly names: Readonly<Record<string, string>>;
  readonly kinds: Readonly<Record<string, PersonalKind>>;
  /** Each stream's target by the stream's name (and the forms list's, written from envelopes, by its table's). */
  readonly targets: Readonly<Record<string, Target>>;
}

/** A table holding `_extra`: the prefix of its fields' paths, and for a record's table its lists' tables. */
export interface ExtraTable {
  readonly table: string;
  readonly prefix: string;
  /** A record's table (not its history): each list's table, prefix, and the columns naming the record. */
  readonly lists?: readonly { table: string; prefix: string; on: readonly (readonly [string, string])[] }[];
}

/** Every table of the targets with `_extra`: records' tables first, then their history, then the lists' tables. */
export function extraTables(targets: readonly Target[]): ExtraTable[] {
  const lists = targets.flatMap((t) =>
    (t.children ?? []).map((c) => ({
      table: c.table,
      prefix: `${c.path}.`,
      on: (c.parentColumns ?? t.key).map((col, i) => [col, t.key[i]!] as const),
    })),
  );
  const out: ExtraTable[] = [
    ...targets.map((t) => ({
      table: t.table,
      prefix: '',
      lists: lists.filter((l) => t.children?.some((c) => c.table === l.table)),
    })),
    ...targets.flatMap((t) => (t.history ? [{ table: t.history, prefix: '' }] : [])),
    ...lists.map((l) => ({ table: l.table, prefix: l.prefix })),
  ];
  const seen = new Set<string>();
  return out.filter((e) => !seen.has(e.table) && seen.add(e.table));
}
