import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runModel } from '../../src/push/model-run.ts';
import { addModel } from '../../src/push/models.ts';
import { previewPush } from '../../src/push/preview.ts';
import { personalData } from '../../src/resources/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import type { Individual } from '../../src/source/schemas/index.ts';
import { runStreams, selectStreams, type SyncSummary } from '../../src/sync/runner.ts';
import { grantAccess } from '../../src/warehouse/access.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { VIEW_NAMES } from '../../src/warehouse/descriptions.ts';
import { erase } from '../../src/warehouse/personal-data/admin.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { divergence, spansWithinBound, summarizeDivergence, withinBounds } from '../support/convergence.ts';
import { freshDatabase } from '../support/db.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * The warehouse on a Citus cluster (a coordinator and two workers), as an operator gets it once `wfsync migrate`
 * has run (migrate.citus.test.ts): four companies synced from the sandbox over HTTP, three days of changes, the
 * views, access per company, a rebalance, an erasure and push. Runs under `npm run test:citus` alone.
 */

/** Keys whose shards lie on both workers of the test cluster (checked below, not assumed). */
const COMPANIES = ['a', 'b', 'c', 'd'];
const S = 'workforce';
const ANALYST_SCHEMA = 'workforce_analyst';
const PASSWORD = 'an analyst pass phrase';
/** Roles belong to the whole cluster, which a given WFS_TEST_CITUS_URL keeps from one run to the next. */
const ROLE = `citus_${randomBytes(4).toString('hex')}`;

let sandbox: RunningSandbox;
let url: string;
let admin: postgres.Sql;
const syncs = new Map<string, TestSync>();
let wh: Warehouse;
const logins: postgres.Sql[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 21, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  url = await freshDatabase();
  admin = postgres(url, { max: 1, onnotice: () => {} });
}, 120_000);

afterAll(async () => {
  await Promise.all(logins.map((l) => l.end()));
  for (const s of syncs.values()) await s.close();
  await admin?.end();
  await sandbox?.close();
});

const syncAll = async (streams = selectStreams()): Promise<SyncSummary[]> => {
  const out: SyncSummary[] = [];
  for (const s of syncs.values()) out.push(await runStreams(s.ctx, streams));
  return out;
};

const failed = (summaries: SyncSummary[]) =>
  summaries.flatMap((s) => s.streams.filter((o) => o.outcome !== 'ok').map((o) => `${s.companyKey}/${o.stream}`));

describe('the sync on the cluster', () => {
  it('a full sync of four companies equals the service row for row, their shards on both workers', {
    timeout: 600_000,
  }, async () => {
    for (const key of COMPANIES) {
      const s = await openTestSync(sandbox, { databaseUrl: url, companyKey: key });
      syncs.set(key, s);
      await s.warehouse.sql`insert into ${s.warehouse.sql(S)}.companies (company_key, base_url, api_key_sealed)
        values (${key}, ${sandbox.url}, 'v1.sealed') on conflict do nothing`;
    }
    wh = syncs.get('a')!.warehouse;
    expect(failed(await syncAll())).toEqual([]);
    for (const key of COMPANIES) expect(summarizeDivergence(await divergence(wh, sandbox.data, key))).toEqual({});
    const perWorker = await admin<{ port: number; rows: number }[]>`
      select s.nodeport as port, sum(r.result::bigint)::int as rows
      from run_command_on_shards(${`${S}.shift_assignments`}, 'select count(*) from %s') r
      join citus_shards s using (shardid) group by 1 order by 1`;
    expect(perWorker).toHaveLength(2);
    expect(perWorker.every((w) => w.rows > 0)).toBe(true);
  });

  it('72 hours later, two incremental syncs equal the service again', { timeout: 600_000 }, async () => {
    sandbox.data.advance(72);
    const first = await syncAll();
    expect(failed(first)).toEqual([]);
    const second = await syncAll();
    expect(failed(second)).toEqual([]);
    const outcomes = [...first, ...second].find((s) => s.companyKey === 'a')!.streams;
    const spans = spansWithinBound(72, outcomes, sandbox.data.now());
    for (const key of COMPANIES) {
      const d = withinBounds(await divergence(wh, sandbox.data, key, spans), 72, outcomes, spans);
      expect(summarizeDivergence(d), key).toEqual({});
    }
  });

  it('every v_* view answers', async () => {
    for (const view of VIEW_NAMES) {
      const [r] = await wh.sql.unsafe<{ n: number }[]>(`select count(*)::int as n from "${S}"."${view}"`);
      expect(r!.n, view).toBeGreaterThanOrEqual(0);
    }
  });
});

const login = (role: string) => {
  const u = new URL(url);
  u.username = role;
  u.password = PASSWORD;
  const sql = postgres(u.toString(), { max: 1, onnotice: () => {} });
  logins.push(sql);
  return sql;
};

describe('access per company on the cluster', () => {
  const counts = (sql: postgres.Sql, schema = ANALYST_SCHEMA) =>
    sql<{ company: string; n: number }[]>`
      select company_key as company, count(*)::int as n from ${sql(schema)}.individuals group by 1 order by 1`;

  it('a role granted company a reads its rows and no other; a role granted nothing reads none', async () => {
    const [owner] = await admin<
      { n: number }[]
    >`select count(*)::int as n from ${admin(S)}.individuals where company_key = 'a'`;
    await grantAccess(wh, { role: `${ROLE}_analyst`, companies: ['a'], personal: false, createWithPassword: PASSWORD });
    expect(await counts(login(`${ROLE}_analyst`))).toEqual([{ company: 'a', n: owner!.n }]);
    await admin.unsafe(`create role ${ROLE}_nobody login password '${PASSWORD}'`);
    await admin.unsafe(`grant usage on schema ${S} to ${ROLE}_nobody`);
    await admin.unsafe(`grant select (company_key) on ${S}.individuals to ${ROLE}_nobody`);
    expect(await counts(login(`${ROLE}_nobody`), S)).toEqual([]);
  });

  it("a role granted a with personal data and b without reads every analyst view with select *: a's e-mails, none of b's", {
    timeout: 300_000,
  }, async () => {
    await grantAccess(wh, { role: `${ROLE}_hr`, companies: ['a'], personal: true, createWithPassword: PASSWORD });
    await grantAccess(wh, { role: `${ROLE}_hr`, companies: ['b'], personal: false });
    const hr = login(`${ROLE}_hr`);
    const views = await admin<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${ANALYST_SCHEMA} and c.relkind = 'v' order by 1`;
    expect(views.length).toBeGreaterThan(40 + VIEW_NAMES.length);
    const refused: string[] = [];
    for (const { name } of views) {
      await hr
        .unsafe(`select * from "${ANALYST_SCHEMA}"."${name}"`)
        .catch((e: Error) => refused.push(`${name}: ${e.message}`));
    }
    expect(refused).toEqual([]);
    const rows = await hr<{ company: string; email: string | null }[]>`
      select company_key as company, primary_email_address as email from ${hr(ANALYST_SCHEMA)}.individuals`;
    expect(new Set(rows.map((r) => r.company))).toEqual(new Set(['a', 'b']));
    expect(rows.some((r) => r.company === 'a' && r.email?.includes('@'))).toBe(true);
    expect(rows.filter((r) => r.company === 'b' && r.email !== null)).toEqual([]);
    // On the coordinator, where analysts connect, the tables themselves stay out of reach.
    const direct = await hr
      .unsafe(`select primary_email_address from ${S}.individuals`)
      .catch((e: { code?: string }) => e.code);
    expect(direct).toBe('42501');
  });
});

describe('a rebalance on the cluster', () => {
  it('leaves a granted role reading the shards it moved, once the next migrate has run', {
    timeout: 300_000,
  }, async () => {
    const [from] = await admin<{ shard: string; host: string; port: number }[]>`
      select shardid::text as shard, nodename as host, nodeport as port from citus_shards
      where shardid = get_shard_id_for_distribution_column(${`${S}.individuals`}, 'b')`;
    const [to] = await admin<{ host: string; port: number }[]>`
      select nodename as host, nodeport as port from pg_dist_node
      where noderole = 'primary' and groupid <> 0 and nodeport <> ${from!.port}`;
    await admin`select citus_move_shard_placement(${from!.shard}::bigint, ${from!.host}, ${from!.port}, ${to!.host},
      ${to!.port}, shard_transfer_mode => 'block_writes')`;
    await wh.migrate();
    const hr = login(`${ROLE}_hr`);
    const [b] = await hr<{ n: number }[]>`
      select count(*)::int as n from ${hr(ANALYST_SCHEMA)}.individuals where company_key = 'b'`;
    expect(b!.n).toBeGreaterThan(0);
  });
});

describe('erasure and push on the cluster', () => {
  it("erase removes the person's values; the same person of another company keeps them", async () => {
    const person = (sandbox.data.truth('individuals') as Individual[]).find((i) => i.PrimaryEmailAddress)!;
    const email = async (key: string) =>
      (
        await wh.sql<{ email: string | null }[]>`
          select primary_email_address as email from ${wh.sql(S)}.individuals where company_key = ${key} and service_id = ${person.ServiceId}`
      )[0]!.email;
    await erase(wh, personalData, 'b', { serviceId: person.ServiceId }, 'test');
    expect(await email('b')).toBeNull();
    expect(await email('a')).toBe(person.PrimaryEmailAddress);
  });

  it('a push dry run answers, and a model run queues only what differs', async () => {
    const intake = { warehouse: wh, sealer: createSealer('citus-test-secret-0123456789'), companies: [{ key: 'a' }] };
    const person = (sandbox.data.truth('individuals') as Individual[]).find((i) => i.EmployeeNumber && i.FirstName)!;
    const preview = await previewPush(intake, 'individual', [{ ServiceId: person.ServiceId, FirstName: 'Renamed' }]);
    expect(preview).toMatchObject({ dryRun: true, valid: 1, updates: 1 });
    expect(preview.changes[0]!.changed).toEqual({ FirstName: [person.FirstName, 'Renamed'] });

    await admin.unsafe(`create schema hr`);
    await admin.unsafe(`create table hr.people (employee_number text primary key, first_name text)`);
    await admin.unsafe(
      `insert into hr.people select employee_number, first_name from ${S}.individuals
       where company_key = 'a' and employee_number is not null and first_name is not null and _deleted_at is null`,
    );
    const query = `select employee_number as "EmployeeNumber", first_name as "FirstName" from hr.people`;
    await addModel(wh, { name: 'hr', company: 'a', kind: 'individuals', query, keyField: 'EmployeeNumber' }, ['a']);
    expect(await runModel(intake, 'hr')).toMatchObject({ outcome: 'ok', changed: 0, queued: 0 });
    await admin`update hr.people set first_name = 'Renamed' where employee_number = ${person.EmployeeNumber!}`;
    expect(await runModel(intake, 'hr')).toMatchObject({ outcome: 'ok', changed: 1, queued: 1 });
  });
});

it('runs on the cluster the tests were given', () => {
  expect(inject('citus')?.nodes).toHaveLength(3);
});
