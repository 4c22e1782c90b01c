import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { SandboxData } from '../../src/sandbox/service.ts';
import { endpoints, streamByName, targets } from '../../src/resources/index.ts';
import { runStream } from '../../src/sync/engine.ts';
import { RESUME_OVERLAP } from '../../src/sync/read.ts';
import { runStreams } from '../../src/sync/runner.ts';
import { readCheckpoint, saveCheckpoint } from '../../src/warehouse/state.ts';
import { readRows } from '../support/rows.ts';
import { ChangeCursor, SinceCursor, WindowCursor, type ReadPoint } from '../../src/sync/cursors.ts';
import { AUTH_HEADER, PAGE_LIMIT_MAX } from '../../src/source/endpoints.ts';
import { divergence } from '../support/convergence.ts';
import { startProxy, type RunningProxy } from '../support/proxy.ts';
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
});

describe('a slice interrupted part way', () => {
  const assignments = streamByName('shift-assignments')!;
  const path = endpoints.shiftAssignments.path;
  const DAY = 86_400_000;
  /** Assignments left out of the sandbox's answers while set: records deleted since the first run read them. */
  let drop: ((item: Record<string, unknown>) => boolean) | undefined;
  let small: RunningSandbox;
  let proxy: RunningProxy;
  const opened: TestSync[] = [];

  /** Deleted records leave the list before it is paged, so every record after them moves up, as in the service. */
  function droppable(data: SandboxData): SandboxData {
    return {
      ...data,
      read(endpoint, query, page) {
        if (!drop || endpoint !== 'shiftAssignments') return data.read(endpoint, query, page);
        const r = data.read(endpoint, query, { offset: 0, limit: Number.MAX_SAFE_INTEGER });
        if (!r.ok) return r;
        const left = r.value.items.filter((it) => !drop!(it as Record<string, unknown>));
        return {
          ok: true,
          value: {
            ...r.value,
            items: left.slice(page.offset, page.offset + page.limit),
            hasMore: page.offset + page.limit < left.length,
          },
        };
      },
    };
  }

  beforeAll(async () => {
    // 'small' holds about 1,100 assignments a week: every 7-day slice of the backfill is several pages.
    small = await startSandbox({
      port: 0,
      seed: 5,
      size: 'small',
      rateLimit: null,
      data: droppable(createSandboxData({ seed: 5, size: 'small' })),
    });
    proxy = await startProxy(small.url);
  });

  afterAll(async () => {
    for (const s of opened) await s.close();
    await proxy?.close();
    await small?.close();
  });

  const sliceOf = (start: unknown) => new Date(start instanceof Date ? start : String(start)).toISOString();

  const opening = async () => {
    const s = await openTestSync(small, { baseUrl: proxy.url });
    opened.push(s);
    return s;
  };

  /** A backfill stopped once `pages` pages are written: the offsets of the pages written, by slice, and the pass stored. */
  const interrupted = async (pages: number) => stopped(await opening(), pages);

  /** A run of `s` stopped once `pages` pages are written, or once `until` holds of the pages written. */
  async function stopped(s: TestSync, until: number | ((written: ReadonlyMap<string, number[]>) => boolean)) {
    const written = new Map<string, number[]>();
    const original = s.client.pages.bind(s.client);
    s.client.pages = ((e, q, o) => {
      const start = (q as Record<string, unknown>).StartDate;
      const read = original(e, q, o);
      return (async function* () {
        for await (const page of read) {
          yield page;
          // The reader asks for the next page only once this one is written.
          const id = sliceOf(start);
          written.set(id, [...(written.get(id) ?? []), page.offset]);
        }
      })();
    }) as typeof s.client.pages;
    const controller = new AbortController();
    let n = 0;
    const enough = typeof until === 'number' ? () => ++n === until : () => until(written);
    const ctx = { ...s.ctx, signal: controller.signal, onProgress: () => void (enough() && controller.abort()) };
    await expect(runStream(ctx, assignments)).rejects.toThrow();
    s.client.pages = original;
    const pass = ChangeCursor.parse(await readCheckpoint(s.warehouse, 'acme', assignments.name)).pass!;
    return { s, written, pass };
  }

  /** The assignment pages the sandbox was asked for from request `from` of the proxy on: slice and offset. */
  const asked = (from: number) =>
    proxy.seen
      .slice(from)
      .filter((r) => r.url.pathname === path && r.outcome === 'forwarded')
      .map((r) => ({
        slice: sliceOf(r.url.searchParams.get('StartDate')),
        offset: Number(r.url.searchParams.get('Offset') ?? 0),
      }));

  /** A stored position of a slice read in part, as this version writes it. */
  const pointOf = (p: ReadPoint | undefined): Extract<ReadPoint, { lastKey: string }> => {
    if (!p || !('lastKey' in p)) throw new Error(`expected a read point with a key, got ${JSON.stringify(p)}`);
    return p;
  };

  /** The shift assignments of a slice's list from `offset`, as the service lists them (the first run's query). */
  async function listed(sliceId: string, offset: number, limit: number): Promise<number[]> {
    const first = proxy.seen.find(
      (r) => r.url.pathname === path && sliceOf(r.url.searchParams.get('StartDate')) === sliceId,
    )!;
    const url = new URL(first.url.pathname + first.url.search, small.url);
    url.searchParams.set('Offset', String(offset));
    url.searchParams.set('Limit', String(limit));
    const res = await fetch(url, { headers: { [AUTH_HEADER]: small.apiKey } });
    return ((await res.json()) as { Data: { ShiftAssignmentId: number }[] }).Data.map((a) => a.ShiftAssignmentId);
  }

  it('resumes each slice a few records before the end of its last written page, reading no written page again, and converges', async () => {
    const { s, written, pass } = await interrupted(14);
    const at = pass.at ?? {};
    expect(Object.keys(at).length).toBeGreaterThan(0);
    // The position stored is after the last page written of the slice, never after a page not written.
    for (const [id, p] of Object.entries(at)) {
      const point = pointOf(p);
      expect(point.offset).toBe(Math.max(...written.get(id)!));
      expect(point.next).toBe(point.offset + PAGE_LIMIT_MAX);
      const [last] = await listed(id, point.next - 1, 1);
      expect(point.lastKey).toBe(JSON.stringify([String(last)]));
    }

    const mark = proxy.seen.length;
    await runStream(s.ctx, assignments);
    const second = asked(mark);
    expect(second.filter((r) => written.get(r.slice)?.includes(r.offset))).toEqual([]);
    for (const [id, p] of Object.entries(at)) {
      expect(Math.min(...second.filter((r) => r.slice === id).map((r) => r.offset))).toBe(
        pointOf(p).next - RESUME_OVERLAP,
      );
    }
    expect(second.some((r) => pass.done.includes(r.slice))).toBe(false);

    // The sandbox holds assignments from before the backfill's span too: the span is what a backfill promises.
    const span = { startColumn: 'start_date_time', from: new Date(pass.from), to: new Date(pass.to) };
    const d = (await divergence(s.warehouse, small.data, 'acme', { [assignments.name]: span }))[assignments.name]!;
    expect({ missing: d.missing.length, extra: d.extra.length, stale: d.stale.length }).toEqual({
      missing: 0,
      extra: 0,
      stale: 0,
    });
    expect(d.expected).toBeGreaterThan(1000);
    const finished = ChangeCursor.parse(await readCheckpoint(s.warehouse, 'acme', assignments.name));
    expect(finished.pass).toBeUndefined();
  });

  it('goes on from its last written page when more records than the overlap were deleted before it, skipping none', async () => {
    const { s, pass } = await interrupted(14);
    const [id, p] = Object.entries(pass.at ?? {})[0]!;
    const point = pointOf(p);
    // Records the first run wrote, deleted before the resumed read: every later record moves that many places up.
    const deleted = new Set(await listed(id, 0, RESUME_OVERLAP + 5));
    drop = (item) => deleted.has(item.ShiftAssignmentId as number);
    const mark = proxy.seen.length;
    try {
      expect((await runStreams(s.ctx, [assignments])).failed).toBe(0);
    } finally {
      drop = undefined;
    }
    const offsets = asked(mark)
      .filter((r) => r.slice === id)
      .map((r) => r.offset);
    // The record it wrote last was not among the first ones returned: the read began again at its last page.
    expect(offsets[0]).toBe(point.next - RESUME_OVERLAP);
    expect(offsets).toContain(point.offset);
    const span = { startColumn: 'start_date_time', from: new Date(pass.from), to: new Date(pass.to) };
    const d = (await divergence(s.warehouse, small.data, 'acme', { [assignments.name]: span }))[assignments.name]!;
    expect({ missing: d.missing.length, extra: d.extra.length, stale: d.stale.length }).toEqual({
      missing: 0,
      extra: 0,
      stale: 0,
    });
  });

  it('goes on from the last written page a cursor of version 2 (release 0.1.0) names by its offset alone', async () => {
    const { s, pass } = await interrupted(14);
    const offsets = Object.fromEntries(Object.entries(pass.at ?? {}).map(([id, p]) => [id, pointOf(p).offset]));
    const cursor = ChangeCursor.parse(await readCheckpoint(s.warehouse, 'acme', assignments.name));
    await saveCheckpoint(s.warehouse, 'acme', assignments.name, '-', {
      ...cursor,
      version: 2,
      pass: { ...pass, at: offsets },
    });
    const mark = proxy.seen.length;
    await runStream(s.ctx, assignments);
    const second = asked(mark);
    for (const [id, offset] of Object.entries(offsets))
      expect(Math.min(...second.filter((r) => r.slice === id).map((r) => r.offset))).toBe(offset);
  });

  it('starts a slice of a re-read over, so what is gone from it is marked gone', async () => {
    const s = await opening();
    await runStream(s.ctx, assignments);
    // Every periodic re-read falls due.
    const after = ChangeCursor.parse(await readCheckpoint(s.warehouse, 'acme', assignments.name));
    await saveCheckpoint(s.warehouse, 'acme', assignments.name, '-', { ...after, rereads: {} });
    const { written, pass } = await stopped(s, (w) => [...w.values()].some((offsets) => offsets.length >= 2));
    expect(pass.name).not.toBe('backfill');
    expect(pass.at).toBeUndefined();
    const id = [...written.keys()].find((k) => !pass.done.includes(k) && written.get(k)!.some((o) => o > 0))!;
    expect(id).toBeDefined();
    const start = Date.parse(id);
    const victim = (await readRows(s.warehouse, targets['shift-assignments'], 'acme')).find((r) => {
      const t = new Date(r.start_date_time as string | Date).getTime();
      return r._deleted_at === null && t >= start && t < start + 7 * DAY;
    })!;
    drop = (item) => item.ShiftAssignmentId === victim.shift_assignment_id;
    const mark = proxy.seen.length;
    try {
      expect((await runStreams(s.ctx, [assignments])).failed).toBe(0);
    } finally {
      drop = undefined;
    }
    expect(
      asked(mark)
        .filter((r) => r.slice === id)
        .map((r) => r.offset),
    ).toContain(0);
    const gone = (await readRows(s.warehouse, targets['shift-assignments'], 'acme')).find(
      (r) => r.shift_assignment_id === victim.shift_assignment_id,
    );
    expect(gone?._deleted_at).not.toBeNull();
  });

  it('a first read of credentials cut short goes on from its last written page, and converges', async () => {
    const credentials = streamByName('individual-certifications')!;
    const s = await opening();
    await runStream(s.ctx, streamByName('individuals')!);
    const controller = new AbortController();
    let n = 0;
    const ctx = { ...s.ctx, signal: controller.signal, onProgress: () => void (++n === 5 && controller.abort()) };
    await expect(runStream(ctx, credentials)).rejects.toThrow();
    const cut = SinceCursor.parse(await readCheckpoint(s.warehouse, 'acme', credentials.name));
    const point = pointOf(cut.firstReadAt);
    expect(point.offset).toBeGreaterThan(0);

    const mark = proxy.seen.length;
    const r = await runStreams(s.ctx, [credentials]);
    expect(r.failed).toBe(0);
    const offsets = proxy.seen
      .slice(mark)
      .filter((q) => q.url.pathname === endpoints.individualCertifications.path && q.outcome === 'forwarded')
      .map((q) => Number(q.url.searchParams.get('Offset') ?? 0));
    // No written page is read again: the read goes on a few records before the end of the last one.
    expect(Math.min(...offsets)).toBe(point.next - RESUME_OVERLAP);
    expect(new Set(offsets).size).toBe(offsets.length);
    const [run] = await s.warehouse.sql<{ details: { inferenceSkipped?: string[] } }[]>`
      select details from ${s.warehouse.sql(s.warehouse.schema)}.sync_runs
      where company_key = 'acme' and stream = ${credentials.name} order by id desc limit 1`;
    expect(run!.details.inferenceSkipped).toEqual([
      `complete read: resumed at offset ${point.next - RESUME_OVERLAP}; nothing marked gone`,
    ]);
    const done = SinceCursor.parse(await readCheckpoint(s.warehouse, 'acme', credentials.name));
    expect({ since: done.since, firstReadAt: done.firstReadAt }).toEqual({ since: cut.since, firstReadAt: undefined });
    const d = (await divergence(s.warehouse, small.data, 'acme'))[credentials.name]!;
    expect({ missing: d.missing.length, extra: d.extra.length, stale: d.stale.length }).toEqual({
      missing: 0,
      extra: 0,
      stale: 0,
    });
  });

  it('marks nothing gone from a slice resumed part way, and its run says so', async () => {
    const { s, pass } = await interrupted(14);
    const [id, p] = Object.entries(pass.at ?? {}).find(([, point]) => pointOf(point).offset > 0) ?? [];
    expect(id).toBeDefined();
    const start = Date.parse(id!);
    const rows = await readRows(s.warehouse, targets['shift-assignments'], 'acme');
    const victim = rows.find((r) => {
      const t = new Date(r.start_date_time as string | Date).getTime();
      return t >= start && t < start + 7 * DAY;
    })!;
    expect(victim).toBeDefined();
    drop = (item) => item.ShiftAssignmentId === victim.shift_assignment_id;
    try {
      const r = await runStreams(s.ctx, [assignments]);
      expect(r.failed).toBe(0);
    } finally {
      drop = undefined;
    }
    const after = (await readRows(s.warehouse, targets['shift-assignments'], 'acme')).find(
      (r) => r.shift_assignment_id === victim.shift_assignment_id,
    );
    expect(after?._deleted_at).toBeNull();
    const [run] = await s.warehouse.sql<{ details: { inferenceSkipped?: string[] } }[]>`
      select details from ${s.warehouse.sql(s.warehouse.schema)}.sync_runs
      where company_key = 'acme' and stream = ${assignments.name} order by id desc limit 1`;
    expect(run!.details.inferenceSkipped).toContainEqual(
      expect.stringMatching(
        new RegExp(`^window ${id}.*resumed at offset ${pointOf(p).next - RESUME_OVERLAP}; nothing marked gone$`),
      ),
    );
  });
});
