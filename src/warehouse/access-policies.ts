import type postgres from 'postgres';

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

/**
 * The companies of the role running the query, looked up once per query (an InitPlan) through the grants
 * table's key, which leads with the role: the comparison stays an `= any(array)` an index on company_key serves.
 * The defaults every company falls back to (`*`: policies, field classes) are readable to every granted role.
 */
function companyPolicy(schema: string): string {
  return `company_key = any (array(select g.company_key from ${ident(schema)}.${GRANTS_TABLE} g where g.role = current_user::text union all select ${DEFAULTS}))`;
}

/** The defaults' company key in a policy; a policy without it is from before defaults were readable. */
const DEFAULTS = "'*'::text";

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
                   and (c.relname = ${GRANTS_TABLE} or pg_get_expr(p.polqual, p.polrelid) like ${`%${DEFAULTS}%`})) as policy
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'company_key' and not a.attisdropped
    where n.nspname = ${schema} and c.relkind in ('r', 'p')
    order by c.relname`;
}

/** Row security and the policy, on every table with a company_key where they are missing. */
export async function ensureAccessPolicies(sql: postgres.TransactionSql, schema: string): Promise<void> {
  const s = ident(schema);
  for (const t of await companyTables(sql, schema)) {
    const table = `${s}.${ident(t.name)}`;
    if (!t.rls) await sql.unsafe(`alter table ${table} enable row level security`);
    if (t.policy) continue;
    await sql.unsafe(`drop policy if exists ${POLICY} on ${table}`);
    // A role reads its own grants; the grants table cannot use the company policy, which reads it.
    const using = t.name === GRANTS_TABLE ? 'role = current_user::text' : companyPolicy(schema);
    await sql.unsafe(`create policy ${POLICY} on ${table} for select using (${using})`);
  }
}
