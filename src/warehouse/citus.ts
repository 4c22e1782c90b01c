import type postgres from 'postgres';

/** Whether the warehouse's database is a Citus coordinator (it has the `citus` extension). */
export async function onCitus(sql: postgres.Sql | postgres.TransactionSql): Promise<boolean> {
  const [row] = await sql<
    { citus: boolean }[]
  >`select exists (select 1 from pg_extension where extname = 'citus') as citus`;
  return row!.citus;
}

const PROPAGATION = 'citus.enable_ddl_propagation';

/**
 * Runs `run` with its DDL kept on the coordinator. The analyst schema's views live there only: analysts connect
 * to the coordinator, and Citus would make each view on the workers as its owner, a reader role without a login.
 */
export async function onCoordinatorOnly<T>(sql: postgres.TransactionSql, run: () => Promise<T>): Promise<T> {
  if (!(await onCitus(sql))) return run();
  const [row] = await sql<{ was: string }[]>`select current_setting(${PROPAGATION}) as was`;
  await sql`select set_config(${PROPAGATION}, 'off', true)`;
  try {
    return await run();
  } finally {
    await sql`select set_config(${PROPAGATION}, ${row!.was}, true)`;
  }
}

/**
 * On Citus a query through the analyst schema's views runs on the workers as the role that asked: Citus checks
 * the shards' privileges as that role, not as the views' owner. So there a granted role may select the warehouse's
 * shards on the workers (under the same row-level security), and on the coordinator, where it connects, it still
 * reads the warehouse only through the views: there it keeps the schema's usage and selects only the coordinator's
 * own copies of the reference tables, which Citus reads locally. The grant reaches the workers in this
 * transaction; the revoke is the coordinator's only.
 */
export async function grantWorkerShards(sql: postgres.TransactionSql, schema: string, role: string): Promise<void> {
  if (!(await onCitus(sql))) return;
  const [s, r] = [quote(schema), quote(role)];
  await sql.unsafe(`grant usage on schema ${s} to ${r}`);
  await sql.unsafe(`grant select on all tables in schema ${s} to ${r}`);
  const local = await sql<{ shard: string }[]>`
    select shard_name(d.logicalrelid, d.shardid) as shard from pg_dist_shard d
    join pg_dist_placement p using (shardid) join pg_dist_partition t using (logicalrelid)
    join pg_class c on c.oid = d.logicalrelid join pg_namespace n on n.oid = c.relnamespace
    where p.groupid = 0 and t.repmodel = 't' and n.nspname = ${schema}`;
  await onCoordinatorOnly(sql, async () => {
    await sql.unsafe(`revoke select on all tables in schema ${s} from ${r}`);
    for (const { shard } of local) await sql.unsafe(`grant select on ${shard} to ${r}`);
  });
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Where each shard lies, on Citus ('' elsewhere). A shard a rebalance moves is made anew on its worker without the
 * granted roles' privileges (grantWorkerShards), so the analyst schema, whose fingerprint includes this, is made
 * again, and its roles granted again, at the first migrate after a move.
 */
export async function shardPlacements(sql: postgres.TransactionSql): Promise<string> {
  if (!(await onCitus(sql))) return '';
  const [row] = await sql<{ placements: string }[]>`
    select coalesce(string_agg(shardid || ':' || groupid, ',' order by shardid, groupid), '') as placements
    from pg_dist_placement`;
  return row!.placements;
}
