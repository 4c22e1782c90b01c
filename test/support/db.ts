import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { inject } from 'vitest';
import { copyTemplate, withDatabase } from './citus.ts';

/**
 * A fresh database on the shared test server, so test files never see each other's rows: empty, or with
 * `migrated` a copy of one with the warehouse migrated already (global-setup.ts), for a test that would migrate
 * it first thing. Under `npm run test:citus` it is a copy, on every node, of a database with the warehouse
 * migrated and distributed already (`empty`: of one with only the citus extension and the workers), since making
 * that takes half a minute.
 */
export async function freshDatabase(opts: { empty?: boolean; migrated?: boolean } = {}): Promise<string> {
  const citus = inject('citus');
  if (citus) return copyTemplate(citus, opts.empty ? citus.empty : citus.migrated);
  const admin = inject('databaseUrl');
  const template = opts.migrated ? inject('migratedTemplate') : undefined;
  const name = `t_${randomBytes(6).toString('hex')}`;
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(`create database ${name}${template ? ` template ${template}` : ''}`);
  await sql.end();
  return withDatabase(admin, name);
}

/**
 * Sessions waiting on a lock whose statement is like `like`. On Citus the wait is on a worker, in the statement on
 * the shard: the cluster's activity shows it.
 */
export async function waitingOnLocks(sql: postgres.Sql, like: string): Promise<number> {
  const activity = inject('citus') ? 'citus_stat_activity' : 'pg_stat_activity';
  const [r] = await sql.unsafe<{ n: number }[]>(
    `select count(*)::int as n from ${activity} where wait_event_type = 'Lock' and query ilike $1`,
    [like],
  );
  return r!.n;
}

/** Gives a test's database to `owner`: on Citus, on every node, as an operator gives the warehouse's role its database. */
export async function giveDatabase(url: string, owner: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const nodes = inject('citus')?.nodes ?? [url];
  for (const node of nodes) {
    const sql = postgres(node, { max: 1, onnotice: () => {} });
    try {
      await sql.unsafe(`alter database ${name} owner to ${owner}`);
    } finally {
      await sql.end();
    }
  }
}
