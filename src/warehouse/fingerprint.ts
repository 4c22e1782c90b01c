import { sha256Hex32 } from './digest.ts';
import { encodedInstant } from './encoding.ts';
import { tableInfo, type Row, type TableInfo } from './catalog.ts';
import { mapRecord, type MappedItem } from './mapper.ts';
import type { MappedPage } from './page-map.ts';
import type { Target } from './targets.ts';

/**
 * The content fingerprint (`_hash`) of a row and its child rows: what decides whether a stored row changed. Its
 * format is pinned (test/warehouse/fingerprint.test.ts): changing it rewrites every stored row once.
 */

/** Hash of everything a row says, bookkeeping aside, and of its child rows (in column order, so stable). */
function contentHash(
  table: TableInfo,
  row: Row,
  children: readonly Row[][],
  childTables: readonly TableInfo[],
): string {
  const kids: unknown[][][] = [];
  for (let i = 0; i < children.length; i++) {
    const t = childTables[i]!;
    kids.push(children[i]!.map((r) => content(t, r)));
  }
  return sha256Hex32(JSON.stringify([content(table, row), kids]));
}

/** A row's hashed values in column order; instants as ISO text. */
function content(t: TableInfo, r: Row): unknown[] {
  const out = new Array<unknown>(t.hashed.length);
  for (let i = 0; i < t.hashed.length; i++) {
    const v = r[t.hashed[i]!];
    out[i] = v instanceof Date ? encodedInstant(v) : (v ?? null);
  }
  return out;
}

/** A record mapped to its rows with their content fingerprint (`_hash`): mapRecord, then fingerprint. */
export function mapItem(
  target: Target,
  companyKey: string,
  input: Record<string, unknown>,
  envelope?: Record<string, unknown>,
): MappedItem {
  const m = mapRecord(target, input, { companyKey, extras: envelope });
  fingerprint(target, m);
  return m;
}

/** Sets `_hash` of a mapped record's row: what decides whether its stored row changed. */
export function fingerprint(target: Target, m: MappedItem): void {
  const tables = tablesOf(target);
  m.row._hash = contentHash(tables.table, m.row, m.children, tables.children);
}

const tablesByTarget = new WeakMap<Target, { table: TableInfo; children: readonly TableInfo[] }>();

/** A target's table and child tables, looked up once per target rather than per record. */
function tablesOf(target: Target): { table: TableInfo; children: readonly TableInfo[] } {
  let t = tablesByTarget.get(target);
  if (!t)
    tablesByTarget.set(
      target,
      (t = { table: tableInfo(target.table), children: (target.children ?? []).map((c) => tableInfo(c.table)) }),
    );
  return t;
}

/** Sets `_hash` of every row of a mapped page, its envelope's too. */
export function fingerprintPage(page: MappedPage): void {
  for (const m of page.mapped) fingerprint(page.target, m);
  for (const m of page.envelope?.mapped ?? []) fingerprint(page.envelope!.target, m);
}
