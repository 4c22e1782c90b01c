import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import { ident } from './access-policies.ts';
import { grantWorkerShards, onCoordinatorOnly, shardPlacements } from './citus.ts';
import { columnsByTable, type PersonalCatalog } from './personal-data/catalog.ts';

/**
 * The schema analysts read: one view per table of the warehouse's schema, and each `v_*` view again over those,
 * so every role granted a company reads every table and view with `select *`, its companies' rows only. A column
 * the catalog calls personal reads null for a company granted without personal data (the column stays, so every
 * role sees the same columns); `_extra` keeps only the fields classified not personal. Dynamic masking as
 * PostgreSQL Anonymizer does it: a masking schema of views, and the tables out of the analysts' reach.
 *
 * The views belong to a reader role of the warehouse (`<database>_<schema>_reader`, no login) that is not the tables' owner,
 * so the tables' row-level security policies apply to every read through them and filter rows for the role
 * running the query (`current_user`) before any of its own conditions; without a security barrier the views
 * fold into the analyst's query and plan like the tables.
 */

export const analystSchemaOf = (schema: string) => `${schema}_analyst`;
/**
 * The reader role of this database's schema: roles belong to the whole server, so the name carries the database
 * and no owner of another warehouse on the server reads this one through it.
 */
export async function readerRoleOf(sql: postgres.TransactionSql, schema: string): Promise<string> {
  const [row] = await sql<{ db: string }[]>`select current_database() as db`;
  const name = `${row!.db}_${schema}_reader`;
  if (Buffer.byteLength(name) <= 63) return name;
  return `${schema}_reader_${createHash('sha256').update(name).digest('hex').slice(0, 16)}`;
}

/** Columns that may hold a whole record or a service's message about one: personal for the masking. */
const RAW: Readonly<Record<string, readonly string[]>> = {
  sync_rejects: ['raw'],
  push_outbox: ['payload', 'entity_key', 'error'],
};

/** Secrets no analyst reads, whatever its grant: a sealed API key, a sealed SSN. */
const SECRET: Readonly<Record<string, readonly string[]>> = {
  companies: ['api_key_sealed'],
  push_outbox: ['sealed'],
};

const EXTRA = '_extra';
const GRANTS = 'access_grants';
const FIELD_CLASSES = 'field_classes';

/** Postgres keeps the first 63 bytes of a longer name: the column in the database has the shortened one. */
const asStored = (name: string) => Buffer.from(name).subarray(0, 63).toString('utf8');

/** The masked columns of each table: the catalog's personal columns and the raw payloads. */
export function maskedColumns(catalog: PersonalCatalog): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (table: string, column: string) => {
    const set = out.get(table) ?? new Set<string>();
    set.add(asStored(column));
    out.set(table, set);
  };
  for (const [table, columns] of Object.entries(columnsByTable(catalog))) for (const c of columns) add(table, c);
  for (const [table, columns] of Object.entries(RAW)) for (const c of columns) add(table, c);
  return out;
}

interface Column {
  table: string;
  column: string;
  type: string;
}

interface Sources {
  tables: Map<string, Column[]>;
  views: { name: string; definition: string; uses: string[] }[];
  fieldClasses: boolean;
}

/** The tables with a company_key, their columns, and the `v_*` views with their definitions, fully qualified. */
async function sources(sql: postgres.TransactionSql, schema: string): Promise<Sources> {
  const columns = await sql<Column[]>`
    select c.relname as table, a.attname as column, format_type(a.atttypid, a.atttypmod) as type
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'p')
      and exists (select 1 from pg_attribute k where k.attrelid = c.oid and k.attname = 'company_key' and not k.attisdropped)
    order by c.relname, a.attnum`;
  const tables = new Map<string, Column[]>();
  for (const c of columns) tables.set(c.table, [...(tables.get(c.table) ?? []), c]);
  // An empty search_path has pg_get_viewdef qualify every relation with its schema.
  const [{ path } = { path: '' }] = await sql<{ path: string }[]>`select current_setting('search_path') as path`;
  await sql`select set_config('search_path', '', true)`;
  const views = await sql<{ name: string; definition: string; uses: string[] }[]>`
    select v.relname as name, pg_get_viewdef(v.oid) as definition,
      array(select distinct r.relname::text from pg_rewrite w join pg_depend d on d.objid = w.oid and d.classid = 'pg_rewrite'::regclass
            join pg_class r on r.oid = d.refobjid where w.ev_class = v.oid and r.oid <> v.oid and r.relkind = 'v') as uses
    from pg_class v join pg_namespace n on n.oid = v.relnamespace
    where n.nspname = ${schema} and v.relkind = 'v' and v.relname like 'v\\_%'
    order by v.relname`;
  await sql`select set_config('search_path', ${path}, true)`;
  return { tables, views, fieldClasses: tables.has(FIELD_CLASSES) };
}

/**
 * The companies the role reads with personal data, as the function beside the tables' policies' says (no
 * subquery of the grants, which Citus would refuse in a policy): an InitPlan, run once per query.
 */
const personalCompanies = (schema: string) => `(select ${ident(schema)}.granted_personal_companies())::text[]`;

/**
 * `_extra` as a role reads it: whole for a company granted with personal data, else only the fields whose class
 * (the company's own, else the default's) is not personal; an unclassified field is masked like a personal one.
 * The readable fields come from a function too, once per query.
 */
function extraExpression(schema: string, withClasses: boolean): string {
  const personal = personalCompanies(schema);
  if (!withClasses) return `case when t.company_key = any (${personal}) then t.${EXTRA} end`;
  const readable = `(select ${ident(schema)}.granted_readable_fields())::text[]`;
  return `case when t.${EXTRA} is null then null when t.company_key = any (${personal}) then t.${EXTRA}
    else ${ident(schema)}.readable_extra(t.${EXTRA}, t.company_key, ${readable}) end`;
}

function columnExpression(schema: string, c: Column, masked: ReadonlySet<string>, withClasses: boolean): string {
  const name = ident(c.column);
  if (SECRET[c.table]?.includes(c.column)) return `null::${c.type} as ${name}`;
  if (c.column === EXTRA) return `${extraExpression(schema, withClasses)} as ${name}`;
  if (masked.has(c.column))
    return `case when t.company_key = any (${personalCompanies(schema)}) then t.${name} end as ${name}`;
  return `t.${name}`;
}

/** The view of one table: its rows as the tables' policies give them, personal columns masked per company. */
function tableView(schema: string, columns: Column[], masked: ReadonlySet<string>, withClasses: boolean): string {
  const table = columns[0]!.table;
  const list = columns.map((c) => columnExpression(schema, c, masked, withClasses)).join(',\n  ');
  const analyst = ident(analystSchemaOf(schema));
  return `create view ${analyst}.${ident(table)} as select\n  ${list}\nfrom ${ident(schema)}.${ident(table)} t`;
}

/** A `v_*` view again, reading the analyst schema's views where it read the tables and views of the warehouse. */
function analystView(schema: string, name: string, definition: string, relations: ReadonlySet<string>): string {
  const analyst = analystSchemaOf(schema);
  const body = definition
    .replace(new RegExp(`\\b${schema}\\.("?)([a-z_][a-z0-9_]*)\\1`, 'g'), (whole, _q: string, rel: string) =>
      relations.has(rel) ? `${ident(analyst)}.${ident(rel)}` : whole,
    )
    .replace(/;\s*$/, '');
  return `create view ${ident(analyst)}.${ident(name)} as ${body}`;
}

/** Views in an order where each comes after the views it reads. */
function dependencyOrder(views: Sources['views']): Sources['views'] {
  const out: Sources['views'] = [];
  const placed = new Set<string>();
  const names = new Set(views.map((v) => v.name));
  for (let left = [...views]; left.length > 0; ) {
    const ready = left.filter((v) => v.uses.every((u) => placed.has(u) || !names.has(u)));
    if (ready.length === 0) throw new Error(`views that read each other: ${left.map((v) => v.name).join(', ')}`);
    for (const v of ready) placed.add(v.name);
    out.push(...ready);
    left = left.filter((v) => !placed.has(v.name));
  }
  return out;
}

/** Every statement that makes the analyst schema's views, in order. */
function viewStatements(schema: string, src: Sources, catalog: PersonalCatalog): string[] {
  const masked = maskedColumns(catalog);
  const statements: string[] = [];
  for (const [table, columns] of src.tables) {
    statements.push(tableView(schema, columns, masked.get(table) ?? new Set(), src.fieldClasses));
  }
  const relations = new Set([...src.tables.keys(), ...src.views.map((v) => v.name)]);
  for (const v of dependencyOrder(src.views)) statements.push(analystView(schema, v.name, v.definition, relations));
  return statements;
}

/** Describes the masking in each view column's comment, beside the table column's own. */
function commentStatement(schema: string): string {
  const analyst = analystSchemaOf(schema);
  return `do $comments$ declare r record; begin
  for r in
    select format('comment on column %I.%I.%I is %L', ${lit(analyst)}, v.relname, va.attname, d.description) as stmt
    from pg_class v join pg_namespace vn on vn.oid = v.relnamespace and vn.nspname = ${lit(analyst)}
    join pg_attribute va on va.attrelid = v.oid and va.attnum > 0
    join pg_namespace tn on tn.nspname = ${lit(schema)}
    join pg_class t on t.relnamespace = tn.oid and t.relname = v.relname
    join pg_attribute ta on ta.attrelid = t.oid and ta.attname = va.attname
    join pg_description d on d.objoid = t.oid and d.objsubid = ta.attnum and d.classoid = 'pg_class'::regclass
  loop execute r.stmt; end loop;
end $comments$`;
}

const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Roles in access_grants that exist. */
async function grantedRoles(sql: postgres.TransactionSql, schema: string): Promise<string[]> {
  const rows = await sql<{ role: string }[]>`
    select distinct g.role from ${sql(schema)}.${sql(GRANTS)} g where exists (select 1 from pg_roles r where r.rolname = g.role)
    order by 1`;
  return rows.map((r) => r.role);
}

/** The reader role, able to read the warehouse's schema, and the migrating role able to hand it views. */
async function ensureReader(sql: postgres.TransactionSql, schema: string): Promise<string> {
  const reader = await readerRoleOf(sql, schema);
  const [facts] = await sql<{ exists: boolean; member: boolean }[]>`
    select exists (select 1 from pg_roles where rolname = ${reader}) as exists,
           coalesce(pg_has_role(current_user, (select oid from pg_roles where rolname = ${reader}), 'MEMBER'), false) as member`;
  if (!facts!.exists) await sql.unsafe(`create role ${ident(reader)} nologin`);
  if (!facts!.member) await sql.unsafe(`grant ${ident(reader)} to current_user`);
  await sql.unsafe(`grant usage on schema ${ident(schema)} to ${ident(reader)}`);
  await sql.unsafe(`grant select on all tables in schema ${ident(schema)} to ${ident(reader)}`);
  return reader;
}

/** The fingerprint of what the analyst schema should hold: it is rebuilt only when that changes. */
const fingerprintOf = (statements: readonly string[]) =>
  `wfsync masked views ${createHash('sha256').update(statements.join('\n;\n')).digest('hex')}`;

async function currentFingerprint(sql: postgres.TransactionSql, schema: string): Promise<string | null> {
  const [row] = await sql<{ comment: string | null }[]>`
    select obj_description(oid, 'pg_namespace') as comment from pg_namespace where nspname = ${analystSchemaOf(schema)}`;
  return row?.comment ?? null;
}

/**
 * Makes the analyst schema match the warehouse's tables and views and the catalog, and gives every granted role
 * its views. Run after migrations, in the migrating role's transaction that holds the migration lock; when
 * nothing changed it only reads the catalog of the database.
 */
export async function ensureMaskedViews(
  sql: postgres.TransactionSql,
  schema: string,
  catalog: PersonalCatalog,
): Promise<void> {
  const statements = viewStatements(schema, await sources(sql, schema), catalog);
  const fingerprint = fingerprintOf([...statements, await shardPlacements(sql)]);
  if ((await currentFingerprint(sql, schema)) === fingerprint) return;
  const reader = ident(await ensureReader(sql, schema));
  const analyst = ident(analystSchemaOf(schema));
  await onCoordinatorOnly(sql, async () => {
    await sql.unsafe(`drop schema if exists ${analyst} cascade`);
    await sql.unsafe(`create schema ${analyst} authorization ${reader}`);
    // Made by the reader role, so the views read the tables under their policies.
    await sql.unsafe(`set local role ${reader}`);
    for (const s of statements) await sql.unsafe(s);
    await sql.unsafe(commentStatement(schema));
    await sql.unsafe(`comment on schema ${analyst} is ${lit(fingerprint)}`);
    await sql.unsafe('reset role');
  });
  for (const role of await grantedRoles(sql, schema)) await grantAnalystViews(sql, schema, role);
}

/**
 * Drops the analyst schema before pending migrations: its views name the tables' columns, which a migration may
 * change or drop. Granted roles read nothing until ensureMaskedViews makes it again.
 */
export async function dropMaskedViews(sql: postgres.TransactionSql, schema: string): Promise<void> {
  await onCoordinatorOnly(sql, () => sql.unsafe(`drop schema if exists ${ident(analystSchemaOf(schema))} cascade`));
}

/** Whether the analyst schema exists (a warehouse migrated with the catalog). */
export async function hasMaskedViews(sql: postgres.TransactionSql, schema: string): Promise<boolean> {
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from pg_namespace where nspname = ${analystSchemaOf(schema)}`;
  return row!.n > 0;
}

/** The role reads the analyst schema's views, and nothing of the warehouse's own schema. */
export async function grantAnalystViews(sql: postgres.TransactionSql, schema: string, role: string): Promise<void> {
  await revokeWarehouse(sql, schema, role);
  await grantWorkerShards(sql, schema, role);
  const analyst = ident(analystSchemaOf(schema));
  await onCoordinatorOnly(sql, async () => {
    await sql.unsafe(`grant usage on schema ${analyst} to ${ident(role)}`);
    await sql.unsafe(`grant select on all tables in schema ${analyst} to ${ident(role)}`);
  });
}

/** Every privilege of the role on the warehouse's schema and the analyst schema. */
export async function revokeAnalystViews(sql: postgres.TransactionSql, schema: string, role: string): Promise<void> {
  await revokeWarehouse(sql, schema, role);
  if (!(await hasMaskedViews(sql, schema))) return;
  const analyst = ident(analystSchemaOf(schema));
  await onCoordinatorOnly(sql, async () => {
    await sql.unsafe(`revoke all on all tables in schema ${analyst} from ${ident(role)}`);
    await sql.unsafe(`revoke usage on schema ${analyst} from ${ident(role)}`);
  });
}

async function revokeWarehouse(sql: postgres.TransactionSql, schema: string, role: string): Promise<void> {
  await sql.unsafe(`revoke all on all tables in schema ${ident(schema)} from ${ident(role)}`);
  await sql.unsafe(`revoke usage on schema ${ident(schema)} from ${ident(role)}`);
}
