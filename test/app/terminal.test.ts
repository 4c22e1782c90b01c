import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freshDatabase } from '../support/db.ts';
import { waitFor } from '../support/processes.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const OUT = fileURLToPath(new URL('../../test-results/app/', import.meta.url));
// eslint-disable-next-line no-control-regex
/** CSI sequences (colours, cursor moves), OSC sequences (npm sets the window title) and two-byte escapes. */
const ANSI = /\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;

describe('npm start on a terminal', () => {
  it('shows a progress line per running stream and human log lines, never JSON', async () => {
    // `script` gives the command a pseudo-terminal, as a person's shell would.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      TERM: 'xterm-256color',
      COLUMNS: '160',
      LINES: '50',
      DATABASE_URL: await freshDatabase(),
      WFS_HTTP_PORT: '0',
    };
    const proc = spawn('script', ['-qefc', 'stty cols 160 rows 50; npm start', '/dev/null'], {
      cwd: REPO,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let raw = '';
    proc.stdout!.on('data', (d: Buffer) => (raw += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (raw += d.toString()));
    const text = () => raw.replace(ANSI, '').replace(/\r/g, '');
    try {
      await waitFor(
        () => `the first sync to finish; output so far:\n${text().slice(-3000)}`,
        async () => text().includes('scheduled incremental syncs'),
        240_000,
        500,
      );
      const out = text();
      const lines = out.split('\n');
      // Progress: the live block's heading and a line per running stream with rows, pages and the budget left.
      expect(out).toMatch(/^running \(\d+\):$/m);
      expect(lines).toContainEqual(
        expect.stringMatching(/^\s+shift-assignments\s+\d+ rows\s+\d+ pages\s+\d+ requests\s.*budget \d+\/100/),
      );
      // Log lines for people: time, level, message; the sandbox warning among them.
      expect(out).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: WFS_BASE_URL is not set: syncing from the BUILT-IN SANDBOX/m);
      expect(out).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: stream finished/m);
      expect(lines.filter((l) => /^\s*\{"level"/.test(l))).toEqual([]);
      // Colour codes are there on a terminal.
      expect(raw).toMatch(/\x1b\[3\dm/);
      // The summary, after the live block is gone.
      expect(out).toMatch(/^company default: \d+ rows, \d+ requests, 0 rejects/m);
    } finally {
      // Ctrl-C typed on the terminal: the line discipline signals the foreground process group.
      proc.stdin!.write('\x03');
    }
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    try {
      await waitFor(
        () => `a clean stop; output:\n${text().slice(-2000)}`,
        async () => /INFO: stopped/.test(text()),
        30_000,
      );
    } finally {
      if (proc.exitCode === null) process.kill(-proc.pid!, 'SIGKILL');
      await exited;
      // What the person saw, for a look at how it reads.
      mkdirSync(OUT, { recursive: true });
      writeFileSync(`${OUT}npm-start-terminal.txt`, raw);
    }
  }, 300_000);
});
