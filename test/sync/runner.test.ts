import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { capturingLogger } from '../support/logs.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: null });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('runStreams logs', () => {
  it.each([
    ['a context logger that already names the company', true],
    ['a bare context logger', false],
  ])('name the company and stream once per line, with %s', async (_name, bound) => {
    const { lines, log } = capturingLogger();
    let sync: TestSync | undefined;
    try {
      sync = await openTestSync(sandbox, { log: bound ? log.child({ company: 'acme' }) : log, companyKey: 'acme' });
      await runStreams(sync.ctx, selectStreams(['departments']));
    } finally {
      await sync?.close();
    }
    const finished = lines.filter((l) => l.includes('"stream finished"'));
    expect(finished).toHaveLength(1);
    for (const line of lines.filter((l) => l.includes('"stream '))) {
      expect(line.match(/"company":/g), line).toHaveLength(1);
      expect(line.match(/"stream":/g), line).toHaveLength(1);
    }
    const outcome = JSON.parse(finished[0]!);
    expect(outcome).toMatchObject({ company: 'acme', stream: 'departments', outcome: 'ok', requests: 1 });
    expect(outcome.rows).toBeGreaterThan(0);
  });
});
