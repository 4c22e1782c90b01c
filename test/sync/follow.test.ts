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
 * A renamed individual: the service changes the name on the individual and on every credential, but does not
 * bump the credentials' UpdateDate, so `updatedSince` never returns them. The credentials follow the individual.
 */

const renamed = new Set<number>();
/** Individuals given a new phone number: nothing their credentials show. */
const rephoned = new Set<number>();
let sandbox: RunningSandbox;
let sync: TestSync;

const renaming = (data: SandboxData) =>
  mappingItems(data, (endpoint, x) =>
    (endpoint === 'individuals' || endpoint === 'individualCertifications') && renamed.has(x.ServiceId as number)
      ? { ...x, LastName: `Renamed ${renamed.size}` }
      : endpoint === 'individuals' && rephoned.has(x.ServiceId as number)
        ? { ...x, MobilePhoneNumber: `555-${rephoned.size}` }
        : x,
  );

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 8,
    size: 'tiny',
    rateLimit: null,
    data: renaming(createSandboxData({ seed: 8, size: 'tiny' })),
  });
  sync = await openTestSync(sandbox);
  expect((await runStreams(sync.ctx, selectStreams(['individual-certifications']))).failed).toBe(0);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

describe('credentials follow their individual', () => {
  it('a rename reaches the credentials in the same cycle, by one request for that individual', async () => {
    const creds = await readRows(sync.warehouse, targets['individual-certifications'], 'acme');
    const holder = creds.find((c) => c._deleted_at === null)!.service_id as number;
    expect(creds.filter((c) => c._deleted_at === null).length).toBeGreaterThan(200);
    renamed.add(holder);
    const r = await runStreams(sync.ctx, selectStreams(['individual-certifications']));
    expect(r.failed).toBe(0);
    const after = (await readRows(sync.warehouse, targets['individual-certifications'], 'acme')).filter(
      (c) => c.service_id === holder,
    );
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((c) => c.last_name === 'Renamed 1')).toBe(true);
    // The updatedSince read and the one read for the renamed individual.
    expect(r.streams.find((s) => s.stream === 'individual-certifications')!.requests).toBe(2);
  });

  it('a change to nothing the credentials show costs no request for that individual', async () => {
    const creds = (await readRows(sync.warehouse, targets['individual-certifications'], 'acme')).filter(
      (c) => c._deleted_at === null,
    );
    const holders = [...new Set(creds.map((c) => c.service_id as number))].filter((h) => !renamed.has(h)).slice(0, 3);
    for (const h of holders) rephoned.add(h);
    const r = await runStreams(sync.ctx, selectStreams(['individual-certifications']));
    expect(r.failed).toBe(0);
    const people = await readRows(sync.warehouse, targets.individuals, 'acme');
    expect(
      people.filter((p) => rephoned.has(p.service_id as number)).every((p) => p.mobile_phone_number === '555-3'),
    ).toBe(true);
    expect(r.streams.find((s) => s.stream === 'individual-certifications')!.requests).toBe(1);
  });

  it('when more individuals changed than the list has pages, the whole list is read instead, and nothing is lost', async () => {
    const before = (await readRows(sync.warehouse, targets['individual-certifications'], 'acme')).filter(
      (c) => c._deleted_at === null,
    );
    const pages = Math.ceil(before.length / 200);
    const holders = [...new Set(before.map((c) => c.service_id as number))].slice(0, pages + 1);
    for (const h of holders) renamed.add(h);
    const r = await runStreams(sync.ctx, selectStreams(['individual-certifications']));
    expect(r.failed).toBe(0);
    const after = await readRows(sync.warehouse, targets['individual-certifications'], 'acme');
    const live = after.filter((c) => c._deleted_at === null);
    expect(live.length).toBe(before.length);
    expect(
      live.filter((c) => renamed.has(c.service_id as number)).every((c) => c.last_name === `Renamed ${renamed.size}`),
    ).toBe(true);
    expect(r.streams.find((s) => s.stream === 'individual-certifications')!.requests).toBe(pages);
  });
});
