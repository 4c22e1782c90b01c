import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync } from '../support/processes.ts';

/** wfsync usage, timeline and resync as an operator runs them, over a warehouse one sync filled. */

let sandbox: RunningSandbox;
let env: Record<string, string>;
let cwd: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
  cwd = mkdtempSync(join(tmpdir(), 'wfsync-operator-'));
  env = {
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    DATABASE_URL: await freshDatabase(),
    WFS_RATE_LIMIT: '100/1s',
    LOG_LEVEL: 'warn',
  };
  const synced = await wfsync(['sync', '--once', '--streams', 'departments', '--json']);
  expect(synced.code).toBe(0);
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

async function wfsync(args: string[]) {
  return runWfsync(args, env, cwd);
}

describe('wfsync usage', () => {
  it("counts the sync's requests on today's row of its company and stream", async () => {
    const ran = await wfsync(['usage', '--company', 'default', '--json']);
    expect(ran.code).toBe(0);
    const days = JSON.parse(ran.stdout) as {
      company: string;
      stream: string;
      day: string;
      requests: number;
      runs: number;
    }[];
    const today = new Date().toISOString().slice(0, 10);
    expect(days).toContainEqual({
      company: 'default',
      stream: 'departments',
      day: today,
      requests: expect.any(Number),
      runs: 1,
    });
    expect(days.find((d) => d.stream === 'departments')!.requests).toBeGreaterThan(0);
    const bad = await wfsync(['usage', '--since', 'last week']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim()).toBe('wfsync: --since "last week": expected a day such as 2026-11-01');
  });
});

describe('wfsync resync and timeline', () => {
  it('asks for a re-sync (left for the running start, there is no Redis) and shows it on the timeline', async () => {
    const asked = await wfsync(['resync', 'default', 'departments']);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toMatch(
      /^re-sync \d+ of departments of default is asked for: the running start takes it within seconds\n$/,
    );
    const timeline = await wfsync(['timeline', 'default', '--json']);
    expect(timeline.code).toBe(0);
    const events = (JSON.parse(timeline.stdout) as { event: string; stream: string | null }[]).map((e) => [
      e.event,
      e.stream,
    ]);
    expect(events[0]).toEqual(['resync_requested', 'departments']);
    expect(events).toContainEqual(['company_added', null]);
    const text = await wfsync(['timeline', 'default', '--since', '1h']);
    expect(text.stdout).toMatch(/ resync_requested +departments +by cli:\S+ via=cli request=\d+$/m);

    for (const [args, line] of [
      [['resync', 'default', 'nothing'], /^wfsync: resync: stream "nothing" is not one of /],
      [['resync', 'elsewhere', 'departments'], /^wfsync: resync: company elsewhere is not added/],
      [
        ['timeline', 'default', '--since', 'soon'],
        /^wfsync: --since "soon": expected an ISO date or time, or a duration such as 12h or 7d$/,
      ],
    ] as const) {
      const ran = await wfsync([...args]);
      expect(ran.code).not.toBe(0);
      expect(ran.stderr.trim().split('\n')).toHaveLength(1);
      expect(ran.stderr.trim()).toMatch(line);
    }
  });
});
