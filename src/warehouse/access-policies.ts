import type postgres from 'postgres';
import { personalColumnsOf, secretColumnsOf } from './personal-columns.ts';

/**
 * Row-level security of the warehouse, kept from the database's own catalog rather than a list: every table of
 * the schema with a `company_key` column gets the `company_access` policy, every view runs with its caller's
 * rights (security_invoker, Postgres 15 and later), and every role in `access_grants` gets SELECT on the
 * columns it may read. Run after every migration, so a table a later migration adds is covered too.
 *
 * The tables' owner (the role that migrates and syncs) and superusers bypass row-level security, so the sync's
 * reads and writes take no policy at all; FORCE ROW LEVEL SECURITY is not used because it would only put the
 * owner, who may switch the policies off anyway, under them.
 */

export const POLICY = 'company_access';
const GRANTS_TABLE = 'access_grants';

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The companies of the role running the query, as `granted_companies()` says (the one place that does), looked
 * up once per query: the scalar subquery makes its call an InitPlan (the cast keeps `any` from reading it as a
 * subquery of rows), and the comparison stays an `= any(array)` an index on company_key serves. Citus refuses a subquery in the policy of a distributed table
 * (./distribution.ts), so there the function is called bare, once per row its workers read.
 */
export function companyPolicy(schema: string, distributed = false): string {
  const granted = `${ident(schema)}.granted_companies()`;
  return distributed ? `company_key = any (${granted})` : `company_key = any ((select ${granted})::text[])`;
}

interface TableRow {
  name: string;
  rls: boolean;
  policy: boolean;
}

/** Tables of the schema with a company_key, whether row security is on and our policy is there. */
async function companyTables(sql: postgres.TransactionSql, schema: string): Promise<TableRow[]> {
  return sql<TableRow[]>`
    select c.relname as name, c.relrowsecurity as rls,
           exists (select 1 from pg_policy p where p.polrelid = c.oid and p.polname = ${POLICY}) as policy
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'company_key' and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'p')
    order by c.relname`;
}

/**
 * Caller's-rights views came with Postgres 15. Before it a view reads with its owner's rights, past the
 * policies: there, no granted role is given any view.
 */
async function callerViews(sql: postgres.TransactionSql): Promise<boolean> {
  const [row] = await sql<{ v: number }[]>`select current_setting('server_version_num')::int as v`;
  return row!.v >= 150000;
}

/** Views of the schema that do not yet run with their caller's rights. */
async function definerViews(sql: postgres.TransactionSql, schema: string): Promise<string[]> {
  if (!(await callerViews(sql))) return [];
  const rows = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind = 'v'
      and not coalesce('security_invoker=true' = any (c.reloptions) or 'security_invoker=on' = any (c.reloptions), false)`;
  return rows.map((r) => r.name);
}

/** Row security, the policy and caller's-rights views where missing; then each granted role's privileges again. */
export async function ensureAccessPolicies(sql: postgres.TransactionSql, schema: string): Promise<void> {
  const s = ident(schema);
  for (const t of await companyTables(sql, schema)) {
    const table = `${s}.${ident(t.name)}`;
    if (!t.rls) await sql.unsafe(`alter table ${table} enable row level security`);
    if (t.policy) continue;
    // A role reads its own grants; the grants table cannot use the company policy, which reads it.
    const using = t.name === GRANTS_TABLE ? 'role = current_user::text' : companyPolicy(schema);
    await sql.unsafe(`create policy ${POLICY} on ${table} for select using (${using})`);
  }
  for (const v of await definerViews(sql, schema))
    await sql.unsafe(`alter view ${s}.${ident(v)} set (security_invoker = true)`);
  const roles = await sql<{ role: string; personal: boolean }[]>`
    select g.role, bool_or(g.personal) as personal from ${sql(schema)}.${sql(GRANTS_TABLE)} g
    where exists (select 1 from pg_roles r where r.rolname = g.role) group by g.role`;
  for (const r of roles) await grantRolePrivileges(sql, schema, r.role, r.personal);
}

/**
 * Takes every view from the granted roles until ensureAccessPolicies gives them back. Run before pending
 * migrations: one that replaces a view (CREATE OR REPLACE VIEW) resets it to its owner's rights, which read past
 * the policies, and the migration commits before the view is set to its caller's rights again.
 */
export async function withdrawViews(sql: postgres.TransactionSql, schema: string): Promise<void> {
  const [grants] = await sql<
    { t: string | null }[]
  >`select to_regclass(${`${ident(schema)}.${GRANTS_TABLE}`})::text as t`;
  if (!grants?.t) return;
  const views = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and c.relkind = 'v'`;
  const roles = await sql<{ role: string }[]>`
    select distinct g.role from ${sql(schema)}.${sql(GRANTS_TABLE)} g where exists (select 1 from pg_roles r where r.rolname = g.role)`;
  if (views.length === 0 || roles.length === 0) return;
  const list = views.map((v) => `${ident(schema)}.${ident(v.name)}`).join(', ');
  await sql.unsafe(`revoke all on ${list} from ${roles.map((r) => ident(r.role)).join(', ')}`);
}

/** What a role granted companies may select: per table (and view), its columns. */
export async function readableColumns(
  sql: postgres.TransactionSql,
  schema: string,
  personal: boolean,
): Promise<Map<string, string[]>> {
  const columns = await sql<{ table: string; column: string }[]>`
    select c.relname as table, a.attname as column
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'p')
      and exists (select 1 from pg_attribute k where k.attrelid = c.oid and k.attname = 'company_key' and not k.attisdropped)
    order by c.relname, a.attnum`;
  const readable = new Map<string, string[]>();
  for (const { table, column } of columns) {
    const withheld = [...secretColumnsOf(table), ...(personal ? [] : personalColumnsOf(table))];
    if (withheld.includes(column)) continue;
    readable.set(table, [...(readable.get(table) ?? []), column]);
  }
  for (const [view, cols] of await readableViews(sql, schema, readable)) readable.set(view, cols);
  return readable;
}

/**
 * The views whose every column used (in its select list, joins and filters) is readable: a caller's-rights
 * view checks the caller's privileges on each. Views over views are resolved until nothing changes.
 */
async function readableViews(
  sql: postgres.TransactionSql,
  schema: string,
  tables: Map<string, string[]>,
): Promise<Map<string, string[]>> {
  const uses = await sql<{ view: string; table: string; column: string }[]>`
    select u.view_name as view, u.table_name as table, u.column_name as column
    from information_schema.view_column_usage u where u.view_schema = ${schema}`;
  const viewColumns = await sql<{ view: string; column: string }[]>`
    select c.relname as view, a.attname as column from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${schema} and c.relkind = 'v' order by a.attnum`;
  const views = new Map<string, string[]>();
  if (!(await callerViews(sql))) return views;
  for (let changed = true; changed; ) {
    changed = false;
    const readable = (t: string, c: string) => (tables.get(t) ?? views.get(t))?.includes(c) ?? false;
    for (const view of new Set(viewColumns.map((v) => v.view))) {
      if (views.has(view)) continue;
      if (!uses.filter((u) => u.view === view).every((u) => readable(u.table, u.column))) continue;
      views.set(
        view,
        viewColumns.filter((v) => v.view === view).map((v) => v.column),
      );
      changed = true;
    }
  }
  return views;
}

/** SELECT on exactly the readable columns (granted per column, so a column a migration adds waits for this). */
export async function grantRolePrivileges(
  sql: postgres.TransactionSql,
  schema: string,
  role: string,
  personal: boolean,
): Promise<void> {
  const s = ident(schema);
  await sql.unsafe(`grant usage on schema ${s} to ${ident(role)}`);
  for (const [table, columns] of await readableColumns(sql, schema, personal)) {
    await sql.unsafe(`grant select (${columns.map(ident).join(', ')}) on ${s}.${ident(table)} to ${ident(role)}`);
  }
}

/** Every privilege of the role on the schema's tables and views, and on the schema. */
export async function revokeRolePrivileges(sql: postgres.TransactionSql, schema: string, role: string): Promise<void> {
  const s = ident(schema);
  await sql.unsafe(`revoke all on all tables in schema ${s} from ${ident(role)}`);
  await sql.unsafe(`revoke usage on schema ${s} from ${ident(role)}`);
}
