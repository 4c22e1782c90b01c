import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Observers } from '../../src/observers.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import {
  abandonEnd,
  closeOwnOpenRuns,
  finishRun,
  markInterruptedRuns,
  openRun,
  runEndsRecorded,
  runOpening,
  STALE_AFTER_MS,
} from '../../src/warehouse/runs.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

let sandbox: RunningSandbox;
let sync: TestSync;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 5, size: 'tiny', rateLimit: null });
  sync = await openTestSync(sandbox);
});
afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

const runs = (where = sync.warehouse.sql`true`) =>
  sync.warehouse.sql<
    { id: string; stream: string; outcome: string | null; requests: number; details: Record<string, unknown> }[]
  >`
    select id, stream, outcome, requests, details from ${sync.warehouse.sql(sync.warehouse.schema)}.sync_runs where ${where} order by id`;

/** The pid of a process that has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('runs a stopping process left open', () => {
  it('are recorded interrupted at the end of its stop; those another warehouse client opened are left alone', async () => {
    const wh = sync.warehouse;
    const t = wh.sql`${wh.sql(wh.schema)}.sync_runs`;
    // Its end could not be recorded, as when a warehouse restart cut off the answer to the run's insert or end.
    const lost = String(await openRun(wh, { companyKey: 'y', stream: 'x' }));
    abandonEnd(wh, Number(lost));
    const [other] = await wh.sql<{ id: string }[]>`
      insert into ${t} (company_key, stream, details) values ('y', 'x', ${wh.sql.json({ opener: 'another client' })})
      returning id`;
    await runEndsRecorded(wh);
    expect(await closeOwnOpenRuns(wh)).toBe(1);
    const byId = new Map((await runs(wh.sql`company_key = 'y'`)).map((r) => [r.id, r.outcome]));
    expect(byId.get(lost)).toBe('interrupted');
    expect(byId.get(other!.id)).toBeNull();
  });
});

describe('stream runs left open by a process that ended', () => {
  it('are recorded interrupted: a dead pid on this host, no heartbeat elsewhere; live ones are left alone', async () => {
    const wh = sync.warehouse;
    const t = wh.sql`${wh.sql(wh.schema)}.sync_runs`;
    const insert = async (owner: { host: string; pid: number; since: number }, heartbeatAgoMs: number) => {
      const details = { owner, heartbeat: new Date(Date.now() - heartbeatAgoMs).toISOString() };
      const [r] =
        await wh.sql`insert into ${t} (company_key, stream, details) values ('z', 'x', ${wh.sql.json(details)}) returning id`;
      return String(r!.id);
    };
    const deadHere = await insert({ host: hostname(), pid: deadPid(), since: 1 }, 0);
    const staleElsewhere = await insert({ host: 'elsewhere', pid: 1, since: 1 }, STALE_AFTER_MS + 5000);
    const freshElsewhere = await insert({ host: 'elsewhere', pid: 1, since: 1 }, 0);
    const mine = String(await openRun(wh, { companyKey: 'z', stream: 'x' }));
    expect(await markInterruptedRuns(wh)).toBe(2);
    const byId = new Map((await runs(wh.sql`company_key = 'z'`)).map((r) => [r.id, r.outcome]));
    expect(byId.get(deadHere)).toBe('interrupted');
    expect(byId.get(staleElsewhere)).toBe('interrupted');
    expect(byId.get(freshElsewhere)).toBeNull();
    expect(byId.get(mine)).toBeNull();
  });
});

describe('shutdown', () => {
  it('starts no stream once it began', async () => {
    const before = (await runs()).length;
    const summary = await runStreams(
      { ...sync.ctx, signal: AbortSignal.abort() },
      selectStreams(['departments', 'individuals']),
    );
    expect(summary.streams).toEqual([]);
    expect((await runs()).length).toBe(before);
  });

  it('records the streams it stops as interrupted, not failed', async () => {
    const slow = await startSandbox({ port: 0, seed: 5, size: 'tiny', rateLimit: null, latencyMs: 400 });
    const s = await openTestSync(slow);
    try {
      const shutdown = new AbortController();
      setTimeout(() => shutdown.abort(), 600);
      const summary = await runStreams(
        { ...s.ctx, signal: shutdown.signal },
        selectStreams(['individual-certifications']),
      );
      expect(summary.failed).toBe(0);
      expect(summary.interrupted).toBe(1);
      const [run] = await s.warehouse.sql`select outcome from ${s.warehouse.sql(s.warehouse.schema)}.sync_runs`;
      expect(run!.outcome).toBe('interrupted');
    } finally {
      await s.close();
      await slow.close();
    }
  });
});

describe('a stopping process', () => {
  it('closes the warehouse only once a run being opened (its insert waiting for a restart) is opened and its end recorded', async () => {
    // A warehouse of its own: the runs other tests leave open on theirs would hold it too.
    const s = await openTestSync(sandbox);
    try {
      const wh = s.warehouse;
      const opening = runOpening(wh);
      let closable = false;
      const recorded = runEndsRecorded(wh).then(() => (closable = true));
      const id = await openRun(wh, { companyKey: 'z', stream: 'x' });
      opening();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(closable).toBe(false);
      await finishRun(wh, { companyKey: 'z', id }, { outcome: 'interrupted' });
      await recorded;
      expect(closable).toBe(true);
    } finally {
      await s.close();
    }
  });
});

describe('an interrupted sync run again', () => {
  it('reads only the streams it had not finished; the sync after it reads them all', async () => {
    const slow = await startSandbox({ port: 0, seed: 6, size: 'tiny', rateLimit: null, latencyMs: 100 });
    const s = await openTestSync(slow);
    try {
      const selected = selectStreams(['departments', 'assignment-changes']);
      const observers = new Observers();
      const shutdown = new AbortController();
      observers.add({
        stream: (e) => {
          if (e.stream === 'departments') shutdown.abort();
        },
      });
      const first = await runStreams({ ...s.ctx, observers, signal: shutdown.signal }, selected);
      expect(first.streams.map((o) => [o.stream, o.outcome])).toEqual([
        ['departments', 'ok'],
        ['assignment-changes', 'interrupted'],
      ]);
      const resumed = await runStreams(s.ctx, selected);
      expect(resumed.streams.map((o) => [o.stream, o.outcome])).toEqual([['assignment-changes', 'ok']]);
      const next = await runStreams(s.ctx, selected);
      expect(next.streams.map((o) => [o.stream, o.outcome])).toEqual([
        ['departments', 'ok'],
        ['assignment-changes', 'ok'],
      ]);
    } finally {
      await s.close();
      await slow.close();
    }
  });
});

describe('requests of a run', () => {
  it('count every attempt the stream sent, retries included, by outcome', async () => {
    const faulty = await startSandbox({ port: 0, seed: 5, size: 'tiny', rateLimit: null, faults: { error500: 0.5 } });
    const observers = new Observers();
    const s = await openTestSync(faulty, { client: { observers, backoff: { baseMs: 1, capMs: 5 }, maxRetries: 10 } });
    try {
      const summary = await runStreams(
        { ...s.ctx, observers },
        selectStreams(['individual-certifications', 'individuals', 'time-off-requests']),
      );
      expect(summary.failed).toBe(0);
      const served = faulty.stats().requests;
      const [row] = await s.warehouse.sql<{ requests: number; by: Record<string, Record<string, number>> }[]>`
        select sum(requests)::int as requests, jsonb_object_agg(stream, details->'requestsByOutcome') as by
        from ${s.warehouse.sql(s.warehouse.schema)}.sync_runs`;
      // The clock refresh at the start of the run is the one request no stream sent.
      expect(row!.requests).toBeGreaterThanOrEqual(served - 1);
      expect(row!.requests).toBeLessThanOrEqual(served);
      expect(summary.requests).toBe(row!.requests);
      const errors = Object.values(row!.by).reduce((n, b) => n + (b.server_error ?? 0), 0);
      expect(errors).toBeGreaterThan(0);
    } finally {
      await s.close();
      await faulty.close();
    }
  });
});
