/** A list read by time windows: backfilled in slices, then a rolling window (or appended after the last one). */
import { CURSOR_VERSION, type WindowCursor } from '../cursors.ts';
import { addDays, addMs, slice, DAY_MS } from '../windows.ts';
import type { Windowed } from '../../resources/stream.ts';
import type { StreamRun } from '../context.ts';
import { rereadsAfter } from '../rereads.ts';
import { type WindowSpec, readWindows, readOwedPass, dayAligned } from '../window-reads.ts';

export async function runWindowed(
  run: StreamRun,
  s: Windowed,
  previous: WindowCursor | undefined,
): Promise<WindowCursor> {
  const { ctx } = run;
  const signpost = ctx.now();
  const align = (d: Date, up = false) => dayAligned(run, s.start, d, up);
  const horizon = align(addDays(signpost, s.forwardDays), true);
  const backfillFrom = previous?.backfilledFrom
    ? new Date(previous.backfilledFrom)
    : align(addDays(signpost, -s.backfillDays));
  const spec: WindowSpec = {
    start: s.start,
    end: s.end,
    tiles: true,
    deleteMissing: s.deleteMissing,
    confirmEmpty: s.confirmEmpty,
  };
  const sliceMs = s.sliceDays * DAY_MS;
  const base = {
    version: CURSOR_VERSION,
    until: previous?.until,
    backfilledFrom: backfillFrom.toISOString(),
    rereads: previous?.rereads ?? {},
  };
  const owed = await readOwedPass(run, {
    stored: previous?.pass,
    backfilled: Boolean(previous?.until),
    backfillFrom,
    horizon,
    rereads: s.mode === 'reread' ? s.rereads : undefined,
    lastRereads: previous?.rereads,
    signpost,
    align,
    sliceMs,
    spec,
    cursorWith: (x) => ({ ...base, pass: x }) satisfies WindowCursor,
  });
  if (previous?.until && !owed.backfillOrResumed) {
    const from =
      s.mode === 'append'
        ? addMs(new Date(previous.until), -(s.overlap?.ms ?? 0))
        : align(addDays(signpost, -(s.rollingDays ?? 0)));
    const rolling = { start: from, end: horizon };
    // A complete re-read just read the rolling window too.
    if (!owed.reread || s.mode === 'append')
      await readWindows(run, slice(rolling, sliceMs), 'incremental', { ...spec, countDuplicates: s.mode === 'append' });
  }
  const cursor: WindowCursor = {
    ...base,
    until: horizon.toISOString(),
    rereads: rereadsAfter(s.rereads, previous?.rereads, owed.done, signpost),
  };
  return cursor;
}
