import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync } from '../support/processes.ts';

/** The commands as a user runs them, off a terminal: JSON logs on stderr, only results on stdout. */

let sandbox: RunningSandbox;
let env: Record<string, string>;
let cwd: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 9, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-app-'));
  env = {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    DATABASE_URL: await freshDatabase(),
    WFS_RATE_LIMIT: '100/1s',
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  await sandbox?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function wfsync(args: string[], overrides: Record<string, string> = {}) {
  return runWfsync(args, { ...env, ...overrides }, cwd);
}

describe('sync --once --json > out.json', () => {
  it('stdout is the JSON summary alone; the info log lines are JSON on stderr', async () => {
    const ran = await wfsync(['sync', '--once', '--streams', 'departments,individuals', '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const summary = JSON.parse(ran.stdout) as { rows: number; failed: number };
    expect(summary.failed).toBe(0);
    expect(summary.rows).toBeGreaterThan(0);
    const logs = ran.stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(logs.length).toBeGreaterThan(3);
    for (const l of logs) expect(JSON.parse(l)).toHaveProperty('msg');
    expect(logs.map((l) => JSON.parse(l).msg)).toContain('stream finished');
  });

  it('LOG_FORMAT=pretty: human log lines on stderr, still nothing but JSON on stdout', async () => {
    const ran = await wfsync(['sync', '--once', '--streams', 'departments', '--json'], { LOG_FORMAT: 'pretty' });
    expect(ran.code, ran.stderr).toBe(0);
    JSON.parse(ran.stdout);
    expect(ran.stderr).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: stream finished/m);
    expect(ran.stderr.split('\n').filter((l) => l.startsWith('{"level"'))).toEqual([]);
  });
});

describe('wfsync status', () => {
  it('gives freshness, lag and push counts; --json the same facts', async () => {
    const text = await wfsync(['status'], { LOG_LEVEL: 'warn' });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toMatch(/^company\s+stream\s+fresh\s+lag\s+last run\s+last success\s+rows\s+error$/);
    expect(lines).toContainEqual(expect.stringMatching(/^default\s+departments\s+fresh\s+\d+ s\s+ok\s+\d{4}-/));
    expect(lines).toContainEqual(expect.stringMatching(/^default\s+shift-assignments\s+stale\s+never\s+never\s+-/));
    expect(text.stdout).toMatch(/^push: no changes$/m);

    const json = await wfsync(['status', '--json'], { LOG_LEVEL: 'warn' });
    const status = JSON.parse(json.stdout) as {
      streams: { stream: string; freshness: string; lagSeconds: number | null; nextRunAt: string }[];
      push: { counts: object; inDoubt: number };
    };
    const departments = status.streams.find((s) => s.stream === 'departments')!;
    expect(departments.freshness).toBe('fresh');
    expect(departments.lagSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(departments.nextRunAt)).toBeGreaterThan(Date.now() - 1000);
    expect(status.push).toEqual({ counts: {}, inDoubt: 0, oldestQueuedAt: null });
  });
});
