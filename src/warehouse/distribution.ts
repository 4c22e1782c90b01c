import type postgres from 'postgres';
import { companyPolicy, ident, POLICY } from './access-policies.ts';
import { onCitus } from './citus.ts';

/**
 * The warehouse on a Citus coordinator (its database has the `citus` extension), kept from the database's own
 * catalog rather than a list, after every migration: a table whose primary key leads with `company_key` is
 * distributed by it, co-located with `companies`, so that each company's rows of every table live on one worker
 * and a page's transaction, its joins and the views run there; any other table (`access_grants`, keyed by role;
 * `push_models`, keyed by name), and the few read with the defaults (READ_WITH_DEFAULTS), becomes a reference
 * table, copied to every node. On plain Postgres it does nothing. Each table is distributed in its own
 * transaction, so an interrupted run is finished by the next.
 */

/** Where a table of the schema stands. */
export interface Placement {
  table: string;
  /** distributed (by company_key), reference, or local (on the coordinator only: not yet done). */
  kind: 'distributed' | 'reference' | 'local';
}

const PARENT = 'companies';

/**
 * Tables keyed by company that every page's transaction reads for two companies at once, its own and the
 * defaults (`*`): distributed, those two rows would lie on two shards, often on two workers, and each page would
 * read across the cluster. As reference tables they are read on the node the page's statements run from. They
 * change only when an operator changes a policy.
 */
const READ_WITH_DEFAULTS: ReadonlySet<string> = new Set(['personal_data_versions']);

const kindOf = (t: TableRow): 'distributed' | 'reference' =>
  t.byCompany && !READ_WITH_DEFAULTS.has(t.table) ? 'distributed' : 'reference';

const asked = new WeakMap<postgres.Sql, Promise<boolean>>();

/** Whether the warehouse is on a Citus coordinator, asked once per client. */
export function isDistributed(wh: { sql: postgres.Sql }): Promise<boolean> {
  let answer = asked.get(wh.sql);
  if (!answer) asked.set(wh.sql, (answer = onCitus(wh.sql)));
  return answer;
}

interface TableRow {
  table: string;
  /** The table's primary key starts with company_key. */
  byCompany: boolean;
  kind: Placement['kind'];
  /** Its company_access policy holds a subquery, which Citus refuses on a distributed table. */
  subqueryPolicy: boolean;
}

async function tables(sql: postgres.Sql, schema: string): Promise<TableRow[]> {
  return sql<TableRow[]>`
    select c.relname as table,
           coalesce((select a.attname = 'company_key' from pg_index i
                     join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
                     where i.indrelid = c.oid and i.indisprimary), false) as "byCompany",
           coalesce((select case when p.partmethod = 'h' then 'distributed'
                                 when p.repmodel = 't' then 'reference' end
                     from pg_dist_partition p where p.logicalrelid = c.oid), 'local') as kind,
           exists (select 1 from pg_policy p where p.polrelid = c.oid and p.polname = ${POLICY}
                   and p.polqual::text like '%{SUBLINK%') as "subqueryPolicy"
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname = ${PARENT} desc, c.relname`;
}

/** Distributes (or copies to every node) each table not yet in Citus's metadata; what was done, table by table. */
export async function ensureDistribution(sql: postgres.Sql, schema: string): Promise<Placement[]> {
  if (!(await onCitus(sql))) return [];
  const done: Placement[] = [];
  for (const t of await tables(sql, schema)) {
    const kind = kindOf(t);
    if (t.kind === kind) continue;
    // A warehouse distributed before a table became a reference table: its rows come back first.
    if (t.kind !== 'local') await sql`select undistribute_table(${`${ident(schema)}.${ident(t.table)}`})`;
    await sql.begin((tx) => place(tx, schema, t, kind));
    done.push({ table: t.table, kind });
  }
  await allowGrantsOnWorkers(sql, schema);
  return done;
}

async function place(
  tx: postgres.TransactionSql,
  schema: string,
  t: TableRow,
  kind: 'distributed' | 'reference',
): Promise<void> {
  const table = `${ident(schema)}.${ident(t.table)}`;
  if (t.subqueryPolicy) await tx.unsafe(`drop policy ${POLICY} on ${table}`);
  if (kind === 'reference') await tx`select create_reference_table(${table})`;
  else if (t.table === PARENT)
    await tx`select create_distributed_table(${table}, 'company_key', colocate_with => 'none')`;
  else
    await tx`select create_distributed_table(${table}, 'company_key', colocate_with => ${`${ident(schema)}.${ident(PARENT)}`})`;
  if (t.subqueryPolicy)
    await tx.unsafe(`create policy ${POLICY} on ${table} for select using (${companyPolicy(schema, true)})`);
}

/** What the policies and the analyst schema's masks call to know the role's companies and readable fields. */
const GRANT_FUNCTIONS = ['granted_companies', 'granted_personal_companies', 'granted_readable_fields'];

/**
 * The policies and masks call these functions on the workers, inside the query on a shard, where they read the
 * reference table of grants (and field classes, distributed): Citus allows that read only when told.
 */
async function allowGrantsOnWorkers(sql: postgres.Sql, schema: string): Promise<void> {
  for (const name of GRANT_FUNCTIONS) {
    const fn = `${ident(schema)}.${ident(name)}()`;
    const [row] = await sql<{ set: boolean }[]>`
      select coalesce('citus.allow_nested_distributed_execution=on' = any (proconfig), false) as set
      from pg_proc where oid = to_regprocedure(${fn})`;
    if (row && !row.set) await sql.unsafe(`alter function ${fn} set citus.allow_nested_distributed_execution = on`);
  }
}

/** Where each table of the schema stands: `[]` on plain Postgres. */
export async function placements(sql: postgres.Sql, schema: string): Promise<Placement[]> {
  if (!(await onCitus(sql))) return [];
  return (await tables(sql, schema)).map((t) => ({ table: t.table, kind: t.kind }));
}
