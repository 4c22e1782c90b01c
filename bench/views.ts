import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { postgresAt } from '../src/warehouse/socket.ts';
import { DEFAULT_SCHEMA } from '../src/warehouse/schema.ts';
import { startPostgres, type Running } from '../test/support/services.ts';
import { dropWarehouse, runSyncProcess, startSandboxProcess } from './sync-process.ts';

/**
 * How long each analyst view (`v_*`) takes at a sandbox size: `select count(*)` and the first 100 rows, its row
 * count, and at each join of its plan the planner's estimated rows beside the actual ones (EXPLAIN ANALYZE).
 * It first syncs the sandbox at that size into the warehouse, budget out of the way, then ANALYZEs it.
 * Prints one JSON object.
 *
 *   node --import tsx bench/views.ts [--size medium] [--no-sync] [--timeout-seconds 120]
 *
 * DATABASE_URL names the server (a stock one, say; its `workforce` schema is dropped first unless --no-sync);
 * without it a private Postgres runs for the bench.
 */

export const VIEW_GOAL_SECONDS: Record<string, number> = { tiny: 2, small: 2, medium: 2, large: 20 };

export interface JoinEstimate {
  node: string;
  joinType: string;
  estimatedRows: number;
  actualRows: number;
}

export interface ViewTiming {
  view: string;
  rows: number | null;
  countSeconds: number | null;
  first100Seconds: number | null;
  withinGoal: boolean;
  joins: JoinEstimate[];
}

interface PlanNode {
  'Node Type': string;
  'Join Type'?: string;
  'Plan Rows': number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** Every join of a plan, outermost first, with the planner's row estimate beside the rows it gave in all. */
export function joinsOf(plan: PlanNode): JoinEstimate[] {
  const out: JoinEstimate[] = [];
  const walk = (n: PlanNode) => {
    if (n['Join Type']) {
      out.push({
        node: n['Node Type'],
        joinType: n['Join Type'],
        estimatedRows: Math.round(n['Plan Rows'] * (n['Actual Loops'] ?? 1)),
        actualRows: Math.round((n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1)),
      });
    }
    for (const c of n.Plans ?? []) walk(c);
  };
  walk(plan);
  return out;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T | null; seconds: number | null }> {
  const t = performance.now();
  try {
    const value = await run();
    return { value, seconds: Math.round(performance.now() - t) / 1000 };
  } catch (e) {
    if ((e as { code?: string }).code === '57014') return { value: null, seconds: null };
    throw e;
  }
}

/** Times every `v_*` view of the warehouse at `url`, each statement cut at `timeoutSeconds`. */
export async function timeViews(url: string, goalSeconds: number, timeoutSeconds: number): Promise<ViewTiming[]> {
  const sql = postgresAt(url, { max: 1, onnotice: () => {}, connection: { statement_timeout: timeoutSeconds * 1000 } });
  try {
    const views = await sql<{ name: string }[]>`
      select viewname as name from pg_views where schemaname = ${DEFAULT_SCHEMA} and viewname like 'v\\_%' order by viewname`;
    const out: ViewTiming[] = [];
    for (const { name } of views) {
      const from = `"${DEFAULT_SCHEMA}"."${name}"`;
      const count = await timed(async () =>
        Number((await sql.unsafe(`select count(*)::bigint as n from ${from}`))[0]!.n),
      );
      const first = await timed(() => sql.unsafe(`select * from ${from} limit 100`));
      const explained = await timed(() => sql.unsafe(`explain (analyze, format json) select count(*) from ${from}`));
      const plan = explained.value ?? (await sql.unsafe(`explain (format json) select count(*) from ${from}`));
      const seconds = [count.seconds, first.seconds];
      out.push({
        view: name,
        rows: count.value,
        countSeconds: count.seconds,
        first100Seconds: first.seconds,
        withinGoal: seconds.every((s) => s !== null && s <= goalSeconds),
        joins: joinsOf((plan[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan),
      });
    }
    return out;
  } finally {
    await sql.end();
  }
}

async function syncInto(url: string, size: string): Promise<{ rows: number; seconds: number }> {
  const rateLimit = '100000/1s';
  await dropWarehouse(url, DEFAULT_SCHEMA);
  const sandbox = await startSandboxProcess({ size, rateLimit });
  try {
    const r = await runSyncProcess({ baseUrl: sandbox.url, databaseUrl: url, rateLimit, sandbox });
    if (r.exitCode !== 0) throw new Error(`sync exited ${r.exitCode}: ${r.stderr.slice(-1000)}`);
    return { rows: r.summary.rows, seconds: r.processSeconds };
  } finally {
    sandbox.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { size: { type: 'string' }, 'no-sync': { type: 'boolean' }, 'timeout-seconds': { type: 'string' } },
  });
  const size = values.size ?? 'medium';
  const goalSeconds = VIEW_GOAL_SECONDS[size] ?? 2;
  const timeoutSeconds = Number(values['timeout-seconds'] ?? 120);
  const own: Running | undefined = process.env.DATABASE_URL ? undefined : await startPostgres({ durable: true });
  const url = process.env.DATABASE_URL ?? own!.url;
  try {
    const synced = values['no-sync'] ? undefined : await syncInto(url, size);
    const sql = postgresAt(url, { max: 1, onnotice: () => {} });
    const [server] = await sql<{ version: string }[]>`select current_setting('server_version') as version`;
    await sql.unsafe(`analyze`);
    await sql.end();
    const views = await timeViews(url, goalSeconds, timeoutSeconds);
    const report = { bench: 'views', size, server: server!.version, goalSeconds, timeoutSeconds, synced, views };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await own?.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
