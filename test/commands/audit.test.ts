import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { parseKeySpec } from '../../src/sandbox/keys.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync, runWfsyncWithInput, type Ran } from '../support/processes.ts';

/**
 * Every change made from the CLI is a row of the audit with the `cli:` actor of the user running it, its
 * company, a target holding no personal value, and its outcome (a refusal with its reason); `wfsync audit`
 * prints it and filters it, and the company's timeline names who made each change.
 */

const NORTH_KEY = 'north-key-for-the-audit-test-1';
const SOUTH_KEY = 'south-key-for-the-audit-test-2';
const SOUTH_NEW_KEY = 'south-new-key-for-the-audit-3';
const EMAIL = 'audit-test-person@example.org';
const CLI = `cli:${userInfo().username}`;

let sandbox: RunningSandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 3,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    keys: [NORTH_KEY, SOUTH_KEY, SOUTH_NEW_KEY].map(parseKeySpec),
  });
  dir = mkdtempSync(join(tmpdir(), 'wfsync-audit-'));
  env = {
    DATABASE_URL: await freshDatabase(),
    WFS_COMPANIES: JSON.stringify([{ key: 'north', apiKey: NORTH_KEY, baseUrl: sandbox.url }]),
    WFS_SECRET_KEY: 'audit-test-secret-key-0123',
    WFS_DATA_DIR: dir,
    LOG_LEVEL: 'warn',
  };
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const wfsync = (args: string[], stdin?: string): Promise<Ran> =>
  stdin === undefined ? runWfsync(args, env) : runWfsyncWithInput(args, env, stdin);

interface Row {
  actor: string;
  action: string;
  company_key: string | null;
  target: string | null;
  outcome: string;
  reason: string | null;
}

async function audit(...args: string[]): Promise<Row[]> {
  const r = await wfsync(['audit', '--json', ...args]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Row[];
}

describe('wfsync audit', () => {
  it('records every change the CLI makes, with its cli: actor, company, target and outcome', async () => {
    const change = join(dir, 'change.json');
    writeFileSync(
      change,
      JSON.stringify({
        changeId: 'audit-1',
        company: 'north',
        EmployeeNumber: 'E-AUDIT-1',
        FirstName: 'Audrey',
        LastName: 'Trail',
        Status: 'Active',
        PrimaryEmailAddress: EMAIL,
        LogonId: 'atrail',
      }),
    );
    const model = ['--kind', 'individuals', '--key', 'EmployeeNumber', '--company', 'north'];
    const steps: [string[], string | undefined, number][] = [
      [['companies', 'add', 'south', '--base-url', sandbox.url, '--api-key-stdin'], SOUTH_KEY, 0],
      [['companies', 'pause', 'south'], undefined, 0],
      [['companies', 'resume', 'south'], undefined, 0],
      [['companies', 'rotate-key', 'south', '--api-key-stdin'], SOUTH_NEW_KEY, 0],
      [['companies', 'streams', 'south', '--off', 'time-off-requests'], undefined, 0],
      [['schema', 'new-fields', 'south', 'hold'], undefined, 0],
      [['schema', 'classify', 'south', 'BadgeNumber', 'personal'], undefined, 1],
      [['personal-data', 'set', 'south', 'PrimaryEmailAddress=hash'], undefined, 0],
      [['personal-data', 'set', '--default', 'Gender=block'], undefined, 0],
      [['personal-data', 'apply'], undefined, 0],
      [['erase', 'north', '--individual', '999999', '--yes'], undefined, 1],
      [['access', 'grant', 'audit_reader', '--company', 'south', '--create'], 'a-password-1', 0],
      [['access', 'revoke', 'audit_reader'], undefined, 0],
      [['resync', 'north', 'individuals'], undefined, 0],
      [['push', 'individual', change], undefined, 0],
      [['push', 'retry', '1'], undefined, 0],
      [['push', 'model', 'add', 'hr', ...model, '--sql', "select 'E-1' as employee_number"], undefined, 0],
      [['push', 'model', 'pause', 'hr'], undefined, 0],
      [['push', 'model', 'resume', 'hr'], undefined, 0],
      [['push', 'model', 'run', 'hr'], undefined, 0],
      [['push', 'model', 'remove', 'hr'], undefined, 0],
      [['tokens', 'create', 'hr-a', '--scope', 'push', '--company', 'north'], undefined, 0],
      [['tokens', 'revoke', 'hr-a'], undefined, 0],
      [['companies', 'remove', 'south', '--purge', '--yes'], undefined, 0],
    ];
    for (const [args, stdin, code] of steps) {
      const r = await wfsync(args, stdin);
      expect(r.code, `${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(code);
    }

    const rows = (await audit()).reverse();
    expect(rows.map((r) => [r.action, r.company_key, r.outcome])).toEqual([
      ['companies add', 'south', 'done'],
      ['companies pause', 'south', 'done'],
      ['companies resume', 'south', 'done'],
      ['companies rotate-key', 'south', 'done'],
      ['companies streams', 'south', 'done'],
      ['schema new-fields', 'south', 'done'],
      ['schema classify', 'south', 'refused'],
      ['personal-data set', 'south', 'done'],
      ['personal-data set', null, 'done'],
      ['personal-data apply', null, 'done'],
      ['erase', 'north', 'refused'],
      ['access grant', 'south', 'done'],
      ['access revoke', null, 'done'],
      ['resync', 'north', 'done'],
      ['push', 'north', 'done'],
      ['push retry', 'north', 'refused'],
      ['push model add', 'north', 'done'],
      ['push model pause', 'north', 'done'],
      ['push model resume', 'north', 'done'],
      ['push model run', 'north', 'done'],
      ['push model remove', null, 'done'],
      ['tokens create', 'north', 'done'],
      ['tokens revoke', null, 'done'],
      ['companies remove', 'south', 'done'],
    ]);
    expect(new Set(rows.map((r) => r.actor))).toEqual(new Set([CLI]));
    expect(rows.find((r) => r.action === 'erase')).toMatchObject({
      target: 'ServiceId 999999',
      reason: expect.stringMatching(/north/),
    });
    expect(rows.find((r) => r.action === 'push')!.target).toBe('individual: change 1');
    expect(rows.find((r) => r.action === 'access grant')!.target).toBe('role audit_reader: south (created)');
    expect(rows.find((r) => r.action === 'personal-data set')!.target).toBe('PrimaryEmailAddress=hash');
    // No personal value, and no key or password, in any row.
    for (const secret of [EMAIL, 'Audrey', 'E-AUDIT-1', SOUTH_KEY, SOUTH_NEW_KEY, 'a-password-1'])
      expect(JSON.stringify(rows)).not.toContain(secret);
  }, 600_000);

  it('filters by company, actor and time, and says so in plain lines', async () => {
    expect((await audit('--company', 'north')).every((r) => r.company_key === 'north')).toBe(true);
    expect(await audit('--actor', 'token:')).toEqual([]);
    expect((await audit('--actor', 'cli:')).length).toBeGreaterThan(10);
    expect(await audit('--since', '2999-01-01')).toEqual([]);
    const plain = await wfsync(['audit', '--company', 'south', '--limit', '2']);
    expect(plain.stdout.trim().split('\n')).toHaveLength(2);
    expect(plain.stdout).toMatch(new RegExp(`${CLI}\\s+companies remove\\s+south\\s+done\\s+purge`));
    const bad = await wfsync(['audit', '--since', 'yesterday']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toMatch(/^wfsync: --since "yesterday": expected an ISO date or time/);
  }, 60_000);

  it("names the actor of each change on the company's timeline", async () => {
    const r = await wfsync(['timeline', 'north', '--json']);
    const events = JSON.parse(r.stdout) as { event: string; actor: string | null }[];
    expect(events.find((e) => e.event === 'resync_requested')?.actor).toBe(CLI);
    expect((await wfsync(['timeline', 'north'])).stdout).toMatch(
      new RegExp(`resync_requested\\s+individuals\\s+by ${CLI}`),
    );
  }, 60_000);
});
