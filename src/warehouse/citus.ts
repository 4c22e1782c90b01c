import type postgres from 'postgres';

/** Whether the warehouse's database is a Citus coordinator (it has the `citus` extension). */
export async function onCitus(sql: postgres.Sql | postgres.TransactionSql): Promise<boolean> {
  const [row] = await sql<
    { citus: boolean }[]
  >`select exists (select 1 from pg_extension where extname = 'citus') as citus`;
  return row!.citus;
}
