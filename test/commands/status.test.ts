import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/db.ts';
import { freePort } from '../support/services.ts';
import { runWfsync } from '../support/processes.ts';

/** wfsync migrate and status when the warehouse or Redis will not do what they ask: one line saying why. */

const STACK_FRAME = /^\s+at /m;
let cwd: string;
let databaseUrl: string;
let admin: postgres.Sql;
const role = `r_${randomBytes(4).toString('hex')}`;
const password = `pw-${randomBytes(6).toString('hex')}`;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-status-'));
  databaseUrl = await freshDatabase();
  admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  // A role that may log in and create nothing: no CREATE on the database, as a read-only login is made.
  await admin.unsafe(`create role ${role} login password '${password}'`);
});

afterAll(async () => {
  await admin?.unsafe(`drop role if exists ${role}`);
  await admin?.end();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

/** Runs wfsync and answers its exit code and the lines of its stderr. */
async function wfsync(args: string[], env: Record<string, string>) {
  const ran = await runWfsync(args, { WFS_SECRET_KEY: 'status-test-secret-key-0123', ...env }, cwd);
  return { ...ran, lines: ran.stderr.split('\n').filter((l) => l.trim() !== '') };
}

function asRole(url: string): string {
  return url.replace(/\/\/[^@]*@/, `//${role}:${password}@`);
}

describe('wfsync migrate as a role that may create nothing', () => {
  it("exits 1 with one line giving Postgres's reason and code, and changes nothing", async () => {
    const ran = await wfsync(['migrate'], { DATABASE_URL: asRole(databaseUrl) });
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.lines, ran.stderr).toHaveLength(1);
    expect(ran.lines[0]).toMatch(
      /^wfsync: warehouse at DATABASE_URL postgres:\/\/r_\w+:\*\*\*@.*: migration refused: /,
    );
    expect(ran.lines[0]).toMatch(/permission denied for database \w+ \(SQLSTATE 42501\)$/);
    expect(ran.stderr).not.toMatch(/Failed query/);
    expect(ran.stderr).not.toMatch(STACK_FRAME);
    expect(ran.stderr).not.toContain(password);
    const schemas =
      await admin`select schema_name from information_schema.schemata where schema_name in ('drizzle', 'workforce')`;
    expect(schemas).toEqual([]);
  });
});

describe('wfsync status', () => {
  it('with its Postgres not there: one line naming the warehouse and the refused connection', async () => {
    const down = databaseUrl.replace(/@[^/]+\//, `@127.0.0.1:${await freePort()}/`);
    const ran = await wfsync(['status'], { DATABASE_URL: down });
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.lines, ran.stderr).toEqual([
      expect.stringMatching(
        /^wfsync: warehouse at DATABASE_URL postgres:\/\/.*: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
      ),
    ]);
  });

  it('with its Redis not there: status reads the warehouse alone, and answers; resync says why Redis did not', async () => {
    const env = {
      DATABASE_URL: await freshDatabase(),
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      LOG_LEVEL: 'warn',
    };
    const status = await wfsync(['status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^push: /m);
    const resync = await wfsync(['resync', 'default', 'departments'], env);
    expect(resync.code, resync.stderr).toBe(1);
    expect(resync.lines, resync.stderr).toEqual([
      expect.stringMatching(
        /^wfsync: setting REDIS_URL: Redis at redis:\/\/127\.0\.0\.1:\d+ did not answer within 15 s \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/,
      ),
    ]);
  }, 90_000);
});
