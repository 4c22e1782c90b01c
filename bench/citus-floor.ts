import { availableParallelism } from 'node:os';
import postgres from 'postgres';
import { citusWarehouse, plainWarehouse, type Warehouse } from './citus-servers.ts';
import { postgresCpuSeconds } from './sync-process.ts';

/**
 * The least Postgres CPU a page's write can cost on a Citus cluster (a coordinator and two workers,
 * ../shared/citus) against one plain Postgres 15 of the same binaries, with none of wfsync's own statements: a
 * transaction of one multi-row insert of ROWS rows (default 200, the service's page) of one company and one
 * update of that company's checkpoint row, PAGES times (default 2000) over CONNECTIONS connections (default 4),
 * COMPANIES companies (default 40) at random. Each form of the insert is timed: the rows as a multi-row VALUES
 * of parameters (Citus routes it to the company's shard) and as unnested array parameters (wfsync's form on
 * plain Postgres; Citus pulls it through the coordinator). CPU a page is each server's processes' CPU over the
 * pages. Prints one JSON object.
 *
 *   PAGES=2000 ROWS=200 node --import tsx bench/citus-floor.ts
 */

const PAGES = Number(process.env.PAGES ?? 2000);
const ROWS = Number(process.env.ROWS ?? 200);
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 4);
const COMPANIES = Number(process.env.COMPANIES ?? 40);

const COLUMNS: readonly [string, string][] = [
  ['company_key', 'text'],
  ['id', 'bigint'],
  ['name', 'text'],
  ['number', 'integer'],
  ['at', 'timestamptz'],
  ['extra', 'jsonb'],
  ['hash', 'text'],
];
const names = COLUMNS.map(([n]) => n).join(', ');

const SETUP = [
  `create table page_rows (${COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')}, primary key (company_key, id))`,
  'create table page_state (company_key text primary key, pages bigint not null default 0)',
  `insert into page_state select 'c' || g, 0 from generate_series(1, ${COMPANIES}) g`,
];
const DISTRIBUTE = [
  `select create_distributed_table('page_state', 'company_key', colocate_with => 'none')`,
  `select create_distributed_table('page_rows', 'company_key', colocate_with => 'page_state')`,
];

type Form = 'values' | 'unnest';

const values = `insert into page_rows (${names}) values ${Array.from(
  { length: ROWS },
  (_, r) => `(${COLUMNS.map(([, t], i) => `$${r * COLUMNS.length + i + 1}::text::${t}`).join(', ')})`,
).join(', ')}`;
const unnest = `insert into page_rows (${names}) select ${COLUMNS.map(([, t], i) => `unnest($${i + 1}::${t}[])`).join(', ')}`;

let next = 0;
/** One page's rows of one company, each value as text. */
function pageRows(): string[][] {
  const company = `c${1 + Math.floor(Math.random() * COMPANIES)}`;
  const first = ++next * ROWS;
  const at = new Date().toISOString();
  return Array.from({ length: ROWS }, (_, k) => [
    company,
    String(first + k),
    `name of row ${k}`,
    String(k),
    at,
    JSON.stringify({ k, note: 'extra field' }),
    `hash-${first + k}`,
  ]);
}

const arrayOf = (rows: string[][], column: number) => `{${rows.map((r) => JSON.stringify(r[column])).join(',')}}`;

async function writePage(sql: postgres.Sql, form: Form): Promise<void> {
  const rows = pageRows();
  await sql.begin(async (tx) => {
    if (form === 'values') await tx.unsafe(values, rows.flat(), { prepare: true });
    else
      await tx.unsafe(
        unnest,
        COLUMNS.map((_, i) => arrayOf(rows, i)),
        { prepare: true },
      );
    await tx.unsafe('update page_state set pages = pages + 1 where company_key = $1', [rows[0]![0]!], {
      prepare: true,
    });
  });
}

const round = (x: number) => Math.round(x * 100) / 100;

/** PAGES pages of one form into `wh`: each server's CPU a page, and the whole's. */
async function measure(wh: Warehouse, form: Form) {
  const sql = postgres(wh.url, { max: CONNECTIONS, onnotice: () => {} });
  try {
    await writePage(sql, form);
    const before = wh.nodes.map((n) => postgresCpuSeconds(n.dataDir) ?? 0);
    let left = PAGES;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (left-- > 0) await writePage(sql, form);
      }),
    );
    const cpu = wh.nodes.map((n, i) => (postgresCpuSeconds(n.dataDir) ?? 0) - before[i]!);
    const total = cpu.reduce((a, b) => a + b, 0);
    return {
      form,
      msPerPage: round((total * 1000) / PAGES),
      nodes: wh.nodes.map((n, i) => ({ role: n.role, msPerPage: round((cpu[i]! * 1000) / PAGES) })),
    };
  } finally {
    await sql.end();
  }
}

async function onServers(make: () => Promise<{ wh: Warehouse; stop: () => Promise<void> }>, distributed: boolean) {
  const { wh, stop } = await make();
  try {
    const sql = postgres(wh.url, { max: 1, onnotice: () => {} });
    for (const s of [...SETUP, ...(distributed ? DISTRIBUTE : [])]) await sql.unsafe(s);
    await sql.end();
    return [await measure(wh, 'values'), await measure(wh, 'unnest')];
  } finally {
    await stop();
  }
}

const citus = await onServers(citusWarehouse, true);
const plain = await onServers(plainWarehouse, false);
const best = (forms: { msPerPage: number }[]) => Math.min(...forms.map((f) => f.msPerPage));
const routed = citus.find((f) => f.form === 'values')!;
process.stdout.write(
  `${JSON.stringify(
    {
      pages: PAGES,
      rowsPerPage: ROWS,
      connections: CONNECTIONS,
      cpus: availableParallelism(),
      citus,
      postgres: plain,
      clusterOverPostgres: round(best(citus) / best(plain)),
      coordinatorShareOfClusterCpu: round(routed.nodes[0]!.msPerPage / routed.msPerPage),
    },
    null,
    2,
  )}\n`,
);
