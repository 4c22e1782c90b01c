import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
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
 * personal data (the analyst schema's masked views), and as the owner reading only that role's companies (a
 * condition on company_key, as the tables' row policy gives the role), the three alternating statement by
 * statement so all run on the same machine at the same moment; the best of `--repeats` runs counts for each.
 * `maskedRatio` is the masked role's slower statement over the owner's, `maskedOverByCompany` over the owner's
 * reading the same companies: what the masking costs beside the company filter every per-company read pays. It
 * first syncs the sandbox at that size into the warehouse, budget out of the way, then ANALYZEs it. Prints one
 * JSON object.
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

/** A statement's best time in seconds, to the tenth of a millisecond; null seconds once a run passed the timeout. */
interface Best<T> {
  value: T | null;
  seconds: number | null;
  timedOut?: boolean;
}

const NONE: Best<never> = { value: null, seconds: null };

/** One more run of a statement, kept when it is the best so far; none after one ran past the statement timeout. */
async function runOnce<T>(best: Best<T>, run: () => Promise<T>): Promise<Best<T>> {
  if (best.timedOut) return best;
  const t = performance.now();
  try {
    const value = await run();
    const seconds = Math.round((performance.now() - t) * 10) / 10_000;
    return best.seconds === null || seconds < best.seconds ? { value, seconds } : best;
  } catch (e) {
    if ((e as { code?: string }).code === '57014') return { value: null, seconds: null, timedOut: true };
    throw e;
  }
}

/** Each side's statement, run alternately `repeats` times, so all see the same machine. */
async function bestOfEach<T>(repeats: number, runs: (() => Promise<T>)[]): Promise<Best<T>[]> {
  const best: Best<T>[] = runs.map(() => NONE);
  for (let i = 0; i < repeats; i++) for (const [k, run] of runs.entries()) best[k] = await runOnce(best[k]!, run);
  return best;
}

interface Side {
  sql: postgres.Sql;
  schema: string;
  /** Only these companies' rows, by a condition on company_key: the owner reading what the masked role reads. */
  companies?: readonly string[];
}

/** The view as a side reads it: the whole view, or its companies' rows. */
function fromOf(side: Side, name: string): string {
  const from = `"${side.schema}"."${name}"`;
  if (!side.companies) return from;
  const keys = side.companies.map((k) => `'${k.replace(/'/g, "''")}'`).join(', ');
  return `(select * from ${from} where company_key in (${keys})) v`;
}

async function planOf(side: Side, name: string): Promise<PlanNode> {
  const from = fromOf(side, name);
  const explained = await runOnce(NONE, () =>
    side.sql.unsafe(`explain (analyze, format json) select count(*) from ${from}`),
  );
  const plan = explained.value ?? (await side.sql.unsafe(`explain (format json) select count(*) from ${from}`));
  return (plan[0]!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan;
}

/**
 * Times one view on each side (the owner, the owner by company, the masked role), their runs interleaved; the plan
 * (estimated against actual rows) is each side's own.
 */
async function timeView(name: string, sides: readonly Side[], o: TimeOptions): Promise<ViewTiming[]> {
  const count = (side: Side) => async () =>
    Number((await side.sql.unsafe(`select count(*)::bigint as n from ${fromOf(side, name)}`))[0]!.n);
  const first = (side: Side) => async () =>
    (await side.sql.unsafe(`select * from ${fromOf(side, name)} limit 100`)).length;
  const counts = await bestOfEach(o.repeats, sides.map(count));
  const firsts = await bestOfEach(o.repeats, sides.map(first));
  const timing = async (side: Side, i: number): Promise<ViewTiming> => {
    const seconds = [counts[i]!.seconds, firsts[i]!.seconds];
    return {
      view: name,
      rows: counts[i]!.value,
      countSeconds: counts[i]!.seconds,
      first100Seconds: firsts[i]!.seconds,
      withinGoal: seconds.every((s) => s !== null && s <= o.goalSeconds),
      joins: joinsOf(await planOf(side, name)),
    };
  };
  const out: ViewTiming[] = [];
  for (const [i, side] of sides.entries()) out.push(await timing(side, i));
  return out;
}

/** One view's timings: as the owner, as the owner reading the masked role's companies only, as the masked role. */
export interface ViewSides {
  owner: ViewTiming;
  ownerByCompany: ViewTiming;
  masked: ViewTiming;
}

/**
 * Times every `v_*` view as the owner (`url`), as the owner reading `companies` only, and as the masked role
 * (`maskedUrl`, granted those companies), each statement cut at the timeout.
 */
export async function timeViews(
  urls: { owner: string; masked: string },
  companies: readonly string[],
  o: TimeOptions,
): Promise<ViewSides[]> {
  const connect = (u: string) =>
    postgresAt(u, { max: 1, onnotice: () => {}, connection: { statement_timeout: o.timeoutSeconds * 1000 } });
  const owner: Side = { sql: connect(urls.owner), schema: DEFAULT_SCHEMA };
  const ownerByCompany: Side = { ...owner, companies };
  const masked: Side = { sql: connect(urls.masked), schema: analystSchemaOf(DEFAULT_SCHEMA) };
  try {
    const views = await owner.sql<{ name: string }[]>`
      select viewname as name from pg_views where schemaname = ${owner.schema} and viewname like 'v\\_%' order by viewname`;
    const out: ViewSides[] = [];
    for (const { name } of views) {
      const [a, b, c] = await timeView(name, [owner, ownerByCompany, masked], o);
      out.push({ owner: a!, ownerByCompany: b!, masked: c! });
    }
    return out;
  } finally {
    await Promise.all([owner.sql.end(), masked.sql.end()]);
  }
}

/** The masked role's time over the owner's, for the slower of its two statements. */
function ratioOf(owner: ViewTiming, masked: ViewTiming | undefined): number | null {
  const pairs = [
    [owner.countSeconds, masked?.countSeconds],
    [owner.first100Seconds, masked?.first100Seconds],
  ];
  if (pairs.some(([a, b]) => a === null || b === null || b === undefined)) return null;
  return Math.round(Math.max(...pairs.map(([a, b]) => b! / a!)) * 100) / 100;
}

/** A login granted every company without personal data, for as long as `run` takes. */
async function asMaskedRole<T>(url: string, run: (maskedUrl: string, companies: string[]) => Promise<T>): Promise<T> {
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
    return await run(u.toString(), companies);
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
    const timed = await asMaskedRole(url, (masked, companies) => timeViews({ owner: url, masked }, companies, o));
    const rows = timed.map((t) => ({
      ...t.owner,
      ownerByCompany: { ...t.ownerByCompany, joins: undefined },
      masked: { ...t.masked, joins: undefined },
      maskedRatio: ratioOf(t.owner, t.masked),
      maskedOverByCompany: ratioOf(t.ownerByCompany, t.masked),
    }));
    const ratios = rows.map((r) => r.maskedRatio);
    const byCompany = rows.map((r) => r.maskedOverByCompany);
    const summary = {
      everyViewWithinGoal: rows.every((r) => r.withinGoal && r.masked?.withinGoal),
      worstMaskedRatio: ratios.includes(null) ? null : Math.max(...(ratios as number[])),
      worstMaskedOverByCompany: byCompany.includes(null) ? null : Math.max(...(byCompany as number[])),
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
