import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync, waitFor } from '../support/processes.ts';

/**
 * What a `sync --once` or a `start` against a real service, without Redis, loads: never src/sandbox (imported
 * only to serve the built-in sandbox), and never bullmq or ioredis (imported only where Redis is used).
 */

let sandbox: RunningSandbox;
let dir: string;
let loaded: string[];
let loadedByStart: string[];

/** Runs `wfsync <args>` with a module hook that writes down every module it loads; `stop` says when to SIGTERM it. */
async function modulesLoadedBy(
  name: string,
  args: string[],
  env: Record<string, string>,
  stop?: (output: string) => boolean,
): Promise<string[]> {
  const list = join(dir, `${name}.txt`);
  writeFileSync(
    join(dir, `${name}-hooks.mjs`),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(list)}, url + '\\n');
  return next(url, context);
}`,
  );
  const hooks = join(dir, `${name}-register.mjs`);
  writeFileSync(
    hooks,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, `${name}-hooks.mjs`)).href)});\n`,
  );
  const run = spawnWfsync(args, { ...env, NODE_OPTIONS: `--import ${pathToFileURL(hooks).href}` });
  if (stop) {
    await waitFor(
      () => `${name} to be under way; said:\n${run.output().slice(-3000)}`,
      async () => stop(run.output()),
      120_000,
    );
    run.proc.kill('SIGTERM');
  }
  const { code } = await run.exited();
  expect(code, run.output()).toBe(0);
  const urls = sourcesOf(readFileSync(list, 'utf8').split('\n').filter(Boolean));
  // The hook saw the process's own modules and its packages, so its silence about the others means something.
  expect(urls.some((u) => u.endsWith('/src/app/environment.ts'))).toBe(true);
  expect(urls.some((u) => u.endsWith('/src/sync/engine.ts'))).toBe(true);
  expect(urls.some((u) => u.includes('/node_modules/postgres/'))).toBe(true);
  return urls;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 2, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  dir = mkdtempSync(join(tmpdir(), 'wfsync-modules-'));
  const env = {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    WFS_RATE_LIMIT: '100/1s',
    WFS_HTTP_PORT: '0',
    LOG_LEVEL: 'warn',
  };
  [loaded, loadedByStart] = await Promise.all([
    modulesLoadedBy('sync', ['sync', '--once', '--streams', 'departments'], {
      ...env,
      DATABASE_URL: await freshDatabase(),
    }),
    // `start` syncs every stream first, then schedules them: told to stop once it has.
    modulesLoadedBy(
      'start',
      ['start'],
      { ...env, DATABASE_URL: await freshDatabase(), WFS_SECRET_KEY: 'loading-test-secret-key-0123' },
      (out) => out.includes('scheduled incremental syncs'),
    ),
  ]);
}, 240_000);

afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The source files behind the loaded files: a bundle's output files say which sources each holds. */
function sourcesOf(urls: string[]): string[] {
  return urls.flatMap((url) => {
    const path = fileURLToPath(url);
    const inBuild = /^(.*\/\.build\/[^/]+)\/([^/]+\.js)$/.exec(path);
    if (!inBuild) return [path];
    const chunks = JSON.parse(readFileSync(join(inBuild[1]!, 'chunks.json'), 'utf8')) as Record<string, string[]>;
    return (chunks[inBuild[2]!] ?? []).map((source) => join(inBuild[1]!, '../..', source));
  });
}

describe('start against a real service, without Redis', () => {
  it('does not load bullmq or ioredis', () => {
    expect(loadedByStart.filter((u) => /\/node_modules\/(bullmq|ioredis)\//.test(u))).toEqual([]);
  });
});

describe('a sync against a real service, without Redis', () => {
  it('does not load the sandbox module', () => {
    expect(loaded.filter((u) => u.includes('/src/sandbox/'))).toEqual([]);
  });

  it('does not load bullmq or ioredis', () => {
    expect(loaded.filter((u) => /\/node_modules\/(bullmq|ioredis)\//.test(u))).toEqual([]);
  });
});
