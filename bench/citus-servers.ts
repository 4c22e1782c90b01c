import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterNodes, createCitusDatabase, onNode, startCitusCluster, withDatabase } from '../test/support/citus.ts';
import { freePort } from '../test/support/services.ts';

/** The servers the Citus benches compare: a Citus cluster of ../shared/citus, and one plain Postgres 15. */

const PG_BIN = '/usr/lib/postgresql/15/bin';
const run = promisify(execFile);

/** A Postgres server of the warehouse: its role, where it answers, and its data directory (for its CPU). */
export interface Node {
  role: 'coordinator' | 'worker' | 'postgres';
  url: string;
  dataDir: string;
}

/** A warehouse to fill: the database's URL and the servers whose CPU counts. */
export interface Warehouse {
  url: string;
  nodes: Node[];
}

async function dataDir(url: string): Promise<string> {
  return onNode(
    url,
    async (sql) => (await sql<{ dir: string }[]>`select current_setting('data_directory') as dir`)[0]!.dir,
  );
}

/** A Citus cluster of ../shared/citus and a database on it for the warehouse. */
export async function citusWarehouse(): Promise<{ wh: Warehouse; stop: () => Promise<void> }> {
  const cluster = await startCitusCluster();
  const urls = await clusterNodes(cluster.url);
  const name = `bench_${randomBytes(4).toString('hex')}`;
  await createCitusDatabase(urls, name);
  const nodes = await Promise.all(
    urls.map(
      async (u, i): Promise<Node> => ({
        role: i === 0 ? 'coordinator' : 'worker',
        url: withDatabase(u, name),
        dataDir: await dataDir(u),
      }),
    ),
  );
  return { wh: { url: nodes[0]!.url, nodes }, stop: cluster.stop };
}

/** One Postgres 15 server of the same binaries, settings and durability as the cluster's nodes, without Citus. */
export async function plainWarehouse(): Promise<{ wh: Warehouse; stop: () => Promise<void> }> {
  const dir = `/var/tmp/wfs-plain-bench-${randomBytes(4).toString('hex')}`;
  const port = await freePort();
  const asPostgres = (cmd: string) => run('su', ['postgres', '-c', cmd]);
  await run('mkdir', ['-p', dir]);
  await run('chown', ['postgres', dir]);
  const data = join(dir, 'data');
  await asPostgres(`${PG_BIN}/initdb -D ${data} -U postgres --auth=trust >/dev/null`);
  await asPostgres(
    `printf "port = ${port}\\nlisten_addresses = '127.0.0.1'\\nunix_socket_directories = '${dir}'\\nmax_connections = 300\\n" >> ${data}/postgresql.conf`,
  );
  await asPostgres(`${PG_BIN}/pg_ctl -D ${data} -l ${data}.log -w start >/dev/null`);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    wh: { url, nodes: [{ role: 'postgres', url, dataDir: data }] },
    stop: async () => {
      await asPostgres(`${PG_BIN}/pg_ctl -D ${data} -m fast -w stop >/dev/null`);
      await run('rm', ['-rf', dir]);
    },
  };
}
