import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openWarehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';

/** `wfsync push model ...` and `wfsync push ... --dry-run` as an operator runs them. */

async function run(args: string[], env: Record<string, string>) {
  const p = spawnWfsync(['push', ...args], env);
  const { code } = await p.exited();
  return { code, out: p.output() };
}

describe('wfsync push model', () => {
  it('adds, lists, previews, runs, pauses and removes a model; refuses a read-only field in one line; a dry run stores nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfsync-model-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const databaseUrl = await freshDatabase();
    const env = {
      DATABASE_URL: databaseUrl,
      WFS_SECRET_KEY: 'cli-secret-0123456789',
      LOG_LEVEL: 'silent',
      WFS_DATA_DIR: dir,
    };
    const wh = await openWarehouse({ databaseUrl });
    onTestFinished(() => wh.close());
    await wh.migrate();
    await wh.sql.unsafe(
      `create table public.hr_people (employee_number text, first_name text, last_name text, status text, email text, logon text)`,
    );
    await wh.sql.unsafe(
      `insert into public.hr_people values ('HR-1', 'Ada', 'King', 'Active', 'ada@example.org', 'aking'), ('HR-2', 'Grace', 'Hopper', 'Retired', 'grace@example.org', 'ghopper')`,
    );
    const query = `select employee_number as "EmployeeNumber", first_name as "FirstName", last_name as "LastName", status as "Status", email as "PrimaryEmailAddress", logon as "LogonId" from public.hr_people`;

    const added = await run(
      ['model', 'add', 'hr', '--kind', 'individuals', '--sql', query, '--key', 'EmployeeNumber', '--max-changes', '10'],
      env,
    );
    expect(added.code).toBe(0);
    const listed = JSON.parse((await run(['model', 'list', '--json'], env)).out) as {
      name: string;
      maxChanges: number;
    }[];
    expect(listed).toEqual([expect.objectContaining({ name: 'hr', maxChanges: 10 })]);

    const readOnly = await run(
      [
        'model',
        'add',
        'ro',
        '--kind',
        'individuals',
        '--sql',
        `select 'x' as "EmployeeNumber", 'y' as "SupervisorName"`,
        '--key',
        'EmployeeNumber',
      ],
      env,
    );
    expect(readOnly.code).toBe(1);
    expect(readOnly.out.trim()).toBe(
      'model ro: SupervisorName is read only: the service sets it, so it cannot be pushed',
    );

    const preview = await run(['model', 'preview', 'hr'], env);
    expect(preview.code).toBe(0);
    expect(preview.out).toContain('model hr: 2 rows read, 0 unchanged, 2 changed, would queue 1, refused 1');
    const outbox = async () => Number((await wh.sql.unsafe(`select count(*) as n from workforce.push_outbox`))[0]!.n);
    expect(await outbox()).toBe(0);

    const ran = await run(['model', 'run', 'hr'], env);
    expect(ran.code).toBe(0);
    expect(ran.out).toContain('model hr: 2 rows read, 0 unchanged, 2 changed, queued 1, refused 1');
    expect(await outbox()).toBe(1);
    expect((await run(['model', 'run', 'hr'], env)).out).toContain('queued 1, refused 1');
    expect(await outbox()).toBe(1);

    const file = join(dir, 'people.json');
    writeFileSync(
      file,
      JSON.stringify([
        {
          EmployeeNumber: 'HR-9',
          FirstName: 'Eve',
          LastName: 'L',
          Status: 'Active',
          PrimaryEmailAddress: 'eve@example.org',
          LogonId: 'eve9',
        },
      ]),
    );
    const dry = await run(['individual', file, '--dry-run'], env);
    expect(dry.code, dry.out).toBe(0);
    expect(JSON.parse(dry.out)).toMatchObject({ dryRun: true, valid: 1, inserts: 1, requests: 2 });
    expect(await outbox()).toBe(1);

    expect((await run(['model', 'pause', 'hr'], env)).out).toContain('paused');
    expect((await run(['model', 'remove', 'hr'], env)).code).toBe(0);
    const gone = await run(['model', 'run', 'hr'], env);
    expect(gone.code).toBe(1);
    expect(gone.out.trim()).toBe('no model named "hr"');
  }, 240_000);
});
