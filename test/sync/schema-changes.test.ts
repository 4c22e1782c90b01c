import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Observers } from '../../src/observers.ts';
import { Metrics } from '../../src/ops/metrics.ts';
import { readStatus } from '../../src/ops/status.ts';
import { schemaChangesTable } from '../../src/ops/page.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { masked, watchFields } from '../../src/sync/schema-watch.ts';
import type { StreamRun } from '../../src/sync/context.ts';
import { streamByName } from '../../src/resources/index.ts';
import { mapPage } from '../../src/warehouse/page-map.ts';
import { parsed } from '../warehouse/fixtures.ts';
import { listEvents } from '../../src/warehouse/events.ts';
import { listSchemaChanges } from '../../src/warehouse/schema-changes.ts';
import { jobs } from '../../jobs/index.ts';
import { freshDatabase } from '../support/db.ts';
import { openWarehouse } from '../../src/warehouse/connection.ts';
import { capturingLogger } from '../support/logs.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * A field the service adds (the sandbox's `new-field` quirk: BadgeNumber on every individual) is recorded in
 * schema_changes after the next sync, logged once, counted in the metric, put on the company's timeline and
 * listed on the status page; once the service stops sending it, three complete reads without it make it gone.
 */

const individuals = () => selectStreams(['individuals', 'supervisors']);
const quirky: { sandbox?: RunningSandbox; sync?: TestSync } = {};
const plain: { sandbox?: RunningSandbox; sync?: TestSync } = {};
const metrics = new Metrics();
const captured = capturingLogger();
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase({ migrated: true });
  quirky.sandbox = await startSandbox({ port: 0, seed: 5, size: 'small', rateLimit: null, quirks: ['new-field'] });
  quirky.sync = await openTestSync(quirky.sandbox, { databaseUrl, log: captured.log });
  quirky.sync.ctx.observers = new Observers();
  metrics.listen(quirky.sync.ctx.observers);
}, 60_000);

afterAll(async () => {
  await quirky.sync?.close();
  await quirky.sandbox?.close();
  await plain.sync?.close();
  await plain.sandbox?.close();
});

const announced = (msg: RegExp) => captured.lines.filter((l) => msg.test(JSON.parse(l).msg as string));
const series = async (kind: string) => {
  const line = (await metrics.render())
    .split('\n')
    .find((l) => l.startsWith(`wfsync_schema_changes_total{stream="individuals",kind="${kind}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

describe('a field the service adds', () => {
  it('is recorded after the next sync with its type and a masked example, logged and counted once', async () => {
    expect((await runStreams(quirky.sync!.ctx, individuals())).failed).toBe(0);
    expect((await runStreams(quirky.sync!.ctx, individuals())).failed).toBe(0);
    const people = quirky.sandbox!.data.truth('individuals').length;
    const [row, ...others] = await listSchemaChanges(quirky.sync!.warehouse, { companyKey: 'acme' });
    expect(others).toEqual([]);
    expect(row).toMatchObject({
      stream: 'individuals',
      field_path: 'BadgeNumber',
      json_type: 'string',
      gone_at: null,
      records_seen: 2 * people,
    });
    expect(row!.example).toMatch(/^x-9{8}$/);
    expect(announced(/sends a field no column maps/)).toHaveLength(1);
    expect(JSON.parse(announced(/sends a field no column maps/)[0]!)).toMatchObject({
      stream: 'individuals',
      path: 'BadgeNumber',
    });
    expect(await series('appeared')).toBe(1);
    const events = await listEvents(quirky.sync!.warehouse, { companyKey: 'acme' });
    expect(events.filter((e) => e.event === 'field_appeared').map((e) => [e.stream, e.detail])).toEqual([
      ['individuals', { path: 'BadgeNumber', jsonType: 'string' }],
    ]);
  });

  it('is kept in _extra, where SQL reads it', async () => {
    const [r] = await quirky.sync!.warehouse.sql`
      select count(*)::int as n, count(*) filter (where _extra->>'BadgeNumber' = 'B-' || lpad(service_id::text, 8, '0'))::int as matching
      from workforce.individuals where company_key = 'acme'`;
    expect(r!.n).toBeGreaterThan(100);
    expect(r!.matching).toBe(r!.n);
  });

  it('is listed on the status page and in /status', async () => {
    const status = await readStatus(quirky.sync!.warehouse, {
      companies: ['acme'],
      schedule: { jobs, cronOverrides: {}, timezone: 'UTC' },
    });
    expect(status.schemaChanges.map((c) => [c.company_key, c.stream, c.field_path])).toEqual([
      ['acme', 'individuals', 'BadgeNumber'],
    ]);
    const html = schemaChangesTable(status.schemaChanges);
    expect(html).toMatch(
      /<tr data-field="BadgeNumber"><td>acme<\/td><td>individuals<\/td><td><code>BadgeNumber<\/code><\/td><td>string<\/td>/,
    );
  });

  it('is gone after three complete reads without it, announced once', async () => {
    plain.sandbox = await startSandbox({ port: 0, seed: 5, size: 'small', rateLimit: null });
    plain.sync = await openTestSync(plain.sandbox, { databaseUrl, log: captured.log });
    plain.sync.ctx.observers = new Observers();
    metrics.listen(plain.sync.ctx.observers);
    for (let read = 1; read <= 4; read++) {
      expect((await runStreams(plain.sync.ctx, individuals())).failed).toBe(0);
      const [row] = await listSchemaChanges(plain.sync.warehouse, { companyKey: 'acme' });
      expect(row!.reads_without).toBe(Math.min(read, 3));
      expect(row!.gone_at === null).toBe(read < 3);
    }
    expect(announced(/is gone/)).toHaveLength(1);
    expect(await series('gone')).toBe(1);
    const events = await listEvents(plain.sync.warehouse, { companyKey: 'acme' });
    expect(events.filter((e) => e.event === 'field_gone').map((e) => e.detail)).toEqual([{ path: 'BadgeNumber' }]);
  });

  it("names a field of a list's elements after the list, counting each record that carries it once", async () => {
    const stream = streamByName('form-responses')!;
    const run = { ctx: { ...quirky.sync!.ctx, companyKey: 'lists' }, stream } as unknown as StreamRun;
    const base = parsed('formResponses') as { Answers: Record<string, unknown>[] };
    const items = [801, 802].map((ResponseId) => ({
      ...base,
      ResponseId,
      Answers: base.Answers.map((a) => ({ ...a, Comment: 'said so' })),
    }));
    const watch = watchFields(run, false);
    await watch.page(mapPage(stream.target, items, { companyKey: 'lists', extras: { FormId: 12 } }));
    await watch.end();
    const rows = await listSchemaChanges(quirky.sync!.warehouse, { companyKey: 'lists' });
    expect(rows.map((r) => [r.stream, r.field_path, r.json_type, r.example, r.records_seen])).toEqual([
      ['form-responses', 'Answers.Comment', 'string', 'xxxx xx', 2],
    ]);
  });

  it('is recorded in each warehouse a process writes, for a company of the same name in both', async () => {
    const stream = streamByName('form-responses')!;
    const base = parsed('formResponses') as { Answers: Record<string, unknown>[] };
    const items = [base].map((b) => ({ ...b, ResponseId: 901, Answers: b.Answers.map((a) => ({ ...a, Mood: 'ok' })) }));
    const other = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
    try {
      await other.migrate();
      for (const warehouse of [quirky.sync!.warehouse, other]) {
        const run = { ctx: { ...quirky.sync!.ctx, warehouse, companyKey: 'both' }, stream } as unknown as StreamRun;
        const watch = watchFields(run, false);
        await watch.page(mapPage(stream.target, items, { companyKey: 'both', extras: { FormId: 12 } }));
        await watch.end();
      }
      for (const warehouse of [quirky.sync!.warehouse, other]) {
        const rows = await listSchemaChanges(warehouse, { companyKey: 'both' });
        expect(rows.map((r) => [r.stream, r.field_path])).toEqual([['form-responses', 'Answers.Mood']]);
      }
    } finally {
      await other.close();
    }
  });

  it('masks every string of an example, keeping its shape', () => {
    expect(masked({ name: 'Ana Ruiz', badge: 'B-0042', n: 7, tags: ['RN', 'ß'] })).toEqual({
      name: 'xxx xxxx',
      badge: 'x-9999',
      n: 7,
      tags: ['xx', 'x'],
    });
  });
});
