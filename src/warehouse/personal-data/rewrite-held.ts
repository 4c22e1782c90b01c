import type { Warehouse } from '../connection.ts';
import { tableInfo } from '../catalog.ts';
import { extraTables, type ExtraTable, type PersonalData } from './data.ts';
import { newFieldsOf } from './field-classes.ts';
import { personalHmac, wrappedContentHashSql } from './hmac.ts';
import { holdRaw } from './hold.ts';
import { REWRITE_BATCH, runBatches, type RewriteCounts } from './rewrite.ts';

/**
 * Switching a company to `hold` removes the values of its unclassified fields already stored, in SQL and without
 * a request to the service: from `_extra` of every table (records, their history and their lists), with each
 * record's content hash marked as the row path marks it (hold.ts), so the next sync finds the rows unchanged and
 * no new history version is written; and from rejects' raw payloads. Batched and resumable like rewrite.ts.
 */

const q = (name: string) => `"${name}"`;
const lit = (text: string) => `'${text.replace(/'/g, "''")}'`;
/** Parameters after the company: the key's inner pad, and every classified path (field_classes and the catalog). */
const TYPES = ['bytea', 'text[]'];

/** The unclassified paths of a row's `_extra` and its lists' rows (`row`: how the statement names the row). */
function heldPaths(schema: string, e: ExtraTable, row: string): string {
  const own = `"${schema}".held_paths(${row}._extra, ${lit(e.prefix)}, $3)`;
  const lists = (e.lists ?? []).map((l) => {
    const on = l.on.map(([child, parent]) => `c.${q(child)} = ${row}.${q(parent)}`).join(' and ');
    return `array(select p from ${q(schema)}.${q(l.table)} c, unnest("${schema}".held_paths(c._extra, ${lit(l.prefix)}, $3)) p
      where c.company_key = $1 and ${on})`;
  });
  return [own, ...lists].join(' || ');
}

function heldUpdate(schema: string, e: ExtraTable): { table: string; sets: string[]; pending: string[] } {
  const info = tableInfo(e.table);
  const sets = [`_extra = "${schema}".held_extra(x._extra, ${lit(e.prefix)}, $3)`];
  if (!info.byName.has('_hash'))
    return { table: e.table, sets, pending: [`cardinality(${heldPaths(schema, e, q(e.table))}) > 0`] };
  const held = heldPaths(schema, e, 'x');
  sets.push(
    `_hash = case when cardinality(${held}) > 0 then ${wrappedContentHashSql('x._hash', '$2')} || '~' || "${schema}".held_tag(${held}) else x._hash end`,
  );
  return {
    table: e.table,
    sets,
    pending: [`(_hash not like '%~%' and cardinality(${heldPaths(schema, e, q(e.table))}) > 0)`],
  };
}

/** Every path classified for a company: its own classes, the default's, and the catalog's names. */
async function classifiedPaths(wh: Warehouse, pd: PersonalData, companyKey: string): Promise<string[]> {
  const { classes } = await newFieldsOf(wh, companyKey);
  return [...new Set([...classes.keys(), ...Object.keys(pd.names)])];
}

/** Removes a company's stored values of unclassified fields; rows rewritten per table. */
export async function rewriteHeld(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  batch = REWRITE_BATCH,
): Promise<RewriteCounts> {
  const classified = await classifiedPaths(wh, pd, companyKey);
  const params = [companyKey, personalHmac(wh.personalDataKey()).pads.inner, classified];
  const counts: RewriteCounts = {};
  // Records before their lists: a record's mark names what its lists' rows held.
  for (const e of extraTables(Object.values(pd.targets))) {
    const n = await runBatches(wh, heldUpdate(wh.schema, e), params, batch, TYPES);
    if (n > 0) counts[e.table] = n;
  }
  const rejects = await holdRejects(wh, pd, companyKey, new Set(classified));
  if (rejects > 0) counts.sync_rejects = rejects;
  return counts;
}

/** Rejects' raw payloads without their unclassified fields, as the row path stores them under hold. */
async function holdRejects(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  classified: ReadonlySet<string>,
): Promise<number> {
  const rows = await wh.sql<{ id: number; stream: string; raw: unknown }[]>`
    select id, stream, raw from ${wh.sql(wh.schema)}.sync_rejects where company_key = ${companyKey} and raw is not null`;
  let n = 0;
  for (const r of rows) {
    const target = pd.targets[r.stream];
    if (!target) continue;
    const held = holdRaw(r.raw, target, (p) => classified.has(p));
    if (JSON.stringify(held) === JSON.stringify(r.raw)) continue;
    await wh.sql`update ${wh.sql(wh.schema)}.sync_rejects set raw = ${wh.sql.json(held as never)} where id = ${r.id}`;
    n++;
  }
  return n;
}
