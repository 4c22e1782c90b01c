import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { SandboxData } from '../../src/sandbox/service.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { readRows } from '../support/rows.ts';
import { targets } from '../../src/resources/index.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * A record that arrives but breaks its schema is a reject, never a deletion: its key is taken from the raw
 * payload; a reject whose key cannot be read turns deletion inference off for that read, and sync_runs says so.
 */

type Corrupt = (endpoint: string, item: Record<string, unknown>) => Record<string, unknown>;

let corrupt: Corrupt | undefined;
/** Items left out of answers while set: a record that moved between pages, or one that is gone. */
let drop: ((endpoint: string, item: Record<string, unknown>, query: Record<string, unknown>) => boolean) | undefined;
/** Course ranges asked for, in days between startDate and endDate; ranges longer than `emptyOver` answer an empty list. */
const courseRanges: number[] = [];
let emptyOver: number | undefined;
let sandbox: RunningSandbox;
let sync: TestSync;

/** The sandbox's data with the items of its answers passed through `corrupt` while one is set. */
function corruptible(data: SandboxData): SandboxData {
  return {
    ...data,
    read(endpoint, query, page) {
      if (endpoint === 'individualCourses' && query.startDate instanceof Date && query.endDate instanceof Date) {
        const days = (query.endDate.getTime() - query.startDate.getTime()) / 86_400_000;
        courseRanges.push(days);
        if (emptyOver !== undefined && days > emptyOver) return { ok: true, value: { items: [], hasMore: false } };
      }
      const r = data.read(endpoint, query, page);
      if (!r.ok || (!corrupt && !drop)) return r;
      const items = r.value.items
        .filter((it) => !drop?.(endpoint, it as Record<string, unknown>, query as Record<string, unknown>))
        .map((it) => (corrupt ? corrupt(endpoint, { ...(it as Record<string, unknown>) }) : it));
      return { ok: true, value: { ...r.value, items } };
    },
  };
}

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 9,
    size: 'tiny',
    rateLimit: null,
    data: corruptible(createSandboxData({ seed: 9, size: 'tiny' })),
  });
  sync = await openTestSync(sandbox);
  const first = await runStreams(
    sync.ctx,
    selectStreams(['individuals', 'time-off-requests', 'individual-courses', 'pending-certifications']),
  );
  expect(first.failed).toBe(0);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

const live = async (target: keyof typeof targets) =>
  (await readRows(sync.warehouse, targets[target], 'acme')).filter((r) => r._deleted_at === null);

async function lastRun(stream: string) {
  const [run] = await sync.warehouse.sql<{ rejects: number; deleted: number; details: Record<string, unknown> }[]>`
    select rejects, (details->>'deleted')::int as deleted, details from ${sync.warehouse.sql(sync.warehouse.schema)}.sync_runs
    where company_key = 'acme' and stream = ${stream} order by id desc limit 1`;
  return run!;
}

describe('a refused record is not a deletion', () => {
  it('an individual whose DateOfBirth breaks the schema keeps its row, children and history', async () => {
    const before = await live('individuals');
    const victim = before[3]!.service_id as number;
    corrupt = (endpoint, item) =>
      endpoint === 'individuals' && item.ServiceId === victim ? { ...item, DateOfBirth: '01/02/1980' } : item;
    const r = await runStreams(sync.ctx, selectStreams(['individuals']));
    corrupt = undefined;
    expect(r.rejects).toBe(1);
    expect(await lastRun('individuals')).toMatchObject({ rejects: 1, deleted: 0 });
    expect((await live('individuals')).map((x) => x.service_id)).toEqual(before.map((x) => x.service_id));
    const history = await readRows(sync.warehouse, 'individuals_history', 'acme');
    expect(history.filter((h) => h.service_id === victim && h.valid_to === null)).toHaveLength(1);
  });

  it('a refused record without a readable key turns deletion inference off, and sync_runs says why', async () => {
    const before = await live('individuals');
    const victim = before[5]!.service_id as number;
    corrupt = (endpoint, item) =>
      endpoint === 'individuals' && item.ServiceId === victim ? { ...item, ServiceId: null } : item;
    await runStreams(sync.ctx, selectStreams(['individuals']));
    corrupt = undefined;
    const run = await lastRun('individuals');
    expect(run.deleted).toBe(0);
    expect(run.details.inferenceSkipped).toEqual([expect.stringContaining('without a readable key')]);
    expect((await live('individuals')).map((x) => x.service_id)).toEqual(before.map((x) => x.service_id));
  });

  it('a windowed read keeps a refused time off request (keyed by its identifying fields)', async () => {
    const before = await live('time-off-requests');
    expect(before.length).toBeGreaterThan(0);
    // A full refresh reads every window completely, with deletion inference.
    corrupt = (endpoint, item) => (endpoint === 'timeOffRequests' ? { ...item, RequestedHours: 'many' } : item);
    const r = await runStreams(sync.ctx, selectStreams(['time-off-requests']), { fullRefresh: true });
    corrupt = undefined;
    expect(r.rejects).toBe(before.length);
    expect(await lastRun('time-off-requests')).toMatchObject({ deleted: 0 });
    expect((await live('time-off-requests')).length).toBe(before.length);
  });
});

describe('the 31-day course rule', () => {
  it('every slice spans at most 31 days counted either way: startDate and endDate at most 30 days apart', () => {
    expect(courseRanges.length).toBeGreaterThan(10);
    expect(Math.max(...courseRanges)).toBe(30);
  });

  it('a range answered with an empty list while the warehouse holds its courses is read in halves, and said', async () => {
    const before = await live('individual-courses');
    expect(before.length).toBeGreaterThan(0);
    emptyOver = 20;
    const r = await runStreams(sync.ctx, selectStreams(['individual-courses']), { fullRefresh: true });
    emptyOver = undefined;
    expect(r.failed).toBe(0);
    expect(r.streams[0]!.silentRefusals).toBeGreaterThan(0);
    expect((await live('individual-courses')).length).toBe(before.length);
  });
});

describe('snapshots', () => {
  it('a record one read misses (it moved while pages were read) stays; one two reads in a row miss is gone', async () => {
    const before = await live('pending-certifications');
    expect(before.length).toBeGreaterThan(1);
    const [moved, gone] = [before[0]!.individual_certification_id, before[1]!.individual_certification_id];
    drop = (endpoint, item) =>
      endpoint === 'pendingCertifications' &&
      (item.IndividualCertificationId === moved || item.IndividualCertificationId === gone);
    await runStreams(sync.ctx, selectStreams(['pending-certifications']));
    expect((await live('pending-certifications')).length).toBe(before.length);
    drop = (endpoint, item) => endpoint === 'pendingCertifications' && item.IndividualCertificationId === gone;
    await runStreams(sync.ctx, selectStreams(['pending-certifications']));
    drop = undefined;
    const after = (await live('pending-certifications')).map((r) => r.individual_certification_id);
    expect(after).toContain(moved);
    expect(after).not.toContain(gone);
    expect(after.length).toBe(before.length - 1);
  });
});

describe('time off decisions', () => {
  it('a Pending request the open list skipped stays; one no read returns any more is gone', async () => {
    const pending = (await live('time-off-requests')).filter((r) => r.status === 'Pending');
    expect(pending.length).toBeGreaterThan(1);
    const [skipped, gone] = [pending[0]!, pending[1]!];
    const is = (row: Record<string, unknown>, item: Record<string, unknown>) =>
      (item.Employee as Record<string, unknown> | null)?.ServiceId === row.employee_service_id &&
      new Date(item.StartDateTime as string).getTime() === new Date(row.start_date_time as Date).getTime() &&
      item.RequestedDateTime !== undefined &&
      new Date(item.RequestedDateTime as string).getTime() === new Date(row.requested_date_time as Date).getTime();
    // The open list over the whole span (800 days back to 400 ahead) misses `skipped`, as offset paging over a list
    // that moved can; `gone` is gone from every read.
    const wholeOpenList = (q: Record<string, unknown>) =>
      String(q.RequestStatus) === 'Pending' &&
      (q.EndDateTime as Date).getTime() - (q.StartDateTime as Date).getTime() > 1000 * 86_400_000;
    drop = (endpoint, item, q) =>
      endpoint === 'timeOffRequests' && (is(gone, item) || (is(skipped, item) && wholeOpenList(q)));
    const r = await runStreams(sync.ctx, selectStreams(['time-off-requests']));
    drop = undefined;
    expect(r.failed).toBe(0);
    expect(r.streams[0]!.rereads).toEqual([]);
    const after = await live('time-off-requests');
    expect(after.map((x) => x._key)).toContain(skipped._key);
    expect(after.map((x) => x._key)).not.toContain(gone._key);
    expect(await lastRun('time-off-requests')).toMatchObject({ deleted: 1 });
  });
});
