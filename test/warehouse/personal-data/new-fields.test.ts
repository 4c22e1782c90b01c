import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personalData } from '../../../src/resources/index.ts';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../../src/sync/runner.ts';
import { grantAccess, revokeAccess } from '../../../src/warehouse/access.ts';
import type { Warehouse } from '../../../src/warehouse/connection.ts';
import { listEvents } from '../../../src/warehouse/events.ts';
import { setPersonalDataPolicy } from '../../../src/warehouse/personal-data/admin.ts';
import { personalHmac } from '../../../src/warehouse/personal-data/hmac.ts';
import { classifyField, listNewFields, setNewFieldMode } from '../../../src/warehouse/personal-data/new-fields.ts';
import { PersonalDataError } from '../../../src/warehouse/personal-data/policy.ts';
import { freshDatabase } from '../../support/db.ts';
import { dump } from '../../support/dump.ts';
import { openTestSync, type TestSync } from '../../support/sync-context.ts';

/**
 * Fields the service adds (the sandbox's `new-field` quirk: BadgeNumber on every individual), classified before
 * anyone reads them: `hold` keeps their values out of the warehouse until a class names them, and a class of
 * personal or patient puts them under the personal-data policies.
 */

const rateLimit = { limit: 100, periodMs: 1000 };
const sandboxes: RunningSandbox[] = [];
let a: TestSync;
let b: TestSync;
let wh: Warehouse;
let databaseUrl: string;
const BADGE = /B-\d{8}/;

const syncIndividuals = async (s: TestSync, fullRefresh = false) => {
  const summary = await runStreams(s.ctx, selectStreams(['individuals']), { fullRefresh });
  expect(summary.streams.filter((x) => x.outcome !== 'ok')).toEqual([]);
};

const versions = async (company: string) =>
  (
    await wh.sql<{ n: number }[]>`
      select count(*)::int as n from ${wh.sql(wh.schema)}.individuals_history where company_key = ${company}`
  )[0]!.n;

const badges = async (company: string) =>
  (
    await wh.sql<{ n: number; badged: number }[]>`
      select count(*)::int as n, count(_extra->>'BadgeNumber')::int as badged
      from ${wh.sql(wh.schema)}.individuals where company_key = ${company}`
  )[0]!;

const requests = () => sandboxes.reduce((n, s) => n + s.stats().requests, 0);

beforeAll(async () => {
  for (const seed of [21, 22])
    sandboxes.push(await startSandbox({ port: 0, seed, size: 'tiny', rateLimit, quirks: ['new-field'] }));
  databaseUrl = await freshDatabase({ migrated: true });
  a = await openTestSync(sandboxes[0]!, { companyKey: 'a', databaseUrl });
  b = await openTestSync(sandboxes[1]!, { companyKey: 'b', databaseUrl });
  wh = a.warehouse;
  await wh.sql`insert into ${wh.sql(wh.schema)}.companies (company_key, base_url, api_key_sealed)
    values ('a', ${sandboxes[0]!.url}, 'v1.test'), ('b', ${sandboxes[1]!.url}, 'v1.test')`;
  await syncIndividuals(a);
  await syncIndividuals(b);
}, 120_000);

afterAll(async () => {
  await a?.close();
  await b?.close();
  for (const s of sandboxes) await s.close();
});

describe('new fields held until classified', () => {
  it('hold removes the values stored, with no request and no new version; the other company keeps its own', {
    timeout: 120_000,
  }, async () => {
    expect(BADGE.test(await dump(wh, 'b'))).toBe(true);
    const before = { requests: requests(), versions: await versions('b') };

    const set = await setNewFieldMode(wh, personalData, 'b', 'hold');
    expect(set.rewritten.b!.individuals).toBeGreaterThan(0);
    expect(set.rewritten.b!.individuals_history).toBeGreaterThan(0);
    expect(requests()).toBe(before.requests);
    expect(BADGE.test(await dump(wh, 'b'))).toBe(false);
    expect(await versions('b')).toBe(before.versions);
    const ofA = await badges('a');
    expect(ofA.badged).toBe(ofA.n);

    // The service still sends it: the next reads store none of it, and find every row unchanged.
    await syncIndividuals(b);
    await syncIndividuals(b, true);
    expect(BADGE.test(await dump(wh, 'b'))).toBe(false);
    expect(await versions('b')).toBe(before.versions);
    const [listed] = await listNewFields(wh, personalData, 'b');
    expect(listed).toMatchObject({ field_path: 'BadgeNumber', class: 'unclassified', held: true });
    expect(listed!.records_seen).toBeGreaterThan(0);
  });

  it('a field classified comes with its next complete read, which classifying asks for', {
    timeout: 120_000,
  }, async () => {
    const done = await classifyField(wh, personalData, 'b', 'BadgeNumber', 'not-personal');
    expect(done.resync).toEqual([{ company: 'b', stream: 'individuals' }]);
    expect((await listEvents(wh, { companyKey: 'b' })).map((e) => e.event)).toContain('field_classified');
    await syncIndividuals(b, true);
    const ofB = await badges('b');
    expect(ofB.badged).toBe(ofB.n);
    const [listed] = await listNewFields(wh, personalData, 'b');
    expect(listed).toMatchObject({ class: 'not-personal', held: false });
  });
});

describe('read by a role granted the companies without personal data', () => {
  it("reads no value of an unclassified field, and a company's values once it classifies it not-personal", {
    timeout: 60_000,
  }, async () => {
    const role = `wfs_new_fields_${randomBytes(4).toString('hex')}`;
    await grantAccess(wh, { role, companies: ['a', 'b'], personal: false, createWithPassword: 'pass phrase' });
    const url = new URL(databaseUrl);
    [url.username, url.password] = [role, 'pass phrase'];
    const analyst = postgres(url.toString(), { max: 1, onnotice: () => {} });
    const read = async () =>
      Object.fromEntries(
        (
          await analyst<{ company_key: string; badged: number }[]>`
            select company_key, count(_extra->>'BadgeNumber')::int as badged
            from workforce_analyst.individuals group by 1 order by 1`
        ).map((r) => [r.company_key, r.badged]),
      );
    try {
      // b classified BadgeNumber not-personal above; a has not classified it.
      expect(await read()).toEqual({ a: 0, b: (await badges('b')).n });
      await classifyField(wh, personalData, 'a', 'BadgeNumber', 'not-personal');
      expect(await read()).toEqual({ a: (await badges('a')).n, b: (await badges('b')).n });
    } finally {
      await analyst.end();
      await revokeAccess(wh, role);
    }
  });
});

describe('a field classified personal', () => {
  it('is refused by personal-data set while unclassified or not personal, and then governed in _extra', {
    timeout: 120_000,
  }, async () => {
    const refusal = (company: string) =>
      setPersonalDataPolicy(wh, personalData, company, { BadgeNumber: 'hash' }).then(
        () => undefined,
        (e: unknown) => (e as PersonalDataError).kind,
      );
    expect(await refusal('a')).toBe('not_classified');
    expect(await refusal('b')).toBe('not_classified');
    await classifyField(wh, personalData, 'a', 'BadgeNumber', 'personal');
    const set = await setPersonalDataPolicy(wh, personalData, 'a', { BadgeNumber: 'hash' });
    expect(set.rewritten.a!.individuals).toBeGreaterThan(0);
    const hmac = personalHmac(wh.personalDataKey());
    const [row] = await wh.sql<{ service_id: number; badge: string }[]>`
      select service_id, _extra->>'BadgeNumber' as badge from ${wh.sql(wh.schema)}.individuals where company_key = 'a' limit 1`;
    expect(row!.badge).toBe(hmac.of(`B-${String(row!.service_id).padStart(8, '0')}`));
    const versionsOfA = await versions('a');
    await syncIndividuals(a, true);
    expect(BADGE.test(await dump(wh, 'a'))).toBe(false);
    expect(await versions('a')).toBe(versionsOfA);
  });
});

describe('bad input', () => {
  it('is refused in one line naming the company, field, class or mode, and changes nothing', async () => {
    const state = async () => ({
      classes: await wh.sql`select * from ${wh.sql(wh.schema)}.field_classes order by 1, 2`,
      modes: await wh.sql`select * from ${wh.sql(wh.schema)}.new_field_modes order by 1`,
      versions: await wh.sql`select * from ${wh.sql(wh.schema)}.personal_data_versions order by 1`,
    });
    const before = await state();
    const refused = async (p: Promise<unknown>) => {
      const e = await p.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(PersonalDataError);
      expect((e as Error).message).not.toContain('\n');
      return (e as PersonalDataError).kind;
    };
    expect(await refused(classifyField(wh, personalData, 'nobody', 'BadgeNumber', 'personal'))).toBe('unknown_company');
    expect(await refused(classifyField(wh, personalData, 'b', 'ShoeSize', 'personal'))).toBe('unknown_field');
    expect(await refused(classifyField(wh, personalData, 'b', 'BadgeNumber', 'secret'))).toBe('unknown_class');
    expect(await refused(classifyField(wh, personalData, 'b', 'FirstName', 'not-personal'))).toBe('fixed_class');
    expect(await refused(setNewFieldMode(wh, personalData, 'b', 'drop'))).toBe('unknown_mode');
    expect(await refused(setNewFieldMode(wh, personalData, 'nobody', 'hold'))).toBe('unknown_company');
    expect(await state()).toEqual(before);
  });
});
