/** Reading one list page by page, each page written with the checkpoint it completes. */
import { writePage } from '../warehouse/upsert.ts';
import { mapPage, type MappedPage } from '../warehouse/page-map.ts';
import type { ReadPoint } from './cursors.ts';
import type { PageAt, ReadProgress } from './stream-cursor.ts';
import type { Lane } from '../ratelimit/types.ts';
import type { StreamRun } from './context.ts';
import { type Seen, notePage } from './seen.ts';
import { watchFields } from './schema-watch.ts';

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

interface ReadOptions {
  seen?: Seen;
  /** What the read's pages store of its progress (stream-cursor.ts); none for a read that keeps none. */
  progress?: ReadProgress;
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
export async function readAll(
  run: StreamRun,
  query: Record<string, unknown>,
  lane: Lane,
  o: ReadOptions = {},
): Promise<number> {
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
    const mapped = mapPage(
      stream.target,
      page.items as object[],
      { companyKey: ctx.companyKey, extras: page.extras },
      page.rejects,
    );
    if (lookFor !== undefined) {
      const found = mapped.keys.includes(lookFor);
      lookFor = undefined;
      if (!found) {
        const offset = point!.offset;
        ctx.log.info(
          { stream: stream.name, partition: partition.key, offset },
          'resumed read did not find its last written record; going on from its last written page',
        );
        // Leaving the loop cancels the pages asked for ahead.
        return readAll(run, query, lane, { ...o, resume: { offset } });
      }
    }
    const progress = !page.hasMore || (resumable && o.progress?.everyPage) ? o.progress : undefined;
    const at: PageAt = {
      offset: page.offset,
      last: !page.hasMore,
      ...(progress && page.hasMore ? { point: pointAfter(page, mapped) } : {}),
    };
    // Before the write, which holds or scrubs the fields no column maps in the rows it is given.
    await fields.page(mapped);
    const result = await writePage(ctx.warehouse, {
      target: stream.target,
      stream: stream.name,
      companyKey: ctx.companyKey,
      page: mapped,
      remap: () =>
        mapPage(
          stream.target,
          page.items as object[],
          { companyKey: ctx.companyKey, extras: page.extras },
          page.rejects,
        ),
      syncedAt: run.syncedAt,
      runId: run.opts.runId,
      checkpoint: progress && { partition: partition.key, ...progress.observe(at) },
    });
    if (o.seen) notePage(o.seen, mapped);
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

/** Where a read goes on after `page`: past its records (refused ones too), looking for its last record. */
function pointAfter(
  page: { offset: number; items: readonly unknown[]; rejects: readonly unknown[] },
  mapped: MappedPage,
): ReadPoint {
  const next = page.offset + page.items.length + page.rejects.length;
  const lastKey = mapped.keys.at(-1);
  // A page of refused records alone names no record to look for: the read goes on from that page.
  return lastKey === undefined ? { offset: page.offset } : { offset: page.offset, next, lastKey };
}
