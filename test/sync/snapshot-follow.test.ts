import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { SandboxData } from '../../src/sandbox/service.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { readRows } from '../support/rows.ts';
import { targets } from '../../src/resources/index.ts';
import { mappingItems } from '../support/sandbox-data.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * The required-status list follows employees: between its daily complete reads, a run reads by ServiceId only the
 * employees a signal names (here an individual renamed, as the individuals list shows), and a run with no signal
 * sends nothing.
 */

let renamed: number | undefined;
let sandbox: RunningSandbox;
let sync: TestSync;

const renaming = (data: SandboxData) =>
  mappingItems(data, (endpoint, x) => {
    if (renamed === undefined) return x;
    if (endpoint === 'individuals' && x.ServiceId === renamed) return { ...x, LastName: 'Renamed' };
    const who = x.Employment as Record<string, unknown> | undefined;
    if (endpoint === 'requiredCertificationStatus' && who?.ServiceId === renamed)
      return { ...x, Employment: { ...who, LastName: 'Renamed' } };
    return x;
  });

const statusStream = () => selectStreams(['required-certification-status']);
const statusOf = (r: Awaited<ReturnType<typeof runStreams>>) =>
  r.streams.find((s) => s.stream === 'required-certification-status')!;

beforeAll(async () => {
  const data = renaming(createSandboxData({ seed: 8, size: 'small' }));
  sandbox = await startSandbox({ port: 0, seed: 8, size: 'small', rateLimit: null, data });
  sync = await openTestSync(sandbox);
  expect(
    (
      await runStreams(
        sync.ctx,
        selectStreams(['individuals', 'individual-certifications', 'required-certification-status']),
      )
    ).failed,
  ).toBe(0);
  // Rows the backfill wrote while the list was being read are signals for one more run.
  expect((await runStreams(sync.ctx, statusStream())).failed).toBe(0);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

describe('required credential status follows employees', () => {
  it('sends nothing when no individual, credential or expiration changed', async () => {
    const r = statusOf(await runStreams(sync.ctx, statusStream()));
    expect(r.outcome).toBe('ok');
    expect(r.rereads).toEqual([]);
    expect(r.requests).toBe(0);
  });

  it('reads a renamed individual’s status by one request for that individual', async () => {
    const rows = await readRows(sync.warehouse, targets['required-certification-status'], 'acme');
    expect(rows.length).toBeGreaterThan(200);
    renamed = Number(rows[0]!.employment_service_id);
    expect((await runStreams(sync.ctx, selectStreams(['individuals']))).failed).toBe(0);
    const r = statusOf(await runStreams(sync.ctx, statusStream()));
    expect(r.outcome).toBe('ok');
    expect(r.rereads).toEqual([]);
    expect(r.requests).toBe(1);
    const after = await readRows(sync.warehouse, targets['required-certification-status'], 'acme');
    expect(after.find((x) => Number(x.employment_service_id) === renamed)!.employment_last_name).toBe('Renamed');
    expect(after.filter((x) => x._deleted_at === null).length).toBe(rows.filter((x) => x._deleted_at === null).length);
  });
});
