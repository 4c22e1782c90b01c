import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync } from '../support/processes.ts';

/** `wfsync schema` as a user runs it, after a sync from a service that added a field to individuals. */

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
    const text = await wfsync(['schema']);
    expect(text.stdout).toMatch(/^default\s+individuals\s+BadgeNumber\s+string\s/m);
  });

  it('refuses an unknown option with one line', async () => {
    const r = await wfsync(['schema', '--colour']);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--colour/);
  });
});
