import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { migrateWarehouse } from '../../src/warehouse/migrate.ts';
import { DEFAULT_SCHEMA } from '../../src/warehouse/schema.ts';

/**
 * A Citus cluster for `npm run test:citus`: a coordinator and its workers, each a Postgres server, and two
 * template databases on every node: one with the citus extension and the workers added (`empty`), and the same
 * with the warehouse migrated into it (`migrated`). A test's database is a copy of one of them on every node,
 * made in a second or two, where creating the extension and distributing every table takes half a minute.
 */

export interface CitusCluster {
  /** URLs of each node's `postgres` database (or the given one), coordinator first. */
  nodes: string[];
  /** Template databases, on every node. */
  empty: string;
  migrated: string;
  /** How this run's databases are named: templates and copies. */
  prefix: string;
}

const run = promisify(execFile);

/** Shards per distributed table in the tests' databases: enough for both workers to hold some, and quick to make. */
export const TEST_SHARD_COUNT = 4;

/** ../shared/citus beside the checkout (or beside one of its parents): the Citus build and its scripts. */
export function citusScripts(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'shared', 'citus');
    if (existsSync(join(candidate, 'cluster.sh'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('no shared/citus/cluster.sh beside this checkout or its parents');
    dir = parent;
  }
}

/** A base port whose next two are free too, below the range the kernel hands out to outgoing connections. */
async function freePorts(count: number): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const srv = createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 10_000);
    let ok = true;
    for (let i = 0; i < count && ok; i++) ok = await free(base + i);
    if (ok) return base;
  }
  throw new Error('no free ports for a Citus cluster');
}

/**
 * Starts a private cluster with ../shared/citus/cluster.sh; `stop` removes it. Two test files at a time each hold
 * a database, whose sessions open connections to every worker and whose Citus maintenance daemon is a
 * background worker of its own: the servers are started again with room for them.
 */
export async function startCitusCluster(): Promise<{ url: string; dataDirs: string[]; stop: () => Promise<void> }> {
  const script = join(citusScripts(), 'cluster.sh');
  const base = await freePorts(3);
  const dir = `/var/tmp/wfs-citus-test-${randomBytes(4).toString('hex')}`;
  const up = async () => (await run('bash', [script, 'up', String(base), dir], { timeout: 120_000 })).stdout;
  const url = (await up()).trim().split('\n').at(-1)!;
  for (const node of await clusterNodes(url)) {
    await onNode(node, async (sql) => {
      await sql.unsafe(`alter system set max_connections = 300`);
      await sql.unsafe(`alter system set max_worker_processes = 64`);
    });
  }
  await run('bash', [script, 'down', String(base), dir]);
  await up();
  return {
    url,
    dataDirs: [0, 1, 2].map((i) => join(dir, `n${i}`)),
    stop: async () => void (await run('bash', [script, 'reset', String(base), dir])),
  };
}

export const withDatabase = (url: string, database: string) => {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
};

export async function onNode<T>(url: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

/** The coordinator's URL and its primary workers' (same user and password, each its own host and port). */
export async function clusterNodes(coordinator: string): Promise<string[]> {
  const workers = await onNode(
    coordinator,
    (sql) =>
      sql<{ host: string; port: number }[]>`
      select nodename as host, nodeport as port from pg_dist_node
      where noderole = 'primary' and groupid <> 0 and isactive order by nodeport`,
  );
  return [
    coordinator,
    ...workers.map((w) => {
      const u = new URL(coordinator);
      u.hostname = w.host;
      u.port = String(w.port);
      return u.toString();
    }),
  ];
}

/** A database on every node with the citus extension, its workers added on the coordinator's. */
export async function createCitusDatabase(nodes: string[], name: string): Promise<void> {
  for (const node of nodes) {
    await onNode(node, (sql) => sql.unsafe(`create database ${name}`));
    await onNode(withDatabase(node, name), (sql) => sql.unsafe('create extension if not exists citus'));
  }
  await onNode(withDatabase(nodes[0]!, name), async (sql) => {
    const [coordinator, ...workers] = nodes.map((n) => new URL(n));
    await sql`select citus_set_coordinator_host(${coordinator!.hostname}, ${Number(coordinator!.port)})`;
    for (const w of workers) await sql`select citus_add_node(${w.hostname}, ${Number(w.port)})`;
  });
}

/** No session may be in a database that is copied: its Citus maintenance daemon included. */
async function closeTemplate(nodes: string[], name: string): Promise<void> {
  for (const node of nodes) {
    await onNode(node, async (sql) => {
      await sql.unsafe(`alter database ${name} allow_connections false`);
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
    });
  }
}

/** The two template databases, made once per run. */
export async function prepareTemplates(nodes: string[]): Promise<CitusCluster> {
  const prefix = `wfs_${randomBytes(3).toString('hex')}_`;
  const empty = `${prefix}empty`;
  const migrated = `${prefix}migrated`;
  for (const name of [empty, migrated]) {
    await createCitusDatabase(nodes, name);
    await onNode(nodes[0]!, (sql) => sql.unsafe(`alter database ${name} set citus.shard_count = ${TEST_SHARD_COUNT}`));
  }
  await migrateWarehouse(withDatabase(nodes[0]!, migrated), DEFAULT_SCHEMA);
  await closeTemplate(nodes, empty);
  await closeTemplate(nodes, migrated);
  return { nodes, empty, migrated, prefix };
}

/** The copies this process made, dropped when its test file is done (citus-file.ts). */
const copies: string[] = [];

/** A copy of a template on every node; the coordinator's URL. */
export async function copyTemplate(cluster: CitusCluster, template: string): Promise<string> {
  const name = `${cluster.prefix}${randomBytes(6).toString('hex')}`;
  copies.push(name);
  for (const node of cluster.nodes)
    await onNode(node, (sql) => sql.unsafe(`create database ${name} template ${template}`));
  await onNode(cluster.nodes[0]!, (sql) =>
    sql.unsafe(`alter database ${name} set citus.shard_count = ${TEST_SHARD_COUNT}`),
  );
  return withDatabase(cluster.nodes[0]!, name);
}

/** Drops the copies this process made: a cluster holds only the databases of the test files running. */
export async function dropCopies(cluster: CitusCluster): Promise<void> {
  for (const name of copies.splice(0)) {
    for (const node of cluster.nodes)
      await onNode(node, (sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
  }
}

/** Drops the run's databases, templates and copies (on a cluster the tests did not start). */
export async function dropDatabases(cluster: CitusCluster): Promise<void> {
  for (const node of cluster.nodes) {
    await onNode(node, async (sql) => {
      const names = await sql<{ name: string }[]>`
        select datname as name from pg_database where starts_with(datname, ${cluster.prefix})`;
      for (const { name } of names) await sql.unsafe(`drop database ${name} with (force)`);
    });
  }
}
