import { loadavg } from 'node:os';
import postgres from 'postgres';
import { personalCatalog, targets } from '../src/resources/index.ts';
import { grantAccess } from '../src/warehouse/access.ts';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection.ts';
import { writePage } from '../src/warehouse/upsert.ts';
import { startPostgres } from '../test/support/services.ts';
import { postgresCpuSeconds } from './sync-process.ts';

/**
 * What row-level security costs the sync: writePage of shift assignments (200-row pages, a first sync of fresh
 * keys, then the same pages unchanged) by the warehouse's owner, a role that is not a superuser, with the
 * policies on every table and a role granted a company, against the same with row security switched off.
 * Rounds alternate the two, so drift in the machine's load falls on both. Also prints whether the owner's plan
 * of a read takes the policy. Prints one JSON object.
 *
 *   ROWS=20000 ROUNDS=4 node --import tsx bench/access.ts
 */

const ROWS = Number(process.env.ROWS ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 4);
const PAGE = 200;
const target = targets['shift-assignments'];

function item(i: number): Record<string, unknown> {
  const start = new Date(Date.UTC(2024, 0, 1) + (i % 5000) * 3_600_000).toISOString().replace('Z', '+00:00');
  return {
    ShiftAssignmentId: i + 1,
    ScheduleId: 1 + (i % 40),
    ScheduleName: `Schedule ${1 + (i % 40)}`,
    ShiftId: 1 + (i % 300),
    ShiftName: `Shift ${1 + (i % 300)}`,
    JobTitleId: 1 + (i % 12),
    JobTitleName: `Job ${1 + (i % 12)}`,
    StartDateTime: start,
    EndDateTime: null,
    Type: 'Shift Assignment',
    Assignee:
      i % 7 === 0
        ? null
        : { ServiceId: 1000 + (i % 900), EmployeeNumber: `E${1000 + (i % 900)}`, FirstName: 'Dana', LastName: 'Reyes' },
    VehicleName: null,
    ClockInDateTime: null,
    ClockOutDateTime: null,
  };
}

interface PageCost {
  wallMs: number;
  postgresCpuMs: number;
}

/** Wall time and Postgres's CPU (server and backends, from /proc) per page. */
async function perPage(
  wh: Warehouse,
  dataDir: string,
  company: string,
  items: Record<string, unknown>[],
): Promise<PageCost> {
  const syncedAt = new Date();
  const pages = Math.ceil(items.length / PAGE);
  const cpuBefore = postgresCpuSeconds(dataDir) ?? 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < items.length; i += PAGE) {
    await writePage(wh, { target, companyKey: company, items: items.slice(i, i + PAGE), syncedAt, stream: 'bench' });
  }
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6 / pages;
  return { wallMs, postgresCpuMs: (((postgresCpuSeconds(dataDir) ?? 0) - cpuBefore) * 1000) / pages };
}

async function setRowSecurity(admin: postgres.Sql, on: boolean): Promise<void> {
  const tables = await admin<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'workforce' and c.relkind = 'r'
      and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'company_key')`;
  for (const t of tables)
    await admin.unsafe(`alter table workforce."${t.name}" ${on ? 'enable' : 'disable'} row level security`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () => loadavg().map((l) => +l.toFixed(2));

const loadAtStart = load();
const pg = await startPostgres();
const admin = postgres(pg.url.replace(/\/postgres$/, '/bench_access'), { max: 1, onnotice: () => {} });
const root = postgres(pg.url, { max: 1, onnotice: () => {} });
await root.unsafe(`create role bench_owner login createrole password 'bench'`);
await root.unsafe(`create database bench_access owner bench_owner`);
await root.end();
const wh = await openWarehouse({
  databaseUrl: pg.url.replace('wfsync:wfsync', 'bench_owner:bench').replace(/\/postgres$/, '/bench_access'),
  catalog: personalCatalog,
});
try {
  await wh.migrate();
  await wh.sql`insert into workforce.companies (company_key, base_url, api_key_sealed) values ('a', 'http://x', 'v1.x')`;
  await grantAccess(wh, { role: 'bench_analyst', companies: ['a'], personal: false, createWithPassword: 'bench' });
  const items = Array.from({ length: ROWS }, (_, i) => item(i));
  const runs = {
    policies: { first: [] as PageCost[], unchanged: [] as PageCost[] },
    noRowSecurity: { first: [] as PageCost[], unchanged: [] as PageCost[] },
  };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of round % 2 === 0
      ? (['policies', 'noRowSecurity'] as const)
      : (['noRowSecurity', 'policies'] as const)) {
      await setRowSecurity(admin, mode === 'policies');
      const company = `r${round}-${mode}`;
      runs[mode].first.push(await perPage(wh, pg.dataDir, company, items));
      runs[mode].unchanged.push(await perPage(wh, pg.dataDir, company, items));
    }
  }
  await setRowSecurity(admin, true);
  const plan = (
    await wh.sql.unsafe<{ 'QUERY PLAN': string }[]>(
      `explain select * from workforce.shift_assignments where company_key = 'a'`,
    )
  )
    .map((r) => r['QUERY PLAN'])
    .join('\n');
  const of = (xs: PageCost[], k: keyof PageCost) => xs.map((x) => x[k]);
  const summary = (xs: PageCost[]) => ({
    wallMsPerPage: +median(of(xs, 'wallMs')).toFixed(2),
    postgresCpuMsPerPage: +median(of(xs, 'postgresCpuMs')).toFixed(2),
    postgresCpuRuns: of(xs, 'postgresCpuMs').map((x) => +x.toFixed(2)),
  });
  const ratio = (k: 'first' | 'unchanged', c: keyof PageCost) =>
    +(median(of(runs.policies[k], c)) / median(of(runs.noRowSecurity[k], c))).toFixed(3);
  console.log(
    JSON.stringify(
      {
        rows: ROWS,
        pageRows: PAGE,
        rounds: ROUNDS,
        ownerIsSuperuser: false,
        withPolicies: { first: summary(runs.policies.first), unchanged: summary(runs.policies.unchanged) },
        withoutRowSecurity: {
          first: summary(runs.noRowSecurity.first),
          unchanged: summary(runs.noRowSecurity.unchanged),
        },
        policiesOverNone: {
          postgresCpu: { first: ratio('first', 'postgresCpuMs'), unchanged: ratio('unchanged', 'postgresCpuMs') },
          wall: { first: ratio('first', 'wallMs'), unchanged: ratio('unchanged', 'wallMs') },
        },
        ownerPlanReadsGrants: /access_grants|InitPlan/.test(plan),
        loadAtStart,
        loadAtEnd: load(),
      },
      null,
      2,
    ),
  );
} finally {
  await wh.close();
  await admin.end();
  await pg.stop();
}
