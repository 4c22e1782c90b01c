/** Reading one list page by page, each page written with the checkpoint it completes. */
import { readCheckpoint, recordKey, writePage, type CheckpointWrite, type CursorEdit } from '../warehouse/index.ts';
import { readStoredCursor, type ReadPoint } from './cursors.ts';
import type { Lane } from '../ratelimit/types.ts';
import type { StreamRun } from './context.ts';
import { type Seen, noteRejects, noteWritten } from './seen.ts';
import { watchFields } from './schema-watch.ts';

/** Where a page stands in its read: its offset, whether it completes the read, and where the read goes on after it. */
export interface PageAt {
  offset: number;
  last: boolean;
  /** Set on a page with records: the point a read resumed after this page goes on from. */
  point?: ReadPoint;
}

/**
 * Records before the offset after its last written page that a resumed read asks for again. Offset paging shifts
 * when records before that offset are deleted meanwhile; asking from a little before it lets the read find its
 * last written record among the first ones returned, which proves no unread record slid behind the new offset.
 * When it is not there (this many deletions or more, or that record itself gone), the read goes on from the
 * start of its last written page instead, which absorbs up to a page of deletions. A page's worth would cost a
 * request per resumed read; this many cost one in every PAGE_LIMIT_MAX / RESUME_OVERLAP.
 */
export const RESUME_OVERLAP = 20;

/** The offset a read resumed at `point` asks for first; 0 for a read from the start. */
export function resumeFrom(point: ReadPoint | undefined): number {
  if (point === undefined) return 0;
  return 'next' in point ? Math.max(point.offset, point.next - RESUME_OVERLAP) : point.offset;
}

/**
 * What a page stores with it (in its transaction): with the last page and, when `everyPage`, with every page of a
 * list the service pages by offset, which a read can resume from. Either a whole cursor (one read's pages are
 * written in order, so a later one never stores an older cursor), or an edit of the stored cursor, which the pages
 * of slices read side by side make without overwriting each other's.
 */
export type PageCheckpoint = { everyPage: boolean } & ({ cursor: (page: PageAt) => unknown } | { edit: (page: PageAt) => CursorEdit });

interface ReadOptions {
  seen?: Seen;
  checkpoint?: PageCheckpoint;
  /** Where an envelope list read in part stands: the read goes on from there (see RESUME_OVERLAP). */
  resume?: ReadPoint;
  /** Count rows that were stored already (an append stream's overlap). */
  countDuplicates?: boolean;
}

/**
 * Pages of one list in flight at once, at most: while a page is written the next ones are on their way, so a
 * long list is not read at the pace of one round trip and one write per page.
 */
export const READ_AHEAD = 4;

/** Reads every page of one query and writes each page; returns how many records it returned. */
export async function readAll(run: StreamRun, query: Record<string, unknown>, lane: Lane, o: ReadOptions = {}): Promise<number> {
  const { ctx, stream, partition, counters } = run;
  const from = resumeFrom(o.resume);
  const pages = ctx.client.pages(stream.endpoint, { ...stream.fixed, ...partition.query, ...query } as never, {
    lane: stream.lane ?? lane,
    signal: ctx.signal,
    readAhead: ctx.readAhead ?? READ_AHEAD,
    ...(from > 0 ? { startOffset: from } : {}),
  });
  // Only an envelope list can be asked for from an offset: others are read again whole, so their progress is not kept.
  const resumable = stream.endpoint.response.kind === 'envelope';
  const point = o.resume && 'lastKey' in o.resume ? o.resume : undefined;
  let lookFor = point?.lastKey;
  let rows = 0;
  const fields = watchFields(run, o.seen !== undefined && partition.key === '-' && Object.keys(query).length === 0);
  // Pages come in page order and each is written before the next is taken, so a page's checkpoint never names
  // a position with an earlier page unwritten (read-ahead fetches pages early, never writes them early).
  for await (const page of pages) {
    counters.requests++;
    run.tally.requests++;
    if (lookFor !== undefined) {
      const found = page.items.some((item) => keyOf(run, item, page.extras) === lookFor);
      lookFor = undefined;
      if (!found) {
        const offset = point!.offset;
        ctx.log.info({ stream: stream.name, partition: partition.key, offset }, 'resumed read did not find its last written record; going on from its last written page');
        // Leaving the loop cancels the pages asked for ahead.
        return readAll(run, query, lane, { ...o, resume: { offset } });
      }
    }
    if (o.seen) noteRejects(run, o.seen, page.rejects, page.extras);
    const write = (checkpoint?: CheckpointWrite) =>
      writePage(ctx.warehouse, {
        target: stream.target,
        stream: stream.name,
        companyKey: ctx.companyKey,
        items: page.items as object[],
        extras: page.extras,
        rejects: page.rejects,
        syncedAt: run.syncedAt,
        runId: run.opts.runId,
        checkpoint: checkpoint && { partition: partition.key, ...checkpoint },
      });
    const cp = !page.hasMore || (resumable && o.checkpoint?.everyPage) ? o.checkpoint : undefined;
    const at: PageAt = { offset: page.offset, last: !page.hasMore, ...(cp && page.hasMore ? { point: pointAfter(run, page) } : {}) };
    const result = await write(cp && ('edit' in cp ? { edit: cp.edit(at) } : { cursor: cp.cursor(at) }));
    if (o.seen) noteWritten(o.seen, result.keys);
    await fields.page(page.items as object[], page.extras);
    rows += page.items.length;
    counters.rows += page.items.length;
    run.tally.rows += page.items.length;
    run.progress?.page(page.items.length + page.rejects.length);
    counters.rejects += page.rejects.length;
    counters.deleted += result.deleted;
    if (o.countDuplicates) counters.duplicates += result.updated + result.unchanged;
    ctx.observers?.emit('page', {
      company: ctx.companyKey,
      stream: stream.name,
      partition: partition.key,
      rows: page.items.length,
      rejects: page.rejects.length,
      deleted: result.deleted,
    });
    ctx.onProgress?.({ stream: stream.name, partition: partition.key, ...counters });
  }
  await fields.end();
  return rows;
}

/** The key text of a record as its row is written, as the warehouse names it. */
function keyOf(run: StreamRun, item: unknown, extras: Record<string, unknown>): string {
  return recordKey(run.stream.target, run.ctx.companyKey, item as Record<string, unknown>, extras);
}

/** Where a read goes on after `page`: past its records (refused ones too), looking for its last record. */
function pointAfter(run: StreamRun, page: { offset: number; items: readonly unknown[]; rejects: readonly unknown[]; extras: Record<string, unknown> }): ReadPoint {
  const next = page.offset + page.items.length + page.rejects.length;
  const last = page.items.at(-1);
  // A page of refused records alone names no record to look for: the read goes on from that page.
  return last === undefined ? { offset: page.offset } : { offset: page.offset, next, lastKey: keyOf(run, last, page.extras) };
}

/**
 * The cursor a run goes on from (migrated from an earlier version's format). One that cannot be used (not a
 * cursor, or of a newer version) counts as none: this partition reads everything again, which the run's log and
 * record say, rather than failing every run until someone asks for a full refresh.
 */
export async function cursorOf<T>(run: StreamRun, schema: import('zod').ZodType<T>): Promise<T | undefined> {
  if (run.opts.fullRefresh) return undefined;
  const stored = await readCheckpoint(run.ctx.warehouse, run.ctx.companyKey, run.stream.name, run.partition.key);
  const r = readStoredCursor(schema, stored);
  if (r.ok) return r.cursor;
  const where = { stream: run.stream.name, partition: run.partition.key };
  run.ctx.log.warn({ ...where, reason: r.error.reason }, 'the stored cursor cannot be used; this partition reads everything again');
  run.counters.cursorsRestarted.push(`${where.partition}: ${r.error.reason}`);
  return undefined;
}

export const saveCursor = (run: StreamRun, cursor: unknown) => storeCheckpoint(run, { cursor });
export const editCursor = (run: StreamRun, edit: CursorEdit) => storeCheckpoint(run, { edit });

/** A checkpoint with no rows of its own. */
async function storeCheckpoint(run: StreamRun, checkpoint: CheckpointWrite): Promise<void> {
  await writePage(run.ctx.warehouse, {
    target: run.stream.target,
    stream: run.stream.name,
    companyKey: run.ctx.companyKey,
    items: [],
    syncedAt: run.syncedAt,
    checkpoint: { partition: run.partition.key, ...checkpoint },
  });
}
