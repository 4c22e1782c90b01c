import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { AccessError, grantAccess, listAccess, revokeAccess } from '../../src/warehouse/access.ts';
import { personalColumns } from '../../src/resources/index.ts';
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

/** What analysts read: the analyst schema's view of a table or `v_*` view. */
const analystView = (name: string) => `workforce_analyst."${name}"`;

/** Postgres keeps the first 63 bytes of a longer name. */
const asStored = (name: string) => Buffer.from(name).subarray(0, 63).toString('utf8');

/** A query's rows, or the SQLSTATE it was refused with. */
async function attempt<T extends object>(q: Promise<T[]>): Promise<T[] | string> {
  return q.catch((e: unknown) => String((e as { code?: string }).code));
}

const DENIED = '42501';

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 11, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
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
    const analystPlan = (
      await login(`${ANALYST}_plan`).unsafe<{ 'QUERY PLAN': string }[]>(
        `explain select * from workforce_analyst.shift_assignments where company_key = 'a'`,
      )
    )
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    // On Citus the policy calls granted_companies() bare (no subquery there), in the shard's index condition.
    expect(analystPlan).toMatch(inject('citus') ? /Index Cond: .*granted_companies/ : /InitPlan/);
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
          `select count(*) filter (where company_key = 'a')::int as a, count(*) filter (where company_key <> 'a')::int as other from ${analystView(table)}`,
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

  it('reads every table and view with select *, personal columns null, and only company a', async () => {
    const personal = personalColumns();
    for (const table of await relations('r')) {
      const rows = await attempt(analyst.unsafe<Record<string, unknown>[]>(`select * from ${analystView(table)}`));
      if (typeof rows === 'string') throw new Error(`${table}: refused with ${rows}`);
      const masked = [...(personal[table] ?? []).map(asStored), '_extra'];
      const seen = rows.flatMap((r) =>
        masked.filter((c) => r[c] !== undefined && r[c] !== null).map((c) => `${table}.${c}`),
      );
      expect(seen).toEqual([]);
      expect(rows.filter((r) => r.company_key !== 'a')).toEqual([]);
    }
    const [row] =
      await analyst`select service_id, job_title, status, first_name from workforce_analyst.individuals limit 1`;
    expect(row!.service_id).toBeTypeOf('number');
    expect(row!.first_name).toBeNull();

    const outcome: Record<string, string> = {};
    for (const view of await relations('v')) {
      const rows = await attempt(analyst.unsafe<Record<string, unknown>[]>(`select * from ${analystView(view)}`));
      outcome[view] =
        typeof rows === 'string' ? rows : rows.some((r) => r.company_key !== 'a') ? 'rows of others' : 'only a';
    }
    expect(Object.entries(outcome).filter(([, o]) => o !== 'only a')).toEqual([]);
    expect(Object.keys(outcome).length).toBeGreaterThanOrEqual(12);
  });

  it('reads nothing of the tables themselves, and no masked value through a filter or an error', async () => {
    expect(await attempt(analyst`select company_key from workforce.individuals limit 1`)).toBe(DENIED);
    expect(await attempt(analyst`select count(*) from workforce.v_open_shifts`)).toBe(DENIED);
    const [known] = await wh.sql<{ email: string; name: string }[]>`
      select primary_email_address as email, last_name as name from workforce.individuals
      where company_key = 'a' and primary_email_address is not null limit 1`;
    const [byFilter] = await analyst<{ n: number }[]>`
      select count(*)::int as n from workforce_analyst.individuals where primary_email_address = ${known!.email} or last_name = ${known!.name}`;
    expect(byFilter!.n).toBe(0);
    const cast = await attempt(analyst`select primary_email_address::int as n from workforce_analyst.individuals`);
    expect(typeof cast === 'string' ? cast : 'answered').toBe('answered');
    const raws = await analyst`select raw from workforce_analyst.sync_rejects where raw is not null`;
    expect(raws).toEqual([]);
  });

  it('reads nothing of the grants of other roles, nor any secret', async () => {
    expect(await analyst`select role, company_key from workforce_analyst.access_grants`).toEqual([
      { role: ANALYST, company_key: 'a' },
    ]);
    expect(await analyst`select company_key, api_key_sealed from workforce_analyst.companies`).toEqual([
      { company_key: 'a', api_key_sealed: null },
    ]);
  });

  it('may not write', async () => {
    expect(await attempt(analyst`delete from workforce_analyst.events`)).toBe(DENIED);
    expect(await attempt(analyst`update workforce_analyst.individuals set status = 'x'`)).toBe(DENIED);
    expect(await attempt(analyst`delete from workforce.events`)).toBe(DENIED);
  });

  it('reads nothing once revoked, and a later sync still writes', async () => {
    await grantAccess(wh, { role: ANALYST, companies: ['b'], personal: false });
    const [both] = await analyst<
      { n: number }[]
    >`select count(distinct company_key)::int as n from workforce_analyst.individuals`;
    expect(both!.n).toBe(2);
    expect(await revokeAccess(wh, ANALYST, ['b'])).toEqual({ left: ['a'] });
    expect(await analyst`select distinct company_key from workforce_analyst.individuals`).toEqual([
      { company_key: 'a' },
    ]);
    expect(await revokeAccess(wh, ANALYST)).toEqual({ left: [] });
    expect(await attempt(analyst`select company_key from workforce_analyst.individuals`)).toBe(DENIED);
    expect(await attempt(analyst`select count(*) from workforce_analyst.v_open_shifts`)).toBe(DENIED);
    expect((await listAccess(wh)).map((g) => g.role)).not.toContain(ANALYST);

    const summary = await runStreams(syncA.ctx, selectStreams(['individuals']));
    expect(summary.streams.map((s) => s.outcome)).toEqual(['ok']);
  });
});

describe('a role granted company a with --personal and company b without', () => {
  it("reads a's personal values in clear and none of b's, in tables and views", async () => {
    await grantAccess(wh, { role: PERSONAL, companies: ['a'], personal: true, createWithPassword: PASSWORD });
    await grantAccess(wh, { role: PERSONAL, companies: ['b'], personal: false });
    const hr = login(PERSONAL);
    const rows = await hr<{ company_key: string; primary_email_address: string | null; first_name: string | null }[]>`
      select company_key, primary_email_address, first_name from workforce_analyst.individuals`;
    const of = (c: string) => rows.filter((r) => r.company_key === c);
    expect(of('a').some((r) => r.primary_email_address?.includes('@'))).toBe(true);
    expect(of('b').length).toBeGreaterThan(0);
    expect(of('b').filter((r) => r.primary_email_address !== null || r.first_name !== null)).toEqual([]);
    const names = await hr<{ company_key: string; n: number }[]>`
      select company_key, count(*) filter (where last_name is not null)::int as n
      from workforce_analyst.v_hours_weekly group by 1 order by 1`;
    expect(names.find((r) => r.company_key === 'a')!.n).toBeGreaterThan(0);
    expect(names.filter((r) => r.company_key === 'b' && r.n > 0)).toEqual([]);
    expect((await listAccess(wh)).find((g) => g.role === PERSONAL)).toMatchObject({
      companies: ['a', 'b'],
      personal: ['a'],
    });
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
    expect(await login(later)`select company_key, amount from workforce_analyst.later_facts`).toEqual([
      { company_key: 'a', amount: 1 },
    ]);
    const [owner] = await wh.sql<{ n: number }[]>`select count(*)::int as n from workforce.later_facts`;
    expect(owner!.n).toBe(3);
  });
});

describe('a warehouse whose policies read the grants in a subquery (migrated before granted_companies)', () => {
  it('has them replaced at the next migration: the role reads its company and the defaults again', async () => {
    const old = `${ANALYST}_old`;
    await grantAccess(wh, { role: old, companies: ['a'], personal: false, createWithPassword: PASSWORD });
    await wh.sql`insert into workforce.field_classes (company_key, field, class) values ('*', 'OldField', 'personal')`;
    for (const t of ['individuals', 'field_classes']) {
      await wh.sql.unsafe(`drop policy company_access on workforce.${t}`);
      await wh.sql.unsafe(`create policy company_access on workforce.${t} for select using (company_key = any (
        array(select g.company_key from workforce.access_grants g where g.role = current_user::text)))`);
    }
    await wh.migrate();
    const policies = await wh.sql<{ qual: string }[]>`
      select pg_get_expr(p.polqual, p.polrelid) as qual from pg_policy p
      where p.polrelid in ('workforce.individuals'::regclass, 'workforce.field_classes'::regclass)`;
    expect(policies.map((p) => p.qual.includes('granted_companies()'))).toEqual([true, true]);
    const reader = login(old);
    expect(await reader`select distinct company_key from workforce_analyst.individuals`).toEqual([
      { company_key: 'a' },
    ]);
    expect(await reader`select company_key from workforce_analyst.field_classes where field = 'OldField'`).toEqual([
      { company_key: '*' },
    ]);
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
    expect(await refusal(revokeAccess(wh, `${ANALYST}_plan`, ['b']))).toMatch(/^not_granted: /);
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
    >`select count(distinct company_key)::int as n from workforce_analyst.individuals`;
    expect(row!.n).toBe(1);
    await revokeAccess(wh, odd);
  });
});
