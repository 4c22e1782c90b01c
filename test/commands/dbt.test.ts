import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DBT_DOC_DIR } from '../../src/ops/dbt.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';

/** `wfsync dbt --out DIR` as a user runs it: the package of the configured warehouse, as docs/dbt/ holds it. */

let env: Record<string, string>;
let cwd: string;

beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-dbt-'));
  env = {
    DATABASE_URL: await freshDatabase(),
    WFS_BASE_URL: 'http://127.0.0.1:9',
    WFS_API_KEY: 'unused',
    LOG_LEVEL: 'warn',
  };
});

afterAll(() => {
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function wfsync(args: string[]) {
  const run = spawnWfsync(args, env, cwd);
  let stderr = '';
  run.proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const { code } = await run.exited();
  return { code, stderr };
}

function filesUnder(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.set(relative(dir, join(d, e.name)), readFileSync(join(d, e.name), 'utf8'));
    }
  };
  walk(dir);
  return out;
}

describe('wfsync dbt', () => {
  it('writes the package of the warehouse into --out', async () => {
    const out = join(cwd, 'package');
    const r = await wfsync(['dbt', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const written = filesUnder(out);
    expect(written.get('models/staging/stg_workforce__individuals.sql')).toMatch(
      /from \{\{ source\('workforce', 'individuals'\) \}\}\nwhere _deleted_at is null/,
    );
    expect(written).toEqual(filesUnder(DBT_DOC_DIR));
  });

  it('asks for --out', async () => {
    const r = await wfsync(['dbt']);
    expect(r.code).toBe(2);
  });
});
