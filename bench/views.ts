import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { personalCatalog } from '../src/resources/index.ts';
import { grantAccess, revokeAccess } from '../src/warehouse/access.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { analystSchemaOf } from '../src/warehouse/masked-views.ts';
import { postgresAt } from '../src/warehouse/socket.ts';
import { DEFAULT_SCHEMA } from '../src/warehouse/schema.ts';
import { startPostgres, type Running } from '../test/support/services.ts';
import { dropWarehouse, runSyncProcess, startSandboxProcess } from './sync-process.ts';

/**
 * How long each analyst view (`v_*`) takes at a sandbox size: `select count(*)` and the first 100 rows, its row
 * count, and at each join of its plan the planner's estimated rows beside the actual ones (EXPLAIN ANALYZE).
 * Each is timed as the warehouse's owner (the schema's own views) and as a role granted the company without
 * personal data (the analyst schema's masked views); the best of `--repeats` runs counts for each, and
 * `maskedRatio` is the masked role's slower statement over the owner's. It first syncs the sandbox at that size
 * into the warehouse, budget out of the way, then ANALYZEs it. Prints one JSON object.
 *
 *   node --import tsx bench/views.ts [--size medium] [--no-sync] [--timeout-seconds 120] [--repeats 3]
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

interface TimeOptions {
  goalSeconds: number;
  timeoutSeconds: number;
  /** The schema whose `v_*` views are timed. */
  schema: string;
  repeats: number;
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

/** The best of `repeats` runs; null seconds when one ran past the statement timeout. */
async function timed<T>(run: () => Promise<T>, repeats = 1): Promise<{ value: T | null; seconds: number | null }> {
  let best: { value: T | null; seconds: number | null } = { value: null, seconds: null };
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    try {
      const value = await run();
      const seconds = Math.round(performance.now() - t) / 1000;
      if (best.seconds === null || seconds < best.seconds) best = { value, seconds };
    } catch (e) {
      if ((e as { code?: string }).code === '57014') return { value: null, seconds: null };
      throw e;
    }
  }
  return best;
}

/** Times every `v_*` view of a schema at `url`, each statement cut at the timeout. */
export async function timeViews(url: string, o: TimeOptions): Promise<ViewTiming[]> {
  const sql = postgresAt(url, {
    max: 1,
    onnotice: () => {},
    connection: { statement_timeout: o.timeoutSeconds * 1000 },
  });
  try {
    const views = await sql<{ name: string }[]>`
      select viewname as name from pg_views where schemaname = ${o.schema} and viewname like 'v\\_%' order by viewname`;
    const out: ViewTiming[] = [];
    for (const { name } of views) {
      const from = `"${o.schema}"."${name}"`;
      const count = await timed(
        async () => Number((await sql.unsafe(`select count(*)::bigint as n from ${from}`))[0]!.n),
        o.repeats,
      );
      const first = await timed(() => sql.unsafe(`select * from ${from} limit 100`), o.repeats);
      const explained = await timed(() => sql.unsafe(`explain (analyze, format json) select count(*) from ${from}`));
      const plan = explained.value ?? (await sql.unsafe(`explain (format json) select count(*) from ${from}`));
      const seconds = [count.seconds, first.seconds];
      out.push({
        view: name,
        rows: count.value,
        countSeconds: count.seconds,
        first100Seconds: first.seconds,
        withinGoal: seconds.every((s) => s !== null && s <= o.goalSeconds),
        joins: joinsOf((plan[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan),
      });
    }
    return out;
  } finally {
    await sql.end();
  }
}

/** The masked role's time over the owner's, for the slower of its two statements. */
function ratioOf(owner: ViewTiming, masked: ViewTiming | undefined): number | null {
  const pairs = [
    [owner.countSeconds, masked?.countSeconds],
    [owner.first100Seconds, masked?.first100Seconds],
  ];
  if (pairs.some(([a, b]) => a === null || b === null || b === undefined)) return null;
  // A millisecond is the clock's grain here: below it, both are the same.
  return Math.max(...pairs.map(([a, b]) => Math.max(b!, 0.001) / Math.max(a!, 0.001)));
}

/** A login granted every company without personal data, for as long as `run` takes. */
async function asMaskedRole<T>(url: string, run: (maskedUrl: string) => Promise<T>): Promise<T> {
  const wh = await openWarehouse({ databaseUrl: url, catalog: personalCatalog });
  const role = `bench_masked_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  try {
    await wh.migrate();
    const companies = (await wh.sql<{ k: string }[]>`select company_key as k from ${wh.sql(wh.schema)}.companies`).map(
      (r) => r.k,
    );
    await grantAccess(wh, { role, companies, personal: false, createWithPassword: password });
    const u = new URL(url);
    u.username = role;
    u.password = password;
    return await run(u.toString());
  } finally {
    await revokeAccess(wh, role).catch(() => undefined);
    await wh.sql.unsafe(`drop role if exists "${role}"`).catch(() => undefined);
    await wh.close();
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
    options: {
      size: { type: 'string' },
      'no-sync': { type: 'boolean' },
      'timeout-seconds': { type: 'string' },
      repeats: { type: 'string' },
    },
  });
  const size = values.size ?? 'medium';
  const goalSeconds = VIEW_GOAL_SECONDS[size] ?? 2;
  const timeoutSeconds = Number(values['timeout-seconds'] ?? 120);
  const repeats = Number(values.repeats ?? 3);
  const own: Running | undefined = process.env.DATABASE_URL ? undefined : await startPostgres({ durable: true });
  const url = process.env.DATABASE_URL ?? own!.url;
  try {
    const synced = values['no-sync'] ? undefined : await syncInto(url, size);
    const sql = postgresAt(url, { max: 1, onnotice: () => {} });
    const [server] = await sql<{ version: string }[]>`select current_setting('server_version') as version`;
    await sql.unsafe(`analyze`);
    await sql.end();
    const o = { goalSeconds, timeoutSeconds, repeats };
    const views = await timeViews(url, { ...o, schema: DEFAULT_SCHEMA });
    const masked = await asMaskedRole(url, (m) => timeViews(m, { ...o, schema: analystSchemaOf(DEFAULT_SCHEMA) }));
    const rows = views.map((v) => {
      const m = masked.find((x) => x.view === v.view);
      return { ...v, masked: m && { ...m, joins: undefined }, maskedRatio: ratioOf(v, m) };
    });
    const ratios = rows.map((r) => r.maskedRatio);
    const summary = {
      everyViewWithinGoal: rows.every((r) => r.withinGoal && r.masked?.withinGoal),
      worstMaskedRatio: ratios.includes(null) ? null : Math.max(...(ratios as number[])),
      sameRows: rows.every((r) => r.masked?.rows === r.rows),
    };
    const report = {
      bench: 'views',
      size,
      server: server!.version,
      goalSeconds,
      repeats,
      summary,
      synced,
      views: rows,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await own?.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
