/** A list whose open records are followed by status until each is decided. */
import { PAGE_LIMIT_MAX } from '../../source/endpoints.ts';
import { liveRows, markDeletedByKey } from '../../warehouse/deletions.ts';
import { startsBetween } from '../../warehouse/signals.ts';
import { keyText } from '../../warehouse/record-keys.ts';
import { CURSOR_VERSION, type StatusCursor } from '../cursors.ts';
import { addDays, addMs, countIn, forEachLimited, mergeByCost, DAY_MS, type Window } from '../windows.ts';
import type { StatusDriven } from '../../resources/stream.ts';
import { windowsAtOnce, type StreamRun } from '../context.ts';
import { readAll } from '../read.ts';
import { type Seen, newSeen } from '../seen.ts';
import { rereadsAfter, rereadSpan } from '../rereads.ts';
import { type WindowSpec, readWindow, readOwedPass } from '../window-reads.ts';

export async function runStatusDriven(
  run: StreamRun,
  s: StatusDriven,
  previous: StatusCursor | undefined,
): Promise<StatusCursor> {
  const { ctx } = run;
  const signpost = ctx.now();
  const horizon = addDays(signpost, s.forwardDays);
  const from = previous?.from ? new Date(previous.from) : addDays(signpost, -s.backfillDays);
  const spec: WindowSpec = { start: s.start, end: s.end, deleteMissing: s.deleteMissing };
  // Requests are filtered by start and by end, so a slice would lose requests that straddle it: one slice.
  const whole = 100_000 * DAY_MS;
  const base = { version: CURSOR_VERSION, from: from.toISOString(), rereads: previous?.rereads ?? {} };
  const owed = await readOwedPass(run, {
    stored: previous?.pass,
    backfilled: Boolean(previous?.from),
    backfillFrom: from,
    horizon,
    rereads: s.rereads,
    lastRereads: previous?.rereads,
    signpost,
    sliceMs: whole,
    spec,
    cursorWith: (x) => ({ ...base, pass: x }) satisfies StatusCursor,
  });
  // A re-read just read its span whole: only open records outside it that the open list misses are looked for.
  const covered = owed.reread ? rereadSpan(owed.reread, signpost, from, horizon) : undefined;
  if (previous?.from && !owed.backfillOrResumed)
    await readDecisions(run, s, { start: from, end: horizon }, covered && { start: covered.from, end: covered.to });
  const cursor: StatusCursor = { ...base, rereads: rereadsAfter(s.rereads, previous?.rereads, owed.done, signpost) };
  return cursor;
}

/**
 * The open records (Pending) are read with the status filter; those the warehouse holds as open that it no
 * longer returns were decided (or deleted). They are read with the decided statuses over their own periods,
 * merged into the fewest paged reads the records between them allow; one that no read returns is gone.
 */
async function readDecisions(run: StreamRun, s: StatusDriven, span: Window, covered?: Window): Promise<void> {
  const { ctx, stream } = run;
  const target = stream.target;
  const endColumn = s.deleteMissing.endColumn ?? s.deleteMissing.startColumn;
  const seen = newSeen();
  await readAll(run, { [s.start]: span.start, [s.end]: span.end, [s.statusParam]: [s.open] }, 'incremental', { seen });
  const held = await liveRows(
    ctx.warehouse,
    { target, companyKey: ctx.companyKey, where: { [s.statusColumn]: s.open } },
    [...target.key, s.deleteMissing.startColumn, endColumn],
  );
  const decided = held
    .filter((r) => !seen.keys.has(keyText(r, target.key)))
    .map((r) => ({
      key: r,
      start: new Date(String(r[s.deleteMissing.startColumn])),
      end: new Date(String(r[endColumn])),
    }))
    .filter((r) => !(covered && r.start >= covered.start && r.end <= covered.end));
  if (decided.length === 0) return;
  // The service's end filter takes requests ending at or before it: a second past the end holds the request.
  const own = decided.map((r) => ({ start: r.start, end: addMs(r.end, 1000) }));
  const starts = await startsBetween(ctx.warehouse, {
    table: target.table,
    column: s.deleteMissing.startColumn,
    companyKey: ctx.companyKey,
    from: new Date(Math.min(...own.map((w) => w.start.getTime()))),
    to: new Date(Math.max(...own.map((w) => w.end.getTime()))),
    whereIn: { column: s.statusColumn, values: s.decided },
  });
  const ownStarts = own.map((w) => w.start.getTime()).sort((a, b) => a - b);
  const windows = mergeByCost(own, (w) => countIn(starts, w) + countIn(ownStarts, w), PAGE_LIMIT_MAX);
  const found = newSeen();
  await forEachLimited(windows, windowsAtOnce(ctx), async (w) => {
    await readWindow(run, w, 'incremental', {
      start: s.start,
      end: s.end,
      deleteMissing: s.deleteMissing,
      query: { [s.statusParam]: s.decided },
      where: { [s.statusColumn]: s.decided },
      collect: found,
    });
  });
  const unseen = decided.filter((r) => !found.keys.has(keyText(r.key, target.key)));
  // Offset paging over an open list that moved can skip a record: one no decided read returned is looked for
  // among the open ones over its own period before it counts as gone.
  const open = unseen.length > 0 ? await readOpen(run, s, unseen) : newSeen();
  const gone = unseen.filter((r) => !open.keys.has(keyText(r.key, target.key)));
  const unkeyed = found.unkeyed + open.unkeyed;
  if (unkeyed > 0) {
    const why = `decisions: ${unkeyed} refused record(s) without a readable key; nothing marked gone`;
    run.counters.inferenceSkipped.push(why);
    ctx.log.warn({ stream: stream.name }, why);
    return;
  }
  run.counters.deleted += await markDeletedByKey(ctx.warehouse, {
    target,
    companyKey: ctx.companyKey,
    keys: gone.map((r) => r.key),
  });
}

/** Reads the open records over the periods of `records`, merged as decisions are; returns the keys it found. */
async function readOpen(
  run: StreamRun,
  s: StatusDriven,
  records: readonly { start: Date; end: Date }[],
): Promise<Seen> {
  const { ctx } = run;
  const own = records.map((r) => ({ start: r.start, end: addMs(r.end, 1000) }));
  const starts = await startsBetween(ctx.warehouse, {
    table: run.stream.target.table,
    column: s.deleteMissing.startColumn,
    companyKey: ctx.companyKey,
    from: new Date(Math.min(...own.map((w) => w.start.getTime()))),
    to: new Date(Math.max(...own.map((w) => w.end.getTime()))),
    whereIn: { column: s.statusColumn, values: [s.open] },
  });
  const found = newSeen();
  await forEachLimited(
    mergeByCost(own, (w) => countIn(starts, w), PAGE_LIMIT_MAX),
    windowsAtOnce(ctx),
    async (w) => {
      await readWindow(run, w, 'incremental', {
        start: s.start,
        end: s.end,
        query: { [s.statusParam]: [s.open] },
        collect: found,
      });
    },
  );
  return found;
}
