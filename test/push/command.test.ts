import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';

/** `wfsync push ...` as a user runs it: files in, JSON out, the outbox behind it. */

async function run(args: string[], env: Record<string, string>) {
  const p = spawnWfsync(['push', ...args], env);
  const { code } = await p.exited();
  return { code, out: p.output() };
}

describe('wfsync push', () => {
  it('queues a file of changes, shows one and lists them; refuses a bad file naming the field', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfsync-push-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const env = {
      DATABASE_URL: await freshDatabase(),
      WFS_SECRET_KEY: 'cli-secret-0123456789',
      LOG_LEVEL: 'silent',
      WFS_DATA_DIR: dir,
    };
    const good = join(dir, 'people.ndjson');
    const person = {
      FirstName: 'A',
      LastName: 'B',
      Status: 'Active',
      PrimaryEmailAddress: 'a@example.org',
      LogonId: 'ab1',
      EmployeeNumber: 'E-1',
    };
    writeFileSync(
      good,
      `${JSON.stringify({ ...person, changeId: 'cli-1' })}\n${JSON.stringify({ ...person, changeId: 'cli-2', FirstName: 'C' })}\n`,
    );
    const queued = await run(['individual', good], env);
    expect(queued.code).toBe(0);
    const accepted = JSON.parse(queued.out) as { id: number; changeId: string; status: string }[];
    expect(accepted.map((a) => [a.changeId, a.status])).toEqual([
      ['cli-1', 'queued'],
      ['cli-2', 'queued'],
    ]);

    const status = await run(['status', String(accepted[0]!.id)], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.out)).toMatchObject({
      id: accepted[0]!.id,
      changeId: 'cli-1',
      kind: 'individual',
      status: 'queued',
    });

    const list = await run(['list', '--status', 'queued', '--json'], env);
    expect((JSON.parse(list.out) as unknown[]).length).toBe(2);

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ ...person, SSN: '1234' }]));
    const refused = await run(['individual', bad], env);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.out)).toMatchObject({
      refused: [{ index: 0, fields: { SSN: expect.stringMatching(/9 digits/) } }],
    });
    expect(refused.out).not.toContain('1234');

    const wrong = await run(['list', '--status', 'nope'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.out.trim().split('\n')).toHaveLength(1);
  }, 240_000);
});
