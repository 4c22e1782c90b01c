import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobByName } from '../../jobs/index.ts';
import { retryChange } from '../../src/push/outbox.ts';
import type { SyncContext } from '../../src/sync/context.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import type { Retention } from '../../src/config.ts';
import { pruneResolvedRejects } from '../../src/warehouse/retention.ts';
import { freshDatabase } from '../support/db.ts';

/** The daily housekeeping job: what is past its retention setting goes, what is recent or still open stays. */

let wh: Warehouse;
const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000);

async function housekeep(companyKey: string, retention: Retention) {
  const job = jobByName('housekeeping')!;
  const ctx = { companyKey, warehouse: wh, log: pino({ level: 'silent' }), retention } as SyncContext;
  return job.run!(ctx);
}

async function insertRun(company: string, stream: string, ago: number, outcome = 'ok'): Promise<number> {
  const [r] = await wh.sql<{ id: number }[]>`
    insert into ${wh.sql(wh.schema)}.sync_runs (company_key, stream, started_at, finished_at, outcome)
    values (${company}, ${stream}, ${daysAgo(ago)}, ${daysAgo(ago)}, ${outcome}) returning id::int as id`;
  return r!.id;
}

async function insertReject(company: string, key: string, resolvedAgo: number | null): Promise<void> {
  await wh.sql`
    insert into ${wh.sql(wh.schema)}.sync_rejects (company_key, stream, record_key, raw, reason, seen_at, resolved_at)
    values (${company}, 'individuals', ${key}, ${wh.sql.json({ ServiceId: key })}, 'HireDate: invalid', ${daysAgo(100)},
            ${resolvedAgo === null ? null : daysAgo(resolvedAgo)})`;
}

async function insertChange(company: string, changeId: string, status: string, ago: number): Promise<void> {
  await wh.sql`
    insert into ${wh.sql(wh.schema)}.push_outbox (company_key, kind, change_id, entity_key, seq, payload, sealed, status, updated_at)
    values (${company}, 'individual', ${changeId}, ${`en:${changeId}`}, 1, ${wh.sql.json({ FirstName: 'Ada' })}, 'sealed-ssn', ${status}, ${daysAgo(ago)})`;
}

const ids = async (table: string, company: string, column = 'id::int') =>
  (
    await wh.sql.unsafe(`select ${column} as v from "${wh.schema}".${table} where company_key = $1 order by 1`, [
      company,
    ])
  ).map((r) => r.v);

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
});

afterAll(async () => {
  await wh?.close();
});

describe('the housekeeping job', () => {
  let kept: number[];
  let gone: number[];

  beforeAll(async () => {
    gone = [await insertRun('acme', 'individuals', 45), await insertRun('acme', 'individuals', 40, 'failed')];
    kept = [
      await insertRun('acme', 'individuals', 1),
      // The latest run of its stream, and the latest successful one of another: however old, they stay.
      await insertRun('acme', 'locales', 90),
      await insertRun('acme', 'schedules', 80),
      await insertRun('acme', 'schedules', 2, 'failed'),
    ];
    await insertRun('beta', 'individuals', 45);
    await insertRun('beta', 'individuals', 44);
    await insertReject('acme', 'resolved-long-ago', 40);
    await insertReject('acme', 'resolved-lately', 5);
    await insertReject('acme', 'still-open', null);
    await insertChange('acme', 'applied-long-ago', 'applied', 40);
    await insertChange('acme', 'refused-long-ago', 'refused', 40);
    await insertChange('acme', 'applied-lately', 'applied', 5);
    await insertChange('acme', 'queued-long-ago', 'queued', 40);
    for (const [event, ago] of [
      ['company_added', 40],
      ['company_paused', 5],
    ] as const) {
      await wh.sql`insert into ${wh.sql(wh.schema)}.events (company_key, event, happened_at) values ('acme', ${event}, ${daysAgo(ago)})`;
    }
    for (const [company, target, ago] of [
      ['acme', 'old', 450],
      ['acme', 'recent', 300],
      [null, 'old token', 420],
      ['beta', 'old', 450],
    ] as const) {
      await wh.sql`insert into ${wh.sql(wh.schema)}.audit (at, actor, action, company_key, target, outcome)
                   values (${daysAgo(ago)}, 'cli:ann', 'companies pause', ${company}, ${target}, 'done')`;
    }
  });

  it('keeps everything when every horizon is longer than the oldest row', async () => {
    const summary = await housekeep('acme', {
      runsDays: 100,
      resolvedRejectsDays: 100,
      pushPayloadsDays: 100,
      auditDays: 500,
    });
    expect(summary.failed).toBe(0);
    expect(await ids('sync_runs', 'acme')).toEqual(expect.arrayContaining([...gone, ...kept]));
    expect(await ids('sync_rejects', 'acme', 'record_key')).toHaveLength(3);
  });

  it('prunes what is past its setting, and counts it in its run record', async () => {
    await housekeep('acme', { runsDays: 30, resolvedRejectsDays: 30, pushPayloadsDays: 30, auditDays: 400 });
    const runs = await ids('sync_runs', 'acme');
    for (const id of gone) expect(runs).not.toContain(id);
    for (const id of kept) expect(runs).toContain(id);
    expect(await ids('sync_runs', 'beta')).toHaveLength(2);
    expect(await ids('sync_rejects', 'acme', 'record_key')).toEqual(['resolved-lately', 'still-open']);
    // The timeline is kept as long as the runs.
    expect(await ids('events', 'acme', 'event')).toEqual(['company_paused']);

    const changes = await wh.sql<{ change_id: string; status: string; payload: object; sealed: string | null }[]>`
      select change_id, status, payload, sealed from ${wh.sql(wh.schema)}.push_outbox order by change_id`;
    expect(changes).toEqual([
      { change_id: 'applied-lately', status: 'applied', payload: { FirstName: 'Ada' }, sealed: 'sealed-ssn' },
      { change_id: 'applied-long-ago', status: 'applied', payload: {}, sealed: null },
      { change_id: 'queued-long-ago', status: 'queued', payload: { FirstName: 'Ada' }, sealed: 'sealed-ssn' },
      { change_id: 'refused-long-ago', status: 'refused', payload: {}, sealed: null },
    ]);
    // Nothing is left to send: a retry leaves the change refused.
    const [refused] = await wh.sql<
      { id: number }[]
    >`select id::int as id from ${wh.sql(wh.schema)}.push_outbox where change_id = 'refused-long-ago'`;
    expect((await retryChange(wh.sql, wh, refused!.id))?.status).toBe('refused');

    const [record] = await wh.sql<{ outcome: string; details: { pruned: Record<string, number> } }[]>`
      select outcome, details from ${wh.sql(wh.schema)}.sync_runs
      where company_key = 'acme' and stream = 'housekeeping' order by id desc limit 1`;
    expect(record).toMatchObject({
      outcome: 'ok',
      details: { pruned: { runs: 2, resolvedRejects: 1, pushPayloads: 2, events: 1, audit: 2 } },
    });
    // The audit is kept 400 days: the company's own rows and those of no company; another company's wait for its run.
    const audit = await wh.sql<{ company_key: string | null; target: string; actor: string }[]>`
      select company_key, target, actor from ${wh.sql(wh.schema)}.audit order by id`;
    expect(audit.map((a) => [a.company_key, a.target])).toEqual([
      ['acme', 'recent'],
      ['beta', 'old'],
      ['acme', 'runs 2, resolvedRejects 1, pushPayloads 2, events 1, audit 2'],
    ]);
    expect(audit.at(-1)!.actor).toBe('system');
  });

  it('finds nothing more to prune when run again', async () => {
    await housekeep('acme', { runsDays: 30, resolvedRejectsDays: 30, pushPayloadsDays: 30, auditDays: 400 });
    const [record] = await wh.sql<{ details: { pruned: Record<string, number> } }[]>`
      select details from ${wh.sql(wh.schema)}.sync_runs where company_key = 'acme' and stream = 'housekeeping' order by id desc limit 1`;
    expect(record!.details.pruned).toEqual({
      runs: 0,
      resolvedRejects: 0,
      pushPayloads: 0,
      events: 0,
      formerErased: 0,
      audit: 0,
    });
    // A run that changed nothing is not a change: no audit row.
    const [n] = await wh.sql<{ n: number }[]>`
      select count(*)::int as n from ${wh.sql(wh.schema)}.audit where actor = 'system'`;
    expect(n!.n).toBe(1);
  });
});

describe('pruning in batches', () => {
  it('goes on batch after batch until nothing past the horizon is left', async () => {
    for (let i = 0; i < 7; i++) await insertReject('gamma', `old-${i}`, 40);
    await insertReject('gamma', 'open', null);
    expect(await pruneResolvedRejects(wh, 'gamma', 30, 3)).toBe(7);
    expect(await ids('sync_rejects', 'gamma', 'record_key')).toEqual(['open']);
  });
});
