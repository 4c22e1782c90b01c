import type postgres from 'postgres';
import { onCitus } from './citus.ts';

/**
 * Row-level security of the warehouse, kept from the database's own catalog rather than a list: every table of
 * the schema with a `company_key` column gets the `company_access` policy, which keeps to the companies granted
 * to the role running the query. Granted roles read the tables through the analyst schema's views
 * (masked-views.ts), whose reader role is under the policies. Run after every migration, so a table a later
 * migration adds is covered too.
 *
 * The tables' owner (the role that migrates and syncs) and superusers bypass row-level security, so the sync's
 * reads and writes take no policy at all; FORCE ROW LEVEL SECURITY is not used because it would only put the
 * owner, who may switch the policies off anyway, under them.
 */

export const POLICY = 'company_access';
const GRANTS_TABLE = 'access_grants';

export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** What says which companies the role running the query reads, the defaults (`*`) among them. */
export const grantedCompaniesOf = (schema: string) => `${ident(schema)}.granted_companies()`;

/**
 * The companies of the role running the query, as `granted_companies()` says (the one place that does), looked
 * up once per query: the scalar subquery makes its call an InitPlan (the cast keeps `any` from reading it as a
 * subquery of rows), and the comparison stays an `= any(array)` an index on company_key serves. The defaults
 * every company falls back to (`*`: policies, field classes) are among them, readable to every granted role.
 * Citus refuses a subquery in the policy of a distributed table (./distribution.ts), so there the function is
 * called bare, once per row its workers read.
 */
export function companyPolicy(schema: string, distributed = false): string {
  const granted = grantedCompaniesOf(schema);
  return distributed ? `company_key = any (${granted})` : `company_key = any ((select ${granted})::text[])`;
}

/** A policy that does not call the function is from before it (a subquery of the grants): it is replaced. */
const CURRENT_POLICY = '%granted_companies()%';

interface TableRow {
  name: string;
  rls: boolean;
  policy: boolean;
}

/** Tables of the schema with a company_key, whether row security is on and our policy is there. */
async function companyTables(sql: postgres.TransactionSql, schema: string): Promise<TableRow[]> {
  return sql<TableRow[]>`
    select c.relname as name, c.relrowsecurity as rls,
           exists (select 1 from pg_policy p where p.polrelid = c.oid and p.polname = ${POLICY}
                   and (c.relname = ${GRANTS_TABLE} or pg_get_expr(p.polqual, p.polrelid) like ${CURRENT_POLICY})) as policy
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'company_key' and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'p')
    order by c.relname`;
}

/** Row security and the policy, on every table with a company_key where they are missing or outdated. */
export async function ensureAccessPolicies(sql: postgres.TransactionSql, schema: string): Promise<void> {
  const s = ident(schema);
  // On Citus every such table is distributed (or about to be): its policy takes the form Citus accepts.
  const distributed = await onCitus(sql);
  for (const t of await companyTables(sql, schema)) {
    const table = `${s}.${ident(t.name)}`;
    if (!t.rls) await sql.unsafe(`alter table ${table} enable row level security`);
    if (t.policy) continue;
    await sql.unsafe(`drop policy if exists ${POLICY} on ${table}`);
    // A role reads its own grants; the grants table cannot use the company policy, which reads it.
    const using = t.name === GRANTS_TABLE ? 'role = current_user::text' : companyPolicy(schema, distributed);
    await sql.unsafe(`create policy ${POLICY} on ${table} for select using (${using})`);
  }
}
