import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { endpoints, personalData, targets } from '../../src/resources/index.ts';
import { parseItems } from '../../src/source/paging.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { personalHmac } from '../../src/warehouse/personal-data/hmac.ts';
import { applyPendingRewrites, erase, setPersonalDataPolicy } from '../../src/warehouse/personal-data/admin.ts';
import { POLICY_CHANGED } from '../../src/warehouse/personal-data/apply.ts';
import {
  listPolicies,
  PersonalDataError,
  policyVersion,
  storePolicy,
} from '../../src/warehouse/personal-data/policy.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { dump as dumpOf, found } from '../support/dump.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { listEvents } from '../../src/warehouse/events.ts';
import { runHousekeeping } from '../../src/sync/housekeeping.ts';
import { DEFAULT_RETENTION } from '../../src/config.ts';

const rateLimit = { limit: 100, periodMs: 1000 };
let sandboxA: RunningSandbox;
let sandboxB: RunningSandbox;
let a: TestSync;
let b: TestSync;
let wh: Warehouse;

type Individual = {
  ServiceId: number;
  EmployeeNumber?: string | null;
  PrimaryEmailAddress?: string | null;
  HomeAddressLine1?: string | null;
  MobilePhoneNumber?: string | null;
};
const individualsOf = (s: RunningSandbox) => s.data.truth('individuals') as Individual[];

const dump = (company?: string) => dumpOf(wh, company);

const syncBoth = async () => {
  for (const s of [a, b]) {
    const summary = await runStreams(s.ctx, selectStreams());
    expect(summary.streams.filter((x) => x.outcome !== 'ok')).toEqual([]);
  }
};

beforeAll(async () => {
  [sandboxA, sandboxB] = await Promise.all([
    startSandbox({ port: 0, seed: 11, size: 'tiny', rateLimit }),
    startSandbox({ port: 0, seed: 12, size: 'tiny', rateLimit }),
  ]);
  const databaseUrl = await freshDatabase({ migrated: true });
  a = await openTestSync(sandboxA, { companyKey: 'a', databaseUrl });
  b = await openTestSync(sandboxB, { companyKey: 'b', databaseUrl });
  wh = a.warehouse;
  await wh.sql`insert into ${wh.sql(wh.schema)}.companies (company_key, base_url, api_key_sealed) values ('a', ${sandboxA.url}, 'v1.test'), ('b', ${sandboxB.url}, 'v1.test')`;
}, 60_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  await sandboxA?.close();
  await sandboxB?.close();
});

describe('a personal-data policy set after the first sync', () => {
  const clearOfA = new Set<string>();
  const noteClearValues = () => {
    const ofB = new Set(
      individualsOf(sandboxB).flatMap((i) => [i.PrimaryEmailAddress, i.HomeAddressLine1, i.MobilePhoneNumber]),
    );
    for (const i of individualsOf(sandboxA)) {
      for (const v of [i.PrimaryEmailAddress, i.HomeAddressLine1, i.MobilePhoneNumber])
        if (v && !ofB.has(v)) clearOfA.add(v);
    }
  };

  it('rewrites what is stored without a request to the service, and makes no new version', {
    timeout: 240_000,
  }, async () => {
    await syncBoth();
    noteClearValues();
    expect(clearOfA.size).toBeGreaterThan(20);
    expect(found(await dump(), clearOfA).length).toBeGreaterThan(0);
    const versions = async () =>
      (
        await wh.sql`select count(*)::int as n from ${wh.sql(wh.schema)}.individuals_history where company_key = 'a'`
      )[0]!.n as number;
    const before = { requests: sandboxA.stats().requests + sandboxB.stats().requests, versions: await versions() };

    const set = await setPersonalDataPolicy(wh, personalData, 'a', {
      PrimaryEmailAddress: 'hash',
      DateOfBirth: 'block',
      HomeAddressLine1: 'block',
      MobilePhoneNumber: 'block',
    });

    expect(sandboxA.stats().requests + sandboxB.stats().requests).toBe(before.requests);
    expect(set.rewritten.a!.individuals).toBeGreaterThan(0);
    expect(set.rewritten.a!.individuals_history).toBeGreaterThan(0);
    expect(await versions()).toBe(before.versions);
    expect(found(await dump(), clearOfA)).toEqual([]);
    expect((await listPolicies(wh, 'a'))[1]).toMatchObject({
      company: 'a',
      fields: { PrimaryEmailAddress: 'hash' },
      rewritePending: false,
    });

    // Nothing changed at the service: the next sync finds every row as it was, and writes no new version.
    await syncBoth();
    expect(await versions()).toBe(before.versions);
  });

  it('keeps a day of changes synced after it under the policy; the other company keeps its values', {
    timeout: 240_000,
  }, async () => {
    sandboxA.data.advance(24);
    sandboxB.data.advance(24);
    await syncBoth();
    noteClearValues();
    const text = await dump();
    expect(found(text, clearOfA)).toEqual([]);

    const birthDates = await wh.sql`
      select 'individuals' as t, count(*)::int as n from ${wh.sql(wh.schema)}.individuals
        where company_key = 'a' and (date_of_birth is not null or date_of_birth_instant is not null or date_of_birth_utc_offset is not null)
      union all select 'history', count(*)::int from ${wh.sql(wh.schema)}.individuals_history
        where company_key = 'a' and (date_of_birth is not null or date_of_birth_instant is not null)`;
    expect(birthDates.map((r) => r.n)).toEqual([0, 0]);

    const [emails] = await wh.sql`
      select count(*)::int as hashed,
             count(*) filter (where i.primary_email_address is distinct from h.primary_email_address)::int as differ
      from ${wh.sql(wh.schema)}.individuals i
      join ${wh.sql(wh.schema)}.individuals_history h on h.company_key = i.company_key and h.service_id = i.service_id and h.valid_to is null
      where i.company_key = 'a' and i.primary_email_address ~ '^[0-9a-f]{64}$'`;
    expect(emails!.hashed).toBeGreaterThan(10);
    expect(emails!.differ).toBe(0);

    const ofB = individualsOf(sandboxB).filter((i) => i.PrimaryEmailAddress && i.MobilePhoneNumber);
    expect(
      found(
        text,
        ofB.flatMap((i) => [i.PrimaryEmailAddress!, i.MobilePhoneNumber!]),
      ).length,
    ).toBe(ofB.length * 2);
    const [bBirth] =
      await wh.sql`select count(date_of_birth)::int as n from ${wh.sql(wh.schema)}.individuals where company_key = 'b'`;
    expect(bBirth!.n).toBeGreaterThan(0);

    const events = await listEvents(wh, { companyKey: 'a' });
    expect(events.map((e) => e.event)).toContain('personal_data_policy_changed');
  });
});

describe('retention of people who left', () => {
  it('blocks the personal fields of an individual Former for longer than WFS_KEEP_FORMER_PERSONAL_DAYS, not of one who left lately', {
    timeout: 60_000,
  }, async () => {
    const s = wh.sql(wh.schema);
    const people = await wh.sql<{ service_id: number; primary_email_address: string }[]>`
      select service_id, primary_email_address from ${s}.individuals
      where company_key = 'b' and primary_email_address is not null and status <> 'Former' order by service_id limit 2`;
    const [long, lately] = people;
    for (const [p, days] of [
      [long!, 40],
      [lately!, 10],
    ] as const) {
      await wh.sql`update ${s}.individuals set status = 'Former' where company_key = 'b' and service_id = ${p.service_id}`;
      await wh.sql`update ${s}.individuals_history set status = 'Former', valid_from = now() - make_interval(days => ${days})
        where company_key = 'b' and service_id = ${p.service_id} and valid_to is null`;
    }
    const summary = await runHousekeeping({ ...b.ctx, retention: { ...DEFAULT_RETENTION, formerPersonalDays: 30 } });
    expect(summary.failed).toBe(0);
    const text = await dump('b');
    expect(found(text, [long!.primary_email_address])).toEqual([]);
    expect(found(text, [lately!.primary_email_address])).toEqual([lately!.primary_email_address]);
    const [erasure] =
      await wh.sql`select requested_by, cause from ${s}.erasures where company_key = 'b' order by id desc limit 1`;
    expect(erasure).toMatchObject({ requested_by: 'retention', cause: 'retention' });
  });
});

describe('erasing one person', () => {
  it('leaves none of their e-mail, mobile number or employee number, also after two more syncs; their shifts stay', {
    timeout: 300_000,
  }, async () => {
    const s = wh.sql(wh.schema);
    const [who] = await wh.sql<{ service_id: number; shifts: number }[]>`
      select assignee_service_id as service_id, count(*)::int as shifts from ${s}.shift_assignments
      where company_key = 'b' and assignee_service_id is not null group by 1 order by 2 desc limit 1`;
    const person = individualsOf(sandboxB).find((i) => i.ServiceId === who!.service_id)!;
    const theirs = [person.PrimaryEmailAddress, person.MobilePhoneNumber, person.EmployeeNumber].filter(
      (v): v is string => !!v,
    );
    expect(theirs.length).toBe(3);
    expect(found(await dump('b'), theirs).length).toBeGreaterThan(0);

    const done = await erase(wh, personalData, 'b', { serviceId: who!.service_id }, 'test');
    expect(done.counts.individuals).toBe(1);
    expect(done.counts.shift_assignments).toBeGreaterThan(0);
    expect(found(await dump('b'), theirs)).toEqual([]);

    const [row] = await wh.sql`select counts, requested_by from ${s}.erasures where id = ${done.id}`;
    expect(row).toMatchObject({ requested_by: 'test' });
    expect(JSON.stringify(row!.counts)).not.toContain(person.EmployeeNumber!);

    for (let i = 0; i < 2; i++) {
      sandboxB.data.advance(12);
      await syncBoth();
      expect(found(await dump('b'), theirs)).toEqual([]);
    }
    const [after] =
      await wh.sql`select count(*)::int as n from ${s}.shift_assignments where company_key = 'b' and assignee_service_id = ${who!.service_id}`;
    expect(after!.n).toBeGreaterThan(0);
    const [individual] =
      await wh.sql`select service_id, first_name, status from ${s}.individuals where company_key = 'b' and service_id = ${who!.service_id}`;
    expect(individual).toMatchObject({ service_id: who!.service_id, first_name: null });
    expect((await listEvents(wh, { companyKey: 'b' })).map((e) => e.event)).toContain('individual_erased');
  });

  it('refuses an unknown person, field, action or company in one line and changes nothing', async () => {
    const versions = async () =>
      wh.sql`select company_key, version from ${wh.sql(wh.schema)}.personal_data_versions order by 1`;
    const before = await versions();
    const refused = async (p: Promise<unknown>) => {
      const e = await p.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(PersonalDataError);
      expect((e as Error).message).not.toContain('\n');
      return (e as PersonalDataError).kind;
    };
    expect(await refused(erase(wh, personalData, 'b', { serviceId: 999_999_999 }, 'test'))).toBe('unknown_person');
    expect(await refused(erase(wh, personalData, 'nobody', { serviceId: 1 }, 'test'))).toBe('unknown_company');
    expect(await refused(setPersonalDataPolicy(wh, personalData, 'a', { ShoeSize: 'hash' }))).toBe('unknown_field');
    expect(await refused(setPersonalDataPolicy(wh, personalData, 'a', { FirstName: 'shred' }))).toBe('unknown_action');
    expect(await refused(setPersonalDataPolicy(wh, personalData, 'a', { DateOfBirth: 'hash' }))).toBe('not_hashable');
    expect(await refused(setPersonalDataPolicy(wh, personalData, 'nobody', { FirstName: 'hash' }))).toBe(
      'unknown_company',
    );
    expect(await versions()).toEqual(before);
  });
});

describe('a rewrite interrupted', () => {
  it('shows as pending, and `apply` finishes it', { timeout: 60_000 }, async () => {
    // The policy stored, and the process gone before its rewrite.
    await storePolicy(wh, 'b', new Map([['HomeCity', 'block']]));
    expect((await listPolicies(wh, 'b'))[1]).toMatchObject({ fields: { HomeCity: 'block' }, rewritePending: true });
    const [before] =
      await wh.sql`select count(home_city)::int as n from ${wh.sql(wh.schema)}.individuals where company_key = 'b'`;
    expect(before!.n).toBeGreaterThan(0);

    const done = await applyPendingRewrites(wh, personalData);
    expect(done.b!.individuals).toBe(before!.n);
    expect((await listPolicies(wh, 'b'))[1]).toMatchObject({ rewritePending: false });
    const [after] =
      await wh.sql`select count(home_city)::int as n from ${wh.sql(wh.schema)}.individuals_history where company_key = 'b'`;
    expect(after!.n).toBe(0);
  });

  it('refuses a page mapped under the policy version before it', async () => {
    const version = await policyVersion(wh, 'b');
    await wh.sql`select ${wh.sql(wh.schema)}.check_personal_data_version('b', ${version})`;
    const stale = await wh.sql`select ${wh.sql(wh.schema)}.check_personal_data_version('b', '0:0')`.then(
      () => undefined,
      (e: { code?: string }) => e.code,
    );
    expect(stale).toBe(POLICY_CHANGED);
  });
});

describe('a policy changed by another process while a sync runs', () => {
  it('has the sync write its next page under the new policy', async () => {
    // Someone of b neither erased nor past retention: their e-mail is stored.
    const [kept] = await wh.sql<{ service_id: number }[]>`
      select service_id from ${wh.sql(wh.schema)}.individuals where company_key = 'b' and primary_email_address is not null order by service_id limit 1`;
    const person = individualsOf(sandboxB).find((i) => i.ServiceId === kept!.service_id)!;
    /** A page of one individual of b written by b's own warehouse client, as its sync writes one. */
    const writeEmail = async (email: string) => {
      const { items } = parseItems(endpoints.individuals.item, [{ ...person, PrimaryEmailAddress: email }]);
      await writePage(b.warehouse, {
        target: targets.individuals,
        companyKey: 'b',
        stream: 'individuals',
        items,
        syncedAt: new Date(),
      });
      const [row] = await wh.sql<{ email: string }[]>`
        select primary_email_address as email from ${wh.sql(wh.schema)}.individuals where company_key = 'b' and service_id = ${person.ServiceId}`;
      return row!.email;
    };
    await setPersonalDataPolicy(wh, personalData, 'b', { PrimaryEmailAddress: 'keep' });
    expect(await writeEmail('before-the-change@example.test')).toBe('before-the-change@example.test');

    // Set through another client: b's writer still holds the policy it read for the page before.
    await setPersonalDataPolicy(wh, personalData, 'b', { PrimaryEmailAddress: 'hash' });

    expect(await writeEmail('after-the-change@example.test')).toBe(
      personalHmac(wh.personalDataKey()).of('after-the-change@example.test'),
    );
  });
});

type Run = {
  SubmittedBy?: { ServiceId?: number | null } | null;
  RelatedRun?: {
    PatientCareReportNumber?: string | null;
    IncidentAddress?: { StreetAddress1?: string | null } | null;
  } | null;
};
const runsOf = (s: RunningSandbox) => s.data.truth('runLogFormResponses') as Run[];
const reportNumbers = (s: RunningSandbox) =>
  runsOf(s).flatMap((r) => (r.RelatedRun?.PatientCareReportNumber ? [r.RelatedRun.PatientCareReportNumber] : []));

describe("patients' fields", () => {
  it('blocked for one company leave none of its report numbers or incident addresses anywhere; the other keeps its own', {
    timeout: 120_000,
  }, async () => {
    const s = wh.sql(wh.schema);
    const streetsOfB = new Set(runsOf(sandboxB).map((r) => r.RelatedRun?.IncidentAddress?.StreetAddress1));
    const homesOfA = new Set(individualsOf(sandboxA).map((i) => i.HomeAddressLine1));
    const streetsOfA = runsOf(sandboxA)
      .map((r) => r.RelatedRun?.IncidentAddress?.StreetAddress1)
      .filter((v): v is string => !!v && !streetsOfB.has(v) && !homesOfA.has(v));
    expect(reportNumbers(sandboxA).length).toBeGreaterThan(5);
    expect(streetsOfA.length).toBeGreaterThan(5);
    expect(found(await dump(), reportNumbers(sandboxA)).length).toBeGreaterThan(0);

    const set = await setPersonalDataPolicy(wh, personalData, 'a', {
      PatientCareReportNumber: 'block',
      IncidentAddress: 'block',
      AnswerValue: 'block',
    });
    expect(set.rewritten.a!.run_log_form_responses).toBeGreaterThan(0);
    sandboxA.data.advance(6);
    await syncBoth();

    const text = await dump();
    expect(found(text, reportNumbers(sandboxA))).toEqual([]);
    expect(found(text, streetsOfA)).toEqual([]);
    expect(found(text, reportNumbers(sandboxB))).toEqual([...new Set(reportNumbers(sandboxB))]);
    const [parts] = await wh.sql`
      select count(*) filter (where company_key = 'a' and num_nonnulls(related_run_incident_address_street_address1,
               related_run_incident_address_city, related_run_incident_address_state, related_run_incident_address_zip_code,
               related_run_incident_address_country) > 0)::int as a,
             count(*) filter (where company_key = 'b' and related_run_incident_address_city is not null)::int as b
      from ${s}.run_log_form_responses`;
    expect(parts).toEqual({ a: 0, b: expect.any(Number) });
    expect(parts!.b).toBeGreaterThan(0);
    const [audit] = await wh.sql`
      select count(answer_text) filter (where company_key = 'a')::int as a, count(answer_text) filter (where company_key = 'b')::int as b
      from ${s}.form_audit`;
    expect(audit!.a).toBe(0);
    expect(audit!.b).toBeGreaterThan(0);
  });

  it("are out of an employee's erasure: the runs they submitted keep their report numbers", {
    timeout: 120_000,
  }, async () => {
    const s = wh.sql(wh.schema);
    const [who] = await wh.sql<{ service_id: number }[]>`
      select submitted_by_service_id as service_id from ${s}.run_log_form_responses
      where company_key = 'b' and submitted_by_service_id > 0 and related_run_patient_care_report_number is not null
      group by 1 order by count(*) desc limit 1`;
    const before = await wh.sql`
      select response_id, related_run_patient_care_report_number as pcr, related_run_incident_address_city as city
      from ${s}.run_log_form_responses where company_key = 'b' and submitted_by_service_id = ${who!.service_id} order by 1`;
    expect(before.length).toBeGreaterThan(0);
    // A patient's field and an employee's, as a later release of the service might send them where no column maps.
    await wh.sql`update ${s}.run_log_form_responses set _extra = '{"FirstName":"Zed","Patient":{"PatientAge":"Adult"}}'
      where company_key = 'b' and response_id = ${before[0]!.response_id}`;
    await erase(wh, personalData, 'b', { serviceId: who!.service_id }, 'test');
    const [extra] = await wh.sql`
      select _extra from ${s}.run_log_form_responses where company_key = 'b' and response_id = ${before[0]!.response_id}`;
    expect(extra!._extra).toEqual({ Patient: { PatientAge: 'Adult' } });
    const after = await wh.sql`
      select response_id, related_run_patient_care_report_number as pcr, related_run_incident_address_city as city,
             submitted_by_first_name as name
      from ${s}.run_log_form_responses where company_key = 'b' and submitted_by_service_id = ${who!.service_id} order by 1`;
    expect(after).toEqual(before.map((r) => ({ ...r, name: null })));
  });

  it('refuses to hash a field that is no text: PatientContact, EventDateTime', async () => {
    for (const field of ['PatientContact', 'EventDateTime']) {
      const e = await setPersonalDataPolicy(wh, personalData, 'a', { [field]: 'hash' }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((e as PersonalDataError).kind, field).toBe('not_hashable');
    }
  });
});
