import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints } from '../../src/resources/index.ts';
import { readStatus } from '../../src/ops/status.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { migrateWarehouse } from '../../src/warehouse/migrate.ts';
import { freshDatabase } from '../support/db.ts';
import { migrateUpTo } from '../support/migrations.ts';
import { startProxy, type RunningProxy } from '../support/proxy.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { defaultSchedule } from '../support/schedule.ts';

/**
 * A record that stays unreadable is one reject however often it is read, and is resolved once the service sends
 * it readable again. A proxy in front of the sandbox breaks one individual's hire date while `broken` is set.
 */

type Rec = Record<string, unknown>;

let sandbox: RunningSandbox;
let proxy: RunningProxy;
let t: TestSync;
let broken = true;
let badId: number;

interface RejectRow {
  record_key: string;
  reason: string;
  times_seen: number;
  first_seen_at: Date;
  seen_at: Date;
  resolved_at: Date | null;
  raw: Rec;
}

const rejects = () =>
  t.warehouse.sql<RejectRow[]>`
    select record_key, reason, times_seen, first_seen_at, seen_at, resolved_at, raw
    from ${t.warehouse.sql(t.warehouse.schema)}.sync_rejects where company_key = 'acme' and stream = 'individuals'`;

async function readIndividuals(): Promise<number> {
  const summary = await runStreams(t.ctx, selectStreams(['individuals']));
  const run = summary.streams.find((s) => s.stream === 'individuals')!;
  expect(run.outcome).toBe('ok');
  return run.rejects;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 5, size: 'tiny', rateLimit: null });
  badId = (sandbox.data.truth('individuals') as Rec[])[2]!.ServiceId as number;
  proxy = await startProxy(sandbox.url, {
    rewrite: (url, body) => {
      if (!broken || url.pathname !== endpoints.individuals.path) return undefined;
      const fix = (r: Rec) => (r.ServiceId === badId ? { ...r, HireDate: 'not a date' } : r);
      return Array.isArray(body)
        ? body.map((r) => fix(r as Rec))
        : { ...(body as Rec), Data: ((body as Rec).Data as Rec[]).map(fix) };
    },
  });
  t = await openTestSync(sandbox, { baseUrl: proxy.url });
});

afterAll(async () => {
  await t?.close();
  await proxy?.close();
  await sandbox?.close();
});

describe('a record that stays unreadable', () => {
  it('read three times is one reject, seen three times, keyed by its id', async () => {
    for (let i = 0; i < 3; i++) expect(await readIndividuals()).toBe(1);
    const rows = await rejects();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ record_key: JSON.stringify([String(badId)]), times_seen: 3, resolved_at: null });
    expect(rows[0]!.reason).toMatch(/^HireDate: /);
    expect(rows[0]!.raw).toMatchObject({ ServiceId: badId, HireDate: 'not a date' });
    expect(rows[0]!.seen_at.getTime()).toBeGreaterThan(rows[0]!.first_seen_at.getTime());
  });

  it('counts as open on the status page', async () => {
    const status = await readStatus(t.warehouse, { companies: ['acme'], schedule: defaultSchedule });
    expect(status.rejectsTotal).toBe(1);
    expect(status.streams.find((s) => s.stream === 'individuals')!.rejectsKept).toBe(1);
  });

  it('is resolved once the service sends it readable, and opened again if it breaks again', async () => {
    broken = false;
    expect(await readIndividuals()).toBe(0);
    const [fixed] = await rejects();
    expect(fixed).toMatchObject({ times_seen: 3 });
    expect(fixed!.resolved_at).toBeInstanceOf(Date);
    expect((await readStatus(t.warehouse, { companies: ['acme'], schedule: defaultSchedule })).rejectsTotal).toBe(0);

    broken = true;
    expect(await readIndividuals()).toBe(1);
    const rows = await rejects();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ times_seen: 4, resolved_at: null });
  });
});

describe('rejects kept before they were kept once each', () => {
  it('are collapsed by the migration to one row per record and reason, keyed by the id their payload gives', async () => {
    const url = await freshDatabase();
    await migrateUpTo(url, '0009_run_fence_setting');
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const at = (h: number) => new Date(Date.UTC(2026, 0, 1, h));
      const bad = { ServiceId: 7, HireDate: 'not a date' };
      const odd = { Note: 'no id at all' };
      await sql`insert into workforce.sync_rejects (company_key, stream, raw, reason, seen_at) values
        ('acme', 'individuals', ${sql.json(bad)}, 'HireDate: invalid', ${at(1)}),
        ('acme', 'individuals', ${sql.json(bad)}, 'HireDate: invalid', ${at(2)}),
        ('acme', 'individuals', ${sql.json(bad)}, 'HireDate: invalid', ${at(3)}),
        ('acme', 'individuals', ${sql.json(odd)}, 'ServiceId: required', ${at(1)}),
        ('acme', 'individuals', ${sql.json(odd)}, 'ServiceId: required', ${at(4)}),
        ('beta', 'individuals', ${sql.json(bad)}, 'HireDate: invalid', ${at(5)})`;
      await migrateWarehouse(url, 'workforce');
      const rows = await sql<
        { company_key: string; record_key: string; times_seen: number; first_seen_at: Date; seen_at: Date }[]
      >`
        select company_key, record_key, times_seen, first_seen_at, seen_at from workforce.sync_rejects order by company_key, record_key`;
      expect(
        rows.map((r) => [
          r.company_key,
          r.record_key,
          r.times_seen,
          r.first_seen_at.getUTCHours(),
          r.seen_at.getUTCHours(),
        ]),
      ).toEqual([
        ['acme', '["7"]', 3, 1, 3],
        ['acme', expect.stringMatching(/^payload:[0-9a-f]{32}$/), 2, 1, 4],
        ['beta', '["7"]', 1, 5, 5],
      ]);
    } finally {
      await sql.end();
    }
  });
});
