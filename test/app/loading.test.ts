import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';
import { spawnWfsync } from '../support/processes.ts';

/**
 * What a `sync --once` against a real service, without Redis, loads: never src/sandbox (imported only to serve
 * the built-in sandbox), and never bullmq or ioredis (imported only where Redis is used).
 */

let sandbox: RunningSandbox;
let dir: string;
let hooks: string;
let loaded: string[];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 2, size: 'tiny', rateLimit: { limit: 100, windowMs: 1000 } });
  dir = mkdtempSync(join(tmpdir(), 'wfsync-modules-'));
  // A module hook that writes down every module the process loads.
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(join(dir, 'loaded.txt'))}, url + '\\n');
  return next(url, context);
}`,
  );
  hooks = join(dir, 'register.mjs');
  writeFileSync(hooks, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);
  const run = spawnWfsync(['sync', '--once', '--streams', 'departments'], {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    DATABASE_URL: await freshDatabase(),
    WFS_RATE_LIMIT: '100/1s',
    LOG_LEVEL: 'warn',
    NODE_OPTIONS: `--import ${pathToFileURL(hooks).href}`,
  });
  const { code } = await run.exited();
  expect(code, run.output()).toBe(0);
  loaded = sourcesOf(readFileSync(join(dir, 'loaded.txt'), 'utf8').split('\n').filter(Boolean));
  // The hook saw the process's own modules and its packages, so its silence about the others means something.
  expect(loaded.some((u) => u.endsWith('/src/app/environment.ts'))).toBe(true);
  expect(loaded.some((u) => u.endsWith('/src/sync/engine.ts'))).toBe(true);
  expect(loaded.some((u) => u.includes('/node_modules/postgres/'))).toBe(true);
});

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

describe('a sync against a real service, without Redis', () => {
  it('does not load the sandbox module', () => {
    expect(loaded.filter((u) => u.includes('/src/sandbox/'))).toEqual([]);
  });

  it('does not load bullmq or ioredis', () => {
    expect(loaded.filter((u) => /\/node_modules\/(bullmq|ioredis)\//.test(u))).toEqual([]);
  });
});
