import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personalCatalog } from '../../src/resources/index.ts';
import { openWarehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { WFSYNC } from '../support/processes.ts';

/**
 * `wfsync access` as an operator runs it: a role created and granted with one command reads only its company,
 * `list` shows it, `revoke` takes it all back, and every refusal is one line that changes nothing.
 */

const ROLE = `wfs_cli_${randomBytes(4).toString('hex')}`;
const PASSWORD = 'typed on standard input';

let databaseUrl: string;
let sql: postgres.Sql;
let dataDir: string;
let env: Record<string, string>;
const logins: postgres.Sql[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  const wh = await openWarehouse({ databaseUrl, catalog: personalCatalog });
  await wh.migrate();
  await wh.close();
  sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  await sql`insert into workforce.companies (company_key, base_url, api_key_sealed) values ('a', 'http://127.0.0.1:1', 'v1.a'), ('b', 'http://127.0.0.1:1', 'v1.b')`;
  await sql`insert into workforce.events (company_key, event) values ('a', 'company_added'), ('b', 'company_added')`;
  dataDir = mkdtempSync(join(tmpdir(), 'wfsync-access-'));
  env = {
    DATABASE_URL: databaseUrl,
    WFS_DATA_DIR: dataDir,
    WFS_SECRET_KEY: 'access-test-secret-key',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'warn',
  };
});

afterAll(async () => {
  await Promise.all(logins.map((l) => l.end()));
  await sql?.end();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function access(args: string[], stdin = ''): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [WFSYNC, 'access', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
    proc.once('exit', (code) => resolve({ code, out, err }));
    proc.stdin.end(stdin);
  });
}

const grants = () => sql`select role, company_key, personal from workforce.access_grants order by 1, 2`;
// Other test files create roles in the same cluster meanwhile: count only the ones this command could create.
const roles = async () =>
  (
    await sql<{ n: number }[]>`select count(*)::int as n from pg_roles
      where rolname = ${ROLE} or starts_with(rolname, current_database() || '_')`
  )[0]!.n;

describe('wfsync access', () => {
  it('refuses bad input in one line, exits non-zero and changes nothing', async () => {
    const [before, rolesBefore] = [await grants(), await roles()];
    const superuser = new URL(databaseUrl).username;
    const cases: [string[], string, RegExp][] = [
      [['grant', ROLE, '--company', 'nope', '--create'], PASSWORD, /^wfsync: company "nope" is not in the warehouse/],
      [['grant', ROLE, '--company', 'a'], '', /^wfsync: role "wfs_cli_\w+" does not exist: add --create/],
      [['grant', superuser, '--company', 'a'], '', /^wfsync: role "\w+" is the sync's own role: it keeps full access$/],
      [
        ['grant', ROLE, '--company', 'a', '--create'],
        '',
        /^wfsync: access grant wfs_cli_\w+ --create: give the new role's password on standard input$/,
      ],
      [['grant', ROLE], '', /^wfsync: access grant wfs_cli_\w+: name at least one --company KEY$/],
      [['revoke', ROLE], '', /^wfsync: role "wfs_cli_\w+" has no access granted/],
      [['grant', ROLE, '--company', 'a', '--colour'], '', /^wfsync: Unknown option '--colour'/],
      [['list', 'extra'], '', /^wfsync: access list: unexpected argument "extra"$/],
    ];
    for (const [args, stdin, line] of cases) {
      const r = await access(args, stdin);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 1]);
      expect(r.err.trim().split('\n')).toHaveLength(1);
      expect(r.err.trim()).toMatch(line);
    }
    expect(await grants()).toEqual(before);
    expect(await roles()).toBe(rolesBefore);
  });

  it('creates and grants a role that then reads only its company, lists it, and revokes it', async () => {
    const granted = await access(['grant', ROLE, '--company', 'a', '--create'], `${PASSWORD}\n`);
    expect(granted, granted.err).toMatchObject({
      code: 0,
      out: `role ${ROLE} created and granted a with their personal data masked\n`,
    });

    const u = new URL(databaseUrl);
    u.username = ROLE;
    u.password = PASSWORD;
    const analyst = postgres(u.toString(), { max: 1, onnotice: () => {} });
    logins.push(analyst);
    expect(await analyst`select company_key, event from workforce_analyst.events`).toEqual([
      { company_key: 'a', event: 'company_added' },
    ]);

    const listed = await access(['list', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      { role: ROLE, companies: ['a'], personal: [], grantedAt: expect.any(String) },
    ]);
    const both = await access(['grant', ROLE, '--company', 'b', '--personal']);
    expect(both.code, both.err).toBe(0);
    expect((await access(['list'])).out).toMatch(new RegExp(`^${ROLE} +a \\(masked\\), b \\(personal\\)\\n$`));

    const revoked = await access(['revoke', ROLE]);
    expect(revoked).toMatchObject({ code: 0, out: `role ${ROLE} reads nothing of the warehouse now\n` });
    await expect(analyst`select company_key from workforce_analyst.events`).rejects.toMatchObject({ code: '42501' });
    expect((await access(['list'])).out).toBe('no role has access\n');
  });
});
