import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync } from '../support/processes.ts';

/**
 * `wfsync schema` as a user runs it, after a sync from a service that added a field to individuals: the fields with
 * their class, classifying one, holding the values of those not classified, and refusals in one line.
 */

let sandbox: RunningSandbox;
let env: Record<string, string>;
let cwd: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 9, size: 'tiny', rateLimit: null, quirks: ['new-field'] });
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-schema-'));
  env = {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    DATABASE_URL: await freshDatabase(),
    WFS_RATE_LIMIT: '1000/1s',
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  await sandbox?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function wfsync(args: string[]) {
  return runWfsync(args, env, cwd);
}

describe('wfsync schema', () => {
  it('lists the field the service added, after the sync that met it logged it once', async () => {
    const synced = await wfsync(['sync', '--once', '--streams', 'individuals,supervisors', '--json']);
    expect(synced.code, synced.stderr).toBe(0);
    expect(synced.stderr.split('\n').filter((l) => l.includes('sends a field no column maps'))).toHaveLength(1);
    const listed = await wfsync(['schema', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = JSON.parse(listed.stdout) as {
      company_key: string;
      stream: string;
      field_path: string;
      json_type: string;
      example: string;
      gone_at: null;
    }[];
    expect(rows.map((r) => [r.company_key, r.stream, r.field_path, r.json_type, r.example, r.gone_at])).toEqual([
      ['default', 'individuals', 'BadgeNumber', 'string', 'x-99999999', null],
    ]);
    expect(rows[0]).toMatchObject({ class: 'unclassified', held: false });
    const text = await wfsync(['schema']);
    expect(text.stdout).toMatch(/^default\s+individuals\s+BadgeNumber\s+unclassified\s+string\s/m);
  });

  it('holds the values of a field not classified, and classifying it asks for a re-sync of the stream that sent it', async () => {
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      const badged = async () =>
        (
          await sql`select count(_extra->>'BadgeNumber')::int as n from workforce.individuals where company_key = 'default'`
        )[0]!.n as number;
      expect(await badged()).toBeGreaterThan(0);
      const held = await wfsync(['schema', 'new-fields', 'default', 'hold']);
      expect(held.code, held.stderr).toBe(0);
      expect(held.stdout).toMatch(
        /^new fields of default: held until classified\ndefault: rows rewritten: individuals \d+/,
      );
      expect(await badged()).toBe(0);
      expect(JSON.parse((await wfsync(['schema', '--json'])).stdout)[0]).toMatchObject({ held: true });

      const classified = await wfsync(['schema', 'classify', 'default', 'BadgeNumber', 'not-personal']);
      expect(classified.code, classified.stderr).toBe(0);
      expect(classified.stdout).toMatch(/^BadgeNumber is not-personal for default\n/);
      expect(classified.stdout).toMatch(/re-sync \d+ of individuals of default is asked for/);
      expect(await sql`select stream, via from workforce.resync_requests where company_key = 'default'`).toEqual([
        { stream: 'individuals', via: 'cli' },
      ]);
      expect((await wfsync(['schema'])).stdout).toMatch(/^default\s+individuals\s+BadgeNumber\s+not-personal\s/m);
    } finally {
      await sql.end();
    }
  });

  it('refuses an unknown company, field, class or mode in one line, changing nothing', async () => {
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      const state = async () => ({
        classes: await sql`select company_key, field, class from workforce.field_classes order by 1, 2`,
        modes: await sql`select company_key, mode from workforce.new_field_modes order by 1`,
      });
      const before = await state();
      for (const args of [
        ['schema', 'classify', 'nobody', 'BadgeNumber', 'personal'],
        ['schema', 'classify', 'default', 'ShoeSize', 'personal'],
        ['schema', 'classify', 'default', 'BadgeNumber', 'secret'],
        ['schema', 'classify', 'default', 'FirstName', 'not-personal'],
        ['schema', 'classify', 'default', 'BadgeNumber'],
        ['schema', 'new-fields', 'default', 'drop'],
        ['schema', 'new-fields', 'nobody', 'hold'],
        ['schema', 'forget', 'default'],
      ]) {
        const r = await wfsync(args);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
        expect(r.stderr, args.join(' ')).toMatch(/^wfsync: /);
      }
      expect(await state()).toEqual(before);
    } finally {
      await sql.end();
    }
  });

  it('refuses an unknown option with one line', async () => {
    const r = await wfsync(['schema', '--colour']);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--colour/);
  });
});
