import type postgres from 'postgres';
import { commentStatement, tableDocs, VIEW_NAMES, viewDocs, type RelationDocs } from './descriptions.ts';

/**
 * The warehouse's COMMENTs follow descriptions.ts, their one source: after the migrations, every table, view and
 * column whose comment differs from its description gets the description. A changed description needs no
 * migration; a warehouse whose comments already match is only read.
 */

/** Postgres keeps the first 63 bytes of a longer identifier: a flattened column's name may be cut. */
const stored = (name: string) => name.slice(0, 63);

interface Present {
  doc: string | null;
  columns: Map<string, { doc: string | null; type: string }>;
}

async function presentComments(sql: postgres.Sql, schema: string): Promise<Map<string, Present>> {
  const rows = await sql<{ name: string; doc: string | null; column: string; type: string; coldoc: string | null }[]>`
    select c.relname as name, obj_description(c.oid, 'pg_class') as doc, a.attname as column,
      format_type(a.atttypid, a.atttypmod) as type, col_description(c.oid, a.attnum) as coldoc
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'v', 'p')`;
  const present = new Map<string, Present>();
  for (const r of rows) {
    const p = present.get(r.name) ?? { doc: r.doc, columns: new Map() };
    p.columns.set(r.column, { doc: r.coldoc, type: r.type });
    present.set(r.name, p);
  }
  return present;
}

/** The statements that make the present comments say what the descriptions do. */
function differing(schema: string, wanted: readonly RelationDocs[], present: Map<string, Present>): string[] {
  return wanted.flatMap((r) => {
    const p = present.get(r.name);
    if (!p) return [];
    const own = p.doc === r.doc ? [] : [commentStatement(schema, r, undefined, r.doc)];
    const columns = [...r.columns]
      .filter(([c, doc]) => p.columns.has(stored(c)) && p.columns.get(stored(c))!.doc !== doc)
      .map(([c, doc]) => commentStatement(schema, r, stored(c), doc));
    return [...own, ...columns];
  });
}

/** Writes the descriptions whose comments differ; answers how many comments it wrote. */
export async function ensureComments(sql: postgres.Sql, schema: string): Promise<number> {
  const present = await presentComments(sql, schema);
  const views: Record<string, Record<string, string>> = {};
  for (const name of VIEW_NAMES) {
    const p = present.get(name);
    if (p) views[name] = Object.fromEntries([...p.columns].map(([c, { type }]) => [c, type]));
  }
  const statements = differing(schema, [...tableDocs(), ...viewDocs(views)], present);
  if (statements.length > 0)
    await sql.begin(async (tx) => {
      for (const s of statements) await tx.unsafe(s);
    });
  return statements.length;
}
