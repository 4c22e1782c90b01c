/**
 * Writes test/fixtures/warehouse-<version>.json.gz: the warehouse a release's own `wfsync sync --once` leaves
 * after a first sync of this tree's sandbox (fixed seed, size and clock), for test/sync/upgrade.test.ts.
 *
 *   node --import tsx test/support/make-upgrade-fixture.ts [git ref, default 6981f23 (release 0.1.0)]
 *
 * The release runs from a git worktree of the ref (sharing this tree's node_modules) against a fresh embedded
 * Postgres; the sandbox is this tree's, so the test can rebuild the same service from the seed alone.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import postgres from 'postgres';
import { startSandbox } from '../../src/sandbox/index.ts';
import { sandboxSettings } from './sandbox-settings.ts';
import { startPostgres } from './services.ts';
import { dumpWarehouse, type WarehouseFixture } from './warehouse-fixture.ts';

export const FIXTURE_SANDBOX = { seed: 23, size: 'tiny', now: '2026-01-15T12:00:00.000Z' } as const;
/** The single company of a sync configured with WFS_BASE_URL alone. */
export const FIXTURE_COMPANY = 'default';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

async function main(ref: string): Promise<void> {
  const tree = mkdtempSync(join(tmpdir(), 'wfsync-release-'));
  execFileSync('git', ['-C', ROOT, 'worktree', 'add', '--detach', tree, ref], { stdio: 'inherit' });
  const pg = await startPostgres();
  const sandbox = await startSandbox({
    port: 0,
    seed: FIXTURE_SANDBOX.seed,
    size: FIXTURE_SANDBOX.size,
    now: new Date(FIXTURE_SANDBOX.now),
    rateLimit: null,
  });
  try {
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    const databaseUrl = pg.url.replace(/\/[^/]*$/, '/release');
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await admin.unsafe('create database release');
    await admin.end();
    // Run asynchronously: the sandbox answering it lives in this process.
    const synced = await promisify(execFile)(
      process.execPath,
      [join(tree, 'bin/wfsync.js'), 'sync', '--once', '--json'],
      {
        cwd: tree,
        maxBuffer: 16 * 1024 * 1024,
        env: {
          ...process.env,
          ...sandboxSettings(sandbox),
          WFS_RATE_LIMIT: '1000/1s',
          DATABASE_URL: databaseUrl,
          WFS_DATA_DIR: join(tree, '.wfsync'),
          LOG_LEVEL: 'warn',
        },
      },
    );
    const summary = JSON.parse(synced.stdout) as { failed: number; requests: number };
    if (summary.failed > 0) throw new Error(`the release's sync failed: ${synced.stdout}`);
    const journal = JSON.parse(readFileSync(join(tree, 'drizzle/meta/_journal.json'), 'utf8')) as {
      entries: { tag: string }[];
    };
    const version = (JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { version: string }).version;
    const fixture: WarehouseFixture = {
      release: { ref, version },
      sandbox: FIXTURE_SANDBOX,
      companyKey: FIXTURE_COMPANY,
      lastMigration: journal.entries.at(-1)!.tag,
      ...(await dumpWarehouse(databaseUrl)),
    };
    const out = join(ROOT, `test/fixtures/warehouse-${version}.json.gz`);
    writeFileSync(out, gzipSync(JSON.stringify(fixture), { level: 9 }));
    console.info(JSON.stringify({ out, requests: summary.requests, bytes: readFileSync(out).length }));
  } finally {
    await sandbox.close();
    await pg.stop();
    execFileSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', tree], { stdio: 'inherit' });
    if (existsSync(tree)) rmSync(tree, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2] ?? '6981f23');
