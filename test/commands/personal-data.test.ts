import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';

/** `wfsync personal-data` and `wfsync erase` as an operator runs them: results on stdout, refusals in one line. */

let sql: postgres.Sql;
let dataDir: string;
let env: Record<string, string>;

const run = async (...args: string[]) => {
  const p = spawnWfsync(args, env);
  const { code } = await p.exited();
  return { code, output: p.output() };
};

beforeAll(async () => {
  const databaseUrl = await freshDatabase();
  dataDir = mkdtempSync(join(tmpdir(), 'wfsync-personal-data-'));
  env = {
    DATABASE_URL: databaseUrl,
    WFS_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    WFS_BASE_URL: 'http://127.0.0.1:9/v1',
    WFS_API_KEY: 'unused-key',
  };
  expect((await run('migrate')).code).toBe(0);
  sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await sql`insert into workforce.companies (company_key, base_url, api_key_sealed) values ('north', 'http://127.0.0.1:9/v1', 'v1.test')`;
  await sql`insert into workforce.individuals (company_key, service_id, first_name, employee_number, primary_email_address, _synced_at, _hash)
    values ('north', 7, 'Ada', 'E-7', 'ada@example.org', now(), 'h7')`;
}, 60_000);

afterAll(async () => {
  await sql?.end();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('wfsync personal-data and erase', () => {
  it('refuse bad input in one line and change nothing', { timeout: 60_000 }, async () => {
    for (const args of [
      ['personal-data', 'set', 'north', 'ShoeSize=hash'],
      ['personal-data', 'set', 'north', 'FirstName=shred'],
      ['personal-data', 'set', 'south', 'FirstName=hash'],
      ['personal-data', 'set', 'north', 'FirstName'],
      ['erase', 'north', '--individual', '7'],
      ['erase', 'north', '--individual', '999'],
      ['erase', 'north', '--individual', 'x7'],
    ]) {
      const r = await run(...args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.output.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.output).toMatch(/^wfsync: /);
    }
    expect(await sql`select count(*)::int as n from workforce.personal_data_policies`).toEqual([{ n: 0 }]);
    expect(await sql`select first_name from workforce.individuals`).toEqual([{ first_name: 'Ada' }]);
  });

  it('set rewrites the stored rows and prints the counts; list shows the policy; erase blocks the person', {
    timeout: 60_000,
  }, async () => {
    const set = await run('personal-data', 'set', 'north', 'PrimaryEmailAddress=hash', 'FirstName=block');
    expect(set.code).toBe(0);
    expect(set.output).toContain('north: rows rewritten: individuals 1');
    expect(statSync(join(dataDir, 'personal-data.key')).mode & 0o777).toBe(0o600);
    const list = await run('personal-data', 'list', 'north', '--json');
    expect(JSON.parse(list.output)).toEqual([
      { company: '*', fields: {}, rewritePending: false, kinds: expect.any(Object) },
      {
        company: 'north',
        fields: { FirstName: 'block', PrimaryEmailAddress: 'hash' },
        effective: { FirstName: 'block', PrimaryEmailAddress: 'hash' },
        rewritePending: false,
        kinds: expect.objectContaining({ FirstName: 'personal', PatientCareReportNumber: 'patient' }),
      },
    ]);
    const kinds = JSON.parse(list.output)[1].kinds as Record<string, string>;
    expect(
      Object.entries(kinds)
        .filter(([, k]) => k === 'patient')
        .map(([f]) => f),
    ).toEqual([
      'DestinationGPSLocation',
      'EventDateTime',
      'HealthEventType',
      'IncidentAddress',
      'MilePostOrMajorRoadway',
      'PatientAge',
      'PatientCareReportNumber',
      'PatientContact',
      'SceneCrossStreetOrDirections',
    ]);
    const text = await run('personal-data', 'list', 'north');
    expect(text.output).toMatch(/^IncidentAddress\s+patient\s+keep\s*$/m);
    expect(text.output).toMatch(/^FirstName\s+personal\s+block\s+this company$/m);
    expect((await run('personal-data', 'list')).output).toMatch(/^PatientAge\s+patient\s+keep$/m);
    const patients = await run(
      'personal-data',
      'set',
      'north',
      'PatientCareReportNumber=block',
      'IncidentAddress=hash',
    );
    expect(patients.code, patients.output).toBe(0);
    const erased = await run('erase', 'north', '--employee-number', 'E-7', '--yes');
    expect(erased.code).toBe(0);
    expect(erased.output).toMatch(/^erasure \d+ of company north: rows rewritten: individuals 1/);
    expect(await sql`select first_name, employee_number, primary_email_address from workforce.individuals`).toEqual([
      { first_name: null, employee_number: null, primary_email_address: null },
    ]);
  });
});
