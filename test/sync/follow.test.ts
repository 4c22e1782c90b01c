import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { SandboxData } from '../../src/sandbox/service.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { readRows, targets } from '../../src/warehouse/index.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * A renamed individual: the service changes the name on the individual and on every credential, but does not
 * bump the credentials' UpdateDate, so `updatedSince` never returns them. The credentials follow the individual.
 */

let renamed: number | undefined;
let sandbox: RunningSandbox;
let sync: TestSync;

function renaming(data: SandboxData): SandboxData {
  return {
    ...data,
    read(endpoint, query, page) {
      const r = data.read(endpoint, query, page);
      if (!r.ok || renamed === undefined || (endpoint !== 'individuals' && endpoint !== 'individualCertifications')) return r;
      const items = r.value.items.map((it) => {
        const x = it as Record<string, unknown>;
        return x.ServiceId === renamed ? { ...x, LastName: 'Renamed' } : x;
      });
      return { ok: true, value: { ...r.value, items } };
    },
  };
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 8, size: 'tiny', rateLimit: null, data: renaming(createSandboxData({ seed: 8, size: 'tiny' })) });
  sync = await openTestSync(sandbox);
  expect((await runStreams(sync.ctx, selectStreams(['individual-certifications']))).failed).toBe(0);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

describe('credentials follow their individual', () => {
  it('a rename reaches the credentials in the same cycle, by one request for that individual', async () => {
    const creds = await readRows(sync.warehouse, targets.individualCertifications, 'acme');
    const holder = creds.find((c) => c._deleted_at === null)!.service_id as number;
    renamed = holder;
    const r = await runStreams(sync.ctx, selectStreams(['individual-certifications']));
    expect(r.failed).toBe(0);
    const after = (await readRows(sync.warehouse, targets.individualCertifications, 'acme')).filter((c) => c.service_id === holder);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((c) => c.last_name === 'Renamed')).toBe(true);
    // The updatedSince read and the one read for the renamed individual.
    expect(r.streams.find((s) => s.stream === 'individual-certifications')!.requests).toBe(2);
  });
});
