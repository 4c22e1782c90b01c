import { spawn } from 'node:child_process';
import { request } from 'undici';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { call, v2 } from './http-helpers.ts';

const BIN = new URL('../../bin/wfsync.js', import.meta.url).pathname;
const ROOT = new URL('../..', import.meta.url).pathname;

function wfsync(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'sandbox', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number);
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('wfsync sandbox', () => {
  it('prints its base URL, key and limit in one block, serves, and stops on SIGINT with exit 0', async () => {
    const run = wfsync([
      '--port',
      '0',
      '--seed',
      '2',
      '--size',
      'tiny',
      '--rate-limit',
      '3/1s',
      '--key',
      'k1',
      '--key',
      'k2:certifications',
    ]);
    try {
      await until(() => run.out().includes('\n'));
      const m = /sandbox serving (http:\/\/127\.0\.0\.1:\d+)\s+api key: (\S+), (\S+)\s+\(3\/1s per key/.exec(run.out());
      expect(m, run.out()).not.toBeNull();
      const target = { url: m![1]!, apiKey: 'k1' };
      expect([m![2], m![3]]).toEqual(['k1', 'k2']);
      expect((await call(target, v2('/Individual/GetList'))).status).toBe(200);
      expect((await call(target, v2('/Individual/GetList'), { key: 'k2' })).status).toBe(403);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(target, v2('/Schedule/GetList'))).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      run.child.kill('SIGINT');
    }
    expect(await run.exited).toBe(0);
  });

  it('refuses a bad option with one line naming it and exit code 2', async () => {
    for (const [args, name] of [
      [['--size', 'huge'], '--size'],
      [['--rate-limit', 'fast'], '--rate-limit'],
      [['--faults', 'boom=1'], '--faults'],
      [['--key', 'k:payroll'], '--key'],
      [['--port', '99999'], '--port'],
      [['--colour'], '--colour'],
    ] as const) {
      const run = wfsync([...args]);
      expect(await run.exited, args.join(' ')).toBe(2);
      const lines = run.err().trim().split('\n');
      expect(lines, run.err()).toHaveLength(1);
      expect(lines[0]).toContain(name);
    }
  });

  it('documents its options and the --faults syntax in --help', async () => {
    const run = wfsync(['--help']);
    expect(await run.exited).toBe(0);
    for (const word of [
      '--port',
      '--host',
      '--seed',
      '--size',
      '--key',
      '--rate-limit',
      '--latency-ms',
      '--faults',
      'storm=EVERY:FOR',
      'lost=P',
      '--quirks',
      '--late-ms',
    ]) {
      expect(run.out()).toContain(word);
    }
  });
});

/** Whether anything still answers at `url` (any HTTP status counts). */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await request(`${url}/_sandbox/now`, { headersTimeout: 1000, bodyTimeout: 1000 });
    await res.body.text();
    return true;
  } catch {
    return false;
  }
}

describe('npm run wfsync -- sandbox', () => {
  // npm runs a script through `sh -c`; a shell that does not exec its last command takes npm's SIGTERM and dies
  // alone, leaving tsx and the sandbox serving. The scripts exec, so the signal reaches tsx, which relays it.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops serving when ${signal} is sent to the npm process only`, async () => {
      const npm = spawn(
        'npm',
        ['run', 'wfsync', '--', 'sandbox', '--port', '0', '--size', 'tiny', '--rate-limit', 'off'],
        {
          cwd: ROOT,
          // Its own process group, so the signal goes to npm alone, as `kill <pid>` sends it.
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, LOG_LEVEL: 'silent' },
        },
      );
      let out = '';
      npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until(() => /sandbox serving (http:\/\/\S+)/.test(out), 60_000);
        const url = /sandbox serving (http:\/\/\S+)/.exec(out)![1]!;
        expect(await answers(url)).toBe(true);
        process.kill(npm.pid!, signal);
        const stoppedBy = Date.now() + 5000;
        while ((await answers(url)) && Date.now() < stoppedBy) await new Promise((r) => setTimeout(r, 100));
        expect(await answers(url)).toBe(false);
      } finally {
        try {
          process.kill(-npm.pid!, 'SIGKILL');
        } catch {
          // Already gone, as it should be.
        }
      }
    }, 90_000);
  }
});
