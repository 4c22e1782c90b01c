import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { AccessError, grantAccess, listAccess, revokeAccess } from '../../src/warehouse/access.ts';
import { withdrawViews } from '../../src/warehouse/access-policies.ts';
import { personalColumnsOf } from '../../src/warehouse/personal-columns.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase, giveDatabase } from '../support/db.ts';
import { HOSTILE_VALUES } from '../support/hostile.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * Access per company against real Postgres roles. The warehouse is owned by a role that is not a superuser (a
 * superuser bypasses row-level security, and would prove nothing), and two companies, `a` and `b`, are synced
 * from the sandbox through it. Analysts' roles then connect with their own logins.
 */

const suffix = randomBytes(4).toString('hex');
const OWNER = `wfs_owner_${suffix}`;
const ANALYST = `wfs_analyst_${suffix}`;
const PERSONAL = `wfs_hr_${suffix}`;
const PASSWORD = "an analyst's pass phrase";

let sandbox: RunningSandbox;
let admin: postgres.Sql;
let adminUrl: string;
let ownerUrl: string;
let syncA: TestSync;
let syncB: TestSync;
let wh: Warehouse;
const logins: postgres.Sql[] = [];

const urlAs = (user: string, password: string) => {
  const u = new URL(adminUrl);
  u.username = user;
  u.password = password;
  return u.toString();
};

function login(user: string): postgres.Sql {
  const sql = postgres(urlAs(user, PASSWORD), { max: 1, onnotice: () => {} });
  logins.push(sql);
  return sql;
}

/** Every table of the schema with a company_key, and every view. */
async function relations(kind: 'r' | 'v'): Promise<string[]> {
  const rows = await admin<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'workforce' and c.relkind = ${kind}
      and (${kind} = 'v' or exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'company_key'))
    order by 1`;
  return rows.map((r) => r.name);
}

/** A query's rows, or the SQLSTATE it was refused with. */
async function attempt<T extends object>(q: Promise<T[]>): Promise<T[] | string> {
  return q.catch((e: unknown) => String((e as { code?: string }).code));
}

const DENIED = '42501';

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 11, size: 'tiny', rateLimit: { limit: 100, windowMs: 1000 } });
  // Empty: the owner migrates the warehouse itself, as a superuser's migration would leave objects it cannot use.
  adminUrl = await freshDatabase({ empty: true });
  admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create role ${OWNER} login createrole password 'owner-pass'`);
  await giveDatabase(adminUrl, OWNER);
  ownerUrl = urlAs(OWNER, 'owner-pass');
  syncA = await openTestSync(sandbox, { databaseUrl: ownerUrl, companyKey: 'a' });
  syncB = await openTestSync(sandbox, { databaseUrl: ownerUrl, companyKey: 'b' });
  wh = syncA.warehouse;
  await wh.sql`insert into workforce.companies (company_key, base_url, api_key_sealed) values ('a', ${sandbox.url}, 'v1.sealed-a'), ('b', ${sandbox.url}, 'v1.sealed-b')`;
  await wh.sql`insert into workforce.events (company_key, event) values ('a', 'company_added'), ('b', 'company_added')`;
  for (const t of [syncA, syncB]) {
    const summary = await runStreams(t.ctx, selectStreams());
    expect(summary.streams.filter((s) => s.outcome !== 'ok')).toEqual([]);
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(logins.map((l) => l.end()));
  await syncA?.close();
  await syncB?.close();
  await sandbox?.close();
  await admin?.end();
});

describe('row-level security', () => {
  it('is on in every table with a company_key, and the owner syncing through it wrote both companies', async () => {
    const tables = await relations('r');
    const off = await admin<{ name: string }[]>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'workforce' and c.relname = any (${tables}::text[])
        and (not c.relrowsecurity or not exists (select 1 from pg_policy p where p.polrelid = c.oid))`;
    expect(off).toEqual([]);
    const [counts] = await wh.sql<{ a: number; b: number }[]>`
      select count(*) filter (where company_key = 'a')::int as a, count(*) filter (where company_key = 'b')::int as b from workforce.individuals`;
    expect(counts!.a).toBeGreaterThan(0);
    expect(counts!.b).toBe(counts!.a);
  });

  it("leaves the sync's own queries without a policy: its plans never read the grants", async () => {
    const plan = async (sql: postgres.Sql) =>
      (
        await sql.unsafe<{ 'QUERY PLAN': string }[]>(
          `explain select * from workforce.shift_assignments where company_key = 'a'`,
        )
      )
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    expect(await plan(wh.sql)).not.toMatch(/access_grants|granted_companies|InitPlan/);
    await grantAccess(wh, { role: `${ANALYST}_plan`, companies: ['a'], personal: true, createWithPassword: PASSWORD });
    // On Citus the policy calls granted_companies() bare (no subquery there), in the shard's index condition.
    expect(await plan(login(`${ANALYST}_plan`))).toMatch(
      inject('citus') ? /Index Cond: .*granted_companies/ : /InitPlan/,
    );
    await revokeAccess(wh, `${ANALYST}_plan`);
  });
});

describe('a role granted company a without personal columns', () => {
  let analyst: postgres.Sql;

  beforeAll(async () => {
    await grantAccess(wh, { role: ANALYST, companies: ['a'], personal: false, createWithPassword: PASSWORD });
    analyst = login(ANALYST);
  });

  it('reads only company a, in every table', async () => {
    const seen: Record<string, { a: number; other: number }> = {};
    for (const table of await relations('r')) {
      const rows = await attempt(
        analyst.unsafe<{ a: number; other: number }[]>(
          `select count(*) filter (where company_key = 'a')::int as a, count(*) filter (where company_key <> 'a')::int as other from workforce."${table}"`,
        ),
      );
      if (typeof rows === 'string') throw new Error(`${table}: refused with ${rows}`);
      seen[table] = rows[0]!;
    }
    expect(Object.entries(seen).filter(([, c]) => c.other > 0)).toEqual([]);
    const [truth] = await wh.sql<
      { n: number }[]
    >`select count(*)::int as n from workforce.shift_assignments where company_key = 'a'`;
    expect(seen.shift_assignments!.a).toBe(truth!.n);
    expect(seen.individuals!.a).toBeGreaterThan(0);
    // Company b has rows the owner sees in most tables, so the zeroes above are rows withheld, not rows missing.
    const [withB] = await wh.sql<
      { n: number }[]
    >`select count(*)::int as n from workforce.individual_certifications where company_key = 'b'`;
    expect(withB!.n).toBeGreaterThan(0);
  });

  it('reads no personal column; select * is refused; views over personal columns are refused, the others show company a only', async () => {
    for (const table of await relations('r')) {
      for (const column of personalColumnsOf(table)) {
        expect([
          table,
          column,
          await attempt(analyst.unsafe(`select "${column}" from workforce."${table}" limit 1`)),
        ]).toEqual([table, column, DENIED]);
      }
    }
    expect(await attempt(analyst`select * from workforce.individuals limit 1`)).toBe(DENIED);
    const [row] = await analyst`select service_id, job_title, status from workforce.individuals limit 1`;
    expect(row!.service_id).toBeTypeOf('number');

    const outcome: Record<string, string> = {};
    for (const view of await relations('v')) {
      const rows = await attempt(
        analyst.unsafe<{ other: number; n: number }[]>(
          `select count(*)::int as n, count(*) filter (where company_key <> 'a')::int as other from workforce."${view}"`,
        ),
      );
      outcome[view] =
        typeof rows === 'string' ? rows : rows[0]!.other === 0 ? 'only a' : `${rows[0]!.other} rows of others`;
    }
    // A view reading a personal column anywhere (v_open_shifts tests the assignee's names for null) is refused.
    // The HR views count people without naming them, so they are readable; v_hours_weekly names each person.
    expect(outcome).toEqual({
      v_approved_leave_hours: 'only a',
      v_course_completion: 'only a',
      v_credential_compliance: 'only a',
      v_credentials_expiring: DENIED,
      v_form_answers: DENIED,
      v_headcount_daily: 'only a',
      v_hires_and_exits_monthly: 'only a',
      v_hours_weekly: DENIED,
      v_open_shifts: DENIED,
      v_requirements_not_met: DENIED,
      v_shifts_without_current_credential: DENIED,
      v_time_off_monthly: 'only a',
    });
  });

  it('reads nothing of the grants of other roles, nor any secret', async () => {
    expect(await analyst`select role, company_key from workforce.access_grants`).toEqual([
      { role: ANALYST, company_key: 'a' },
    ]);
    expect(await attempt(analyst`select api_key_sealed from workforce.companies`)).toBe(DENIED);
    expect(await analyst`select company_key from workforce.companies`).toEqual([{ company_key: 'a' }]);
  });

  it('may not write', async () => {
    expect(await attempt(analyst`delete from workforce.events`)).toBe(DENIED);
    expect(await attempt(analyst`update workforce.individuals set status = 'x'`)).toBe(DENIED);
  });

  it('reads nothing once revoked, and a later sync still writes', async () => {
    await grantAccess(wh, { role: ANALYST, companies: ['b'], personal: false });
    const [both] = await analyst<
      { n: number }[]
    >`select count(distinct company_key)::int as n from workforce.individuals`;
    expect(both!.n).toBe(2);
    expect(await revokeAccess(wh, ANALYST, ['b'])).toEqual({ left: ['a'] });
    expect(await analyst`select distinct company_key from workforce.individuals`).toEqual([{ company_key: 'a' }]);
    expect(await revokeAccess(wh, ANALYST)).toEqual({ left: [] });
    expect(await attempt(analyst`select company_key from workforce.individuals`)).toBe(DENIED);
    expect(await attempt(analyst`select count(*) from workforce.v_open_shifts`)).toBe(DENIED);
    expect((await listAccess(wh)).map((g) => g.role)).not.toContain(ANALYST);

    const summary = await runStreams(syncA.ctx, selectStreams(['individuals']));
    expect(summary.streams.map((s) => s.outcome)).toEqual(['ok']);
  });
});

describe('a role granted company a with --personal', () => {
  it('reads the personal columns of company a and of no other', async () => {
    await grantAccess(wh, { role: PERSONAL, companies: ['a'], personal: true, createWithPassword: PASSWORD });
    const hr = login(PERSONAL);
    const rows = await hr<{ company_key: string; primary_email_address: string | null; first_name: string }[]>`
      select company_key, primary_email_address, first_name from workforce.individuals`;
    expect(new Set(rows.map((r) => r.company_key))).toEqual(new Set(['a']));
    expect(rows.some((r) => typeof r.primary_email_address === 'string' && r.primary_email_address.includes('@'))).toBe(
      true,
    );
    const [answers] = await hr<{ n: number; other: number }[]>`
      select count(*)::int as n, count(*) filter (where company_key <> 'a')::int as other from workforce.v_shifts_without_current_credential`;
    expect(answers!.other).toBe(0);
    expect(await attempt(hr`select api_key_sealed from workforce.companies`)).toBe(DENIED);
  });
});

describe('a table a later migration adds with a company_key', () => {
  it('is covered at the next migration, for the roles already granted', async () => {
    const later = `${ANALYST}_later`;
    await grantAccess(wh, { role: later, companies: ['a'], personal: false, createWithPassword: PASSWORD });
    await wh.sql`create table workforce.later_facts (company_key text not null, amount int not null)`;
    await wh.sql`insert into workforce.later_facts values ('a', 1), ('b', 2), ('b', 3)`;
    await wh.migrate();
    expect(await login(later)`select company_key, amount from workforce.later_facts`).toEqual([
      { company_key: 'a', amount: 1 },
    ]);
    const [owner] = await wh.sql<{ n: number }[]>`select count(*)::int as n from workforce.later_facts`;
    expect(owner!.n).toBe(3);
  });
});

describe('a view a later migration replaces', () => {
  it('is withheld from granted roles until it runs with their rights again', async () => {
    const role = `${ANALYST}_views`;
    await grantAccess(wh, { role, companies: ['a'], personal: false, createWithPassword: PASSWORD });
    const analyst = login(role);
    const companies = async (sql: postgres.Sql) =>
      (
        await sql<{ c: string }[]>`select distinct company_key as c from workforce.v_approved_leave_hours order by 1`
      ).map((r) => r.c);
    expect(await companies(wh.sql)).toEqual(['a', 'b']);
    expect(await companies(analyst)).toEqual(['a']);

    // What migrate does before pending migrations, then a migration replacing the view as it is.
    await wh.sql.begin((tx) => withdrawViews(tx, 'workforce'));
    const [view] = await wh.sql<
      { def: string }[]
    >`select pg_get_viewdef('workforce.v_approved_leave_hours'::regclass) as def`;
    await wh.sql.unsafe(`create or replace view workforce.v_approved_leave_hours as ${view!.def}`);
    expect(await attempt(analyst`select company_key from workforce.v_approved_leave_hours`)).toBe(DENIED);

    await wh.migrate();
    expect(await companies(analyst)).toEqual(['a']);
  });
});

describe('a grant the warehouse refuses', () => {
  const grants = () => wh.sql`select role, company_key, personal from workforce.access_grants order by 1, 2`;
  const roleExists = async (role: string) => (await admin`select 1 from pg_roles where rolname = ${role}`).length > 0;
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => 'granted',
      (e: unknown) => (e instanceof AccessError ? `${e.kind}: ${e.message}` : String(e)),
    );

  it('names the company, role or rule in one line and changes nothing', async () => {
    const before = await grants();
    const ghost = `${ANALYST}_ghost`;
    expect(
      await refusal(
        grantAccess(wh, { role: ghost, companies: ['a', 'nope'], personal: false, createWithPassword: PASSWORD }),
      ),
    ).toMatch(/^unknown_company: company "nope"/);
    expect(await roleExists(ghost)).toBe(false);
    expect(await refusal(grantAccess(wh, { role: ghost, companies: ['a'], personal: false }))).toMatch(
      /^unknown_role: role ".*_ghost" does not exist/,
    );
    expect(
      await refusal(grantAccess(wh, { role: PERSONAL, companies: ['b'], personal: false, createWithPassword: 'x' })),
    ).toMatch(/^role_exists:/);
    expect(await refusal(grantAccess(wh, { role: OWNER, companies: ['a'], personal: false }))).toMatch(
      /^protected_role: .*sync's own role/,
    );
    expect(
      await refusal(grantAccess(wh, { role: new URL(adminUrl).username, companies: ['a'], personal: false })),
    ).toMatch(/^protected_role: .*superuser/);
    expect(await refusal(grantAccess(wh, { role: PERSONAL, companies: ['b'], personal: false }))).toMatch(
      /^mixed_personal: role ".*" reads company "a" with personal columns/,
    );
    expect(await refusal(revokeAccess(wh, PERSONAL, ['b']))).toMatch(/^not_granted: .*company "b"/);
    expect(await refusal(grantAccess(wh, { role: 'x'.repeat(64), companies: ['a'], personal: false }))).toMatch(
      /^invalid:/,
    );
    expect(await grants()).toEqual(before);
  });

  it('refuses hostile role names as one of its kinds, never with a database message', async () => {
    const before = await grants();
    for (const role of HOSTILE_VALUES) {
      const refused = await refusal(grantAccess(wh, { role, companies: ['a'], personal: false }));
      expect([role, refused]).toEqual([role, expect.stringMatching(/^(invalid|unknown_role): /)]);
      expect(await refusal(revokeAccess(wh, role))).toMatch(/^(invalid|not_granted): /);
    }
    expect(await grants()).toEqual(before);
  });

  it('lets a role be named anything Postgres allows, quoted', async () => {
    const odd = `Odd "name"; drop table x ${suffix}`;
    await grantAccess(wh, { role: odd, companies: ['a'], personal: false, createWithPassword: PASSWORD });
    const [row] = await login(odd)<
      { n: number }[]
    >`select count(distinct company_key)::int as n from workforce.individuals`;
    expect(row!.n).toBe(1);
    await revokeAccess(wh, odd);
  });
});
