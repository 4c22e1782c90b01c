import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { streams } from '../resources/index.ts';
import { streamSchedules, type ScheduleOptions } from '../queue/schedules.ts';
import type { Warehouse } from '../warehouse/connection.ts';

/**
 * A dbt source package for the warehouse, generated from what the warehouse says of itself (its COMMENTs, column
 * types and primary keys) and from each stream's job schedule: `dbt_project.yml`, the `workforce` source with
 * every data table and view, a key test per table, and one staging model per data table selecting its current
 * rows under analysts' names. The models' SQL has no Jinja beyond source() and config(). `wfsync dbt --out DIR`
 * writes it; `npm run docs` writes it into docs/dbt/.
 */

export const DBT_DOC_DIR = fileURLToPath(new URL('../../docs/dbt/', import.meta.url));
export const DBT_PACKAGE = 'workforce_source';
export const KEY_TEST = 'workforce_unique_key';

interface Column {
  name: string;
  type: string;
  doc: string | null;
}

interface Relation {
  name: string;
  kind: 'table' | 'view';
  doc: string | null;
  columns: Column[];
  /** Primary key columns, in key order (none for a view). */
  key: string[];
}

/** The schema's tables and views as the catalog describes them. */
export async function readCatalog(wh: Warehouse): Promise<Relation[]> {
  const rows = await wh.sql<
    {
      name: string;
      kind: string;
      doc: string | null;
      column: string;
      type: string;
      coldoc: string | null;
      keypos: number | null;
    }[]
  >`
    select c.relname as name, case c.relkind when 'v' then 'view' else 'table' end as kind,
      obj_description(c.oid, 'pg_class') as doc, a.attname as column,
      format_type(a.atttypid, a.atttypmod) as type, col_description(c.oid, a.attnum) as coldoc,
      array_position(i.indkey::int2[], a.attnum)::int as keypos
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    left join pg_index i on i.indrelid = c.oid and i.indisprimary
    where n.nspname = ${wh.schema} and c.relkind in ('r', 'v', 'p')
    order by c.relname, a.attnum`;
  const out = new Map<string, Relation & { keyAt: [number, string][] }>();
  for (const r of rows) {
    let rel = out.get(r.name);
    if (!rel)
      out.set(
        r.name,
        (rel = { name: r.name, kind: r.kind as Relation['kind'], doc: r.doc, columns: [], key: [], keyAt: [] }),
      );
    rel.columns.push({ name: r.column, type: r.type, doc: r.coldoc });
    if (r.keypos !== null) rel.keyAt.push([r.keypos, r.column]);
  }
  return [...out.values()].map(({ keyAt, ...rel }) => ({
    ...rel,
    key: keyAt.sort((a, b) => a[0] - b[0]).map(([, c]) => c),
  }));
}

/** Every table a stream writes (its own, its children's, its history), with the streams that write it. */
export function dataTables(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const add = (table: string | undefined, stream: string) =>
    table && out.set(table, [...(out.get(table) ?? []), stream]);
  for (const s of streams) {
    add(s.target.table, s.name);
    add(s.target.history, s.name);
    for (const c of s.target.children ?? []) add(c.table, s.name);
    add(s.target.envelopeTarget?.target.table, s.name);
  }
  return out;
}

type Period = { count: number; period: 'minute' | 'hour' | 'day' };

function period(minutes: number): Period {
  if (minutes % 1440 === 0) return { count: minutes / 1440, period: 'day' };
  if (minutes % 60 === 0) return { count: minutes / 60, period: 'hour' };
  return { count: minutes, period: 'minute' };
}

/**
 * Freshness as the status page judges it: late (warn) past 1.5 intervals of the job that runs the table's
 * stream, stale (error) past 2. A table several streams write takes the most frequent.
 */
function freshnessOf(
  tableStreams: readonly string[],
  schedules: ReturnType<typeof streamSchedules>,
): { warn_after: Period; error_after: Period } | undefined {
  const intervals = tableStreams
    .map((s) => schedules.get(s)?.intervalMs)
    .filter((ms): ms is number => ms !== undefined && Number.isFinite(ms));
  if (intervals.length === 0) return undefined;
  const minutes = Math.min(...intervals) / 60_000;
  return { warn_after: period(Math.ceil(minutes * 1.5)), error_after: period(Math.ceil(minutes * 2)) };
}

const TIMESTAMP = 'timestamp with time zone';
/** Bookkeeping columns a staging model renames; `_hash` and `_deleted_at` stay behind (rows are current). */
const BOOKKEEPING_NAMES: Record<string, string | null> = {
  _synced_at: 'synced_at',
  _extra: 'extra_fields',
  _key: 'record_key',
  _ord: 'position',
  _hash: null,
  _deleted_at: null,
};

/** An analyst's name for a column: booleans `is_…`, instants `…_at`, bookkeeping without its underscore. */
export function analystName(column: string, type: string): string | null {
  if (column in BOOKKEEPING_NAMES) return BOOKKEEPING_NAMES[column]!;
  if (type === 'boolean' && !/^(is|has)_/.test(column)) return `is_${column}`;
  if (type === TIMESTAMP && !column.endsWith('_at'))
    return `${column.replace(/_instant$/, '').replace(/_(date_time|time_stamp|date|time)$/, '')}_at`;
  return column;
}

/** Each kept column of a staging model with its name there; a name two columns would share stays as it was. */
function stagingColumns(rel: Relation): { column: Column; as: string }[] {
  const named = rel.columns.flatMap((column) => {
    const as = analystName(column.name, column.type);
    return as === null ? [] : [{ column, as }];
  });
  const taken = new Map<string, number>();
  for (const n of named) taken.set(n.as, (taken.get(n.as) ?? 0) + 1);
  return named.map((n) => ({
    column: n.column,
    as: (taken.get(n.as) ?? 0) > 1 || rel.columns.some((c) => c.name === n.as && c !== n.column) ? n.column.name : n.as,
  }));
}

const quoted = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

function stagingSql(rel: Relation, source: string): string {
  const cols = stagingColumns(rel).map(({ column, as }) =>
    as === column.name ? `    ${quoted(column.name)}` : `    ${quoted(column.name)} as ${quoted(as)}`,
  );
  const current = rel.columns.some((c) => c.name === '_deleted_at') ? '\nwhere _deleted_at is null' : '';
  return `{{ config(materialized='view') }}\n\nselect\n${cols.join(',\n')}\nfrom {{ source('${source}', '${rel.name}') }}${current}\n`;
}

const described = (doc: string | null) => (doc ? { description: doc } : {});

/** The package's files, by path under its root. */
export function dbtPackage(
  catalog: readonly Relation[],
  schedule: ScheduleOptions,
  schema: string,
): Map<string, string> {
  const tables = dataTables();
  const schedules = streamSchedules(schedule, new Date(0));
  const data = catalog.filter((r) => r.kind === 'table' && tables.has(r.name));
  const views = catalog.filter((r) => r.kind === 'view' && r.name.startsWith('v_'));
  const source = 'workforce';
  const files = new Map<string, string>();
  const head =
    '# Generated by wfsync dbt (npm run docs writes docs/dbt/): edit the warehouse descriptions, not this file.\n';

  files.set(
    'dbt_project.yml',
    head +
      stringify({
        name: DBT_PACKAGE,
        version: '1.0.0',
        'config-version': 2,
        'require-dbt-version': '>=1.5.0',
        'model-paths': ['models'],
        'macro-paths': ['macros'],
        models: { [DBT_PACKAGE]: { staging: { '+materialized': 'view' } } },
      }),
  );

  const sourceTable = (rel: Relation) => {
    const hasSyncedAt = rel.columns.some((c) => c.name === '_synced_at');
    const freshness = hasSyncedAt ? freshnessOf(tables.get(rel.name) ?? [], schedules) : undefined;
    return {
      name: rel.name,
      ...described(rel.doc),
      ...(hasSyncedAt ? { loaded_at_field: '_synced_at' } : {}),
      freshness: freshness ?? null,
      ...(rel.key.length ? { data_tests: [{ [KEY_TEST]: { columns: rel.key } }] } : {}),
      columns: rel.columns.map((c) => ({
        name: c.name,
        data_type: c.type,
        ...described(c.doc),
        ...(rel.key.includes(c.name) ? { data_tests: ['not_null'] } : {}),
      })),
    };
  };
  files.set(
    'models/staging/src_workforce.yml',
    head +
      stringify({
        version: 2,
        sources: [
          {
            name: source,
            schema,
            description: `The workforce-sync warehouse: every data table (current rows have _deleted_at null) and the analyst views (v_*).`,
            tables: [...data, ...views].map(sourceTable),
          },
        ],
      }),
  );

  files.set(
    'models/staging/stg_workforce.yml',
    head +
      stringify({
        version: 2,
        models: data.map((rel) => ({
          name: `stg_${source}__${rel.name}`,
          description: `${rel.doc ?? rel.name}${rel.columns.some((c) => c.name === '_deleted_at') ? ' Current rows only (not deleted at the source).' : ''}`,
          columns: stagingColumns(rel).map(({ column, as }) => ({ name: as, ...described(column.doc) })),
        })),
      }),
  );
  for (const rel of data) files.set(`models/staging/stg_${source}__${rel.name}.sql`, stagingSql(rel, source));

  files.set(
    `macros/test_${KEY_TEST}.sql`,
    `-- Generated by wfsync dbt. Fails with each combination of the key columns that more than one row holds.
{% test ${KEY_TEST}(model, columns) %}
select {{ columns | join(', ') }}, count(*) as rows_with_key
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endtest %}
`,
  );
  return files;
}

/** Writes the package under `dir`; with `replace`, what was there before goes first (a folder of its own). */
export function writeDbtPackage(dir: string, files: ReadonlyMap<string, string>, o: { replace?: boolean } = {}): void {
  if (o.replace) rmSync(dir, { recursive: true, force: true });
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** The package of this warehouse. */
export async function warehouseDbtPackage(wh: Warehouse, schedule: ScheduleOptions): Promise<Map<string, string>> {
  return dbtPackage(await readCatalog(wh), schedule, wh.schema);
}
