import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStream } from '../../src/sync/engine.ts';
import { streamByName } from '../../src/sync/streams.ts';
import { readCheckpoint } from '../../src/warehouse/index.ts';
import { WindowCursor } from '../../src/sync/cursors.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/** An interrupted backfill keeps each slice it completed: the resumed run reads only what is left. */

let sandbox: RunningSandbox;
let sync: TestSync;
const stream = streamByName('assignment-changes')!;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: null });
  sync = await openTestSync(sandbox);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

/** The window starts a run asks for. */
function recordStarts(): { starts: string[]; stop(): void } {
  const starts: string[] = [];
  const original = sync.client.pages.bind(sync.client);
  sync.client.pages = ((e, q, o) => {
    const query = q as Record<string, unknown>;
    if (query.StartDate instanceof Date && !(query.Offset ?? 0)) starts.push(query.StartDate.toISOString());
    return original(e, q, o);
  }) as typeof sync.client.pages;
  return { starts, stop: () => (sync.client.pages = original) };
}

describe('an interrupted backfill resumes', () => {
  it('reads again at most the one slice it was in, then completes', async () => {
    const controller = new AbortController();
    const first = recordStarts();
    let pages = 0;
    const ctx = {
      ...sync.ctx,
      windowConcurrency: 1,
      signal: controller.signal,
      onProgress: () => {
        if (++pages === 20) controller.abort();
      },
    };
    await expect(runStream(ctx, stream)).rejects.toThrow();
    first.stop();
    const saved = WindowCursor.parse(await readCheckpoint(sync.warehouse, 'acme', stream.name));
    expect(saved.pass?.name).toBe('backfill');
    const done = new Set(saved.pass!.done);
    expect(done.size).toBeGreaterThan(0);
    const total = Math.ceil((Date.parse(saved.pass!.to) - Date.parse(saved.pass!.from)) / (7 * 86_400_000));

    const second = recordStarts();
    await runStream({ ...sync.ctx, windowConcurrency: 1 }, stream);
    second.stop();
    const again = second.starts.filter((s) => first.starts.includes(s));
    expect(again.length).toBeLessThanOrEqual(1);
    expect(second.starts.some((s) => done.has(s))).toBe(false);
    expect(new Set([...first.starts, ...second.starts]).size).toBe(total);
    const finished = WindowCursor.parse(await readCheckpoint(sync.warehouse, 'acme', stream.name));
    expect(finished.pass).toBeUndefined();
    expect(finished.until).toBeDefined();
  });

  it('a cursor written by another version fails loudly, naming the stream', async () => {
    await sync.warehouse.sql`
      update ${sync.warehouse.sql(sync.warehouse.schema)}.sync_state set cursor = ${sync.warehouse.sql.json({ until: '2026-01-01T00:00:00Z' })}
      where company_key = 'acme' and stream = ${stream.name}`;
    await expect(runStream(sync.ctx, stream)).rejects.toThrow(/assignment-changes.*another version.*full refresh/);
  });
});
