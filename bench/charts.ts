import { parseArgs } from 'node:util';
import { readBudgetUse, readPushHours, readRunRows } from '../src/ops/charts-data.ts';
import { streams as catalog } from '../src/resources/index.ts';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * The status page charts' reads over a warehouse holding a month of history: every catalog stream of every company
 * run every --every-minutes for --days days (housekeeping keeps 30), and --changes pushed changes spread over the
 * same month. Each read's median time over --repeat reads (rows parsed and grouped in this process included), and
 * for two of them Postgres's own time and the shared buffers they touched (EXPLAIN ANALYZE): these grow with the
 * hours and the companies shown, not with the history kept. Prints one JSON object.
 *
 *   node --import tsx bench/charts.ts [--companies 50] [--days 30] [--every-minutes 30] [--changes 1000000] [--repeat 5]
 */

const { values } = parseArgs({
  options: {
    companies: { type: 'string', default: '50' },
    days: { type: 'string', default: '30' },
    'every-minutes': { type: 'string', default: '30' },
    changes: { type: 'string', default: '1000000' },
    repeat: { type: 'string', default: '5' },
  },
});
const companies = Array.from({ length: Number(values.companies) }, (_, i) => `company-${i}`);
const days = Number(values.days);
const every = Number(values['every-minutes']);
const changes = Number(values.changes);
const repeat = Number(values.repeat);

async function fill(wh: Warehouse, now: Date): Promise<{ runs: number; changes: number }> {
  const s = wh.sql(wh.schema);
  const [runs] = await wh.sql<{ n: number }[]>`
    with ins as (
      insert into ${s}.sync_runs (company_key, stream, started_at, finished_at, outcome, requests, rows)
      select c, st, t, t + interval '4 minutes', 'ok', 40, 400
      from jsonb_array_elements_text(${wh.sql.json(companies)}) c, jsonb_array_elements_text(${wh.sql.json(catalog.map((x) => x.name))}) st,
        generate_series(${now}::timestamptz - ${`${days} days`}::interval, ${now}::timestamptz, ${`${every} minutes`}::interval) t
      returning 1)
    select count(*)::int as n from ins`;
  // Received oldest first, as the outbox's ids grow with created_at.
  const [pushed] = await wh.sql<{ n: number }[]>`
    with ins as (
      insert into ${s}.push_outbox (company_key, kind, change_id, entity_key, seq, payload, status, created_at, updated_at)
      select 'company-' || (i % ${companies.length}), 'individual', 'c' || i, 'en:' || i, 1, '{}'::jsonb,
        (array['applied','applied','applied','refused','failed'])[1 + i % 5], at, at
      from generate_series(1, ${changes}) i, lateral (select ${now}::timestamptz - ${`${days} days`}::interval * (1 - i::float8 / ${changes}) as at) a
      order by i
      returning 1)
    select count(*)::int as n from ins`;
  await wh.sql`analyze ${s}.sync_runs`;
  await wh.sql`analyze ${s}.push_outbox`;
  return { runs: runs!.n, changes: pushed!.n };
}

async function measure(read: () => Promise<unknown>): Promise<{ medianMs: number }> {
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    await read();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { medianMs: Math.round(times[Math.floor(times.length / 2)]! * 10) / 10 };
}

/** The statement's time in Postgres, the shared buffers (8 kB pages) it touched, and the tables it read in full. */
async function buffers(
  wh: Warehouse,
  statement: string,
): Promise<{ executionMs: number; sharedBuffers: number; fullScans: string[] }> {
  const [row] = await wh.sql.unsafe(`explain (analyze, buffers, format json) ${statement}`);
  const plan = (row as Record<string, unknown>)['QUERY PLAN'] as { Plan: PlanNode; 'Execution Time': number }[];
  const full: string[] = [];
  const walk = (n: PlanNode) => {
    if (n['Node Type'] === 'Seq Scan' && n['Relation Name']) full.push(n['Relation Name']);
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(plan[0]!.Plan);
  return {
    executionMs: Math.round(plan[0]!['Execution Time'] * 10) / 10,
    sharedBuffers: (plan[0]!.Plan['Shared Hit Blocks'] ?? 0) + (plan[0]!.Plan['Shared Read Blocks'] ?? 0),
    fullScans: full,
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

async function main(): Promise<void> {
  const pg = await startPostgres();
  const wh = await openWarehouse({ databaseUrl: pg.url, schema: 'bench_charts' });
  try {
    await wh.migrate();
    const now = new Date();
    const t0 = performance.now();
    const filled = await fill(wh, now);
    const fillSeconds = Math.round((performance.now() - t0) / 100) / 10;
    const hour = 3_600_000;
    const shown = companies;
    const budget = await measure(() => readBudgetUse(wh, shown, new Date(now.getTime() - 6 * hour), now));
    const runs = await measure(() => readRunRows(wh, shown, new Date(now.getTime() - 24 * hour), now));
    const push = await measure(() => readPushHours(wh, new Date(now.getTime() - 24 * hour), now));
    const s = `"${wh.schema}"`;
    const pushScan = await buffers(
      wh,
      `select status, count(*) from ${s}.push_outbox where id > coalesce((select id from ${s}.push_outbox where created_at < now() - interval '24 hours' order by id desc limit 1), 0) and created_at >= now() - interval '24 hours' group by 1`,
    );
    const runScan = await buffers(
      wh,
      `select x.* from unnest(array[${shown.map((c) => `'${c}'`).join(',')}]) k(company) cross join unnest(array[${catalog.map((c) => `'${c.name}'`).join(',')}]) st(stream) cross join lateral (select id, rows from ${s}.sync_runs where company_key = k.company and stream = st.stream and started_at >= now() - interval '24 hours' and finished_at is not null) x`,
    );
    const [size] = await wh.sql<{ runs: string; outbox: string }[]>`
      select pg_size_pretty(pg_total_relation_size(${`${wh.schema}.sync_runs`})) as runs, pg_size_pretty(pg_total_relation_size(${`${wh.schema}.push_outbox`})) as outbox`;
    process.stdout.write(
      `${JSON.stringify(
        {
          bench: 'charts',
          companies: companies.length,
          streams: catalog.length,
          days,
          everyMinutes: every,
          filled: { ...filled, seconds: fillSeconds, sizes: size },
          reads: { budget6h: budget, runRows24h: runs, pushHours24h: push },
          explain: { runRows24h: runScan, pushHours24h: pushScan },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await wh.close();
    await pg.stop();
  }
}

await main();
