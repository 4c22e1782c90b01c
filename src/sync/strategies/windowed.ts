/** A list read by time windows: backfilled in slices, then a rolling window (or appended after the last one). */
import { WindowCursor } from '../cursors.ts';
import { addDays, addMs, slice, DAY_MS } from '../windows.ts';
import type { Reread, Windowed } from '../streams.ts';
import type { StreamRun } from '../context.ts';
import { cursorOf, saveCursor } from '../read.ts';
import { rereading, dueReread, rereadsAfter, rereadSpan } from '../rereads.ts';
import { type WindowSpec, readWindows, readPass, newPass, dayAligned, spanOf } from '../window-reads.ts';

export async function runWindowed(run: StreamRun, s: Windowed): Promise<void> {
  const { ctx } = run;
  const signpost = ctx.now();
  const previous = await cursorOf(run, WindowCursor);
  const align = (d: Date, up = false) => dayAligned(run, s.start, d, up);
  const horizon = align(addDays(signpost, s.forwardDays), true);
  const backfillFrom = previous?.backfilledFrom ? new Date(previous.backfilledFrom) : align(addDays(signpost, -s.backfillDays));
  const spec: WindowSpec = { start: s.start, end: s.end, deleteMissing: s.deleteMissing, confirmEmpty: s.confirmEmpty };
  const sliceMs = s.sliceDays * DAY_MS;
  const base = { version: 2 as const, until: previous?.until, backfilledFrom: backfillFrom.toISOString(), rereads: previous?.rereads ?? {} };
  let rereadsDone: Reread | 'all' | undefined;
  const pass = previous?.pass ?? (!previous?.until ? newPass('backfill', backfillFrom, horizon) : undefined);
  const reread = pass ? undefined : s.mode === 'reread' ? dueReread(s.rereads, previous?.rereads, signpost) : undefined;
  if (pass || reread) {
    const p = pass ?? newPass(reread!.name, ...spanOf(rereadSpan(reread!, signpost, backfillFrom, horizon), align));
    const read = () => readPass(run, p, sliceMs, p.name === 'backfill' ? 'backfill' : 'incremental', spec, (x) => ({ ...base, pass: x }) satisfies WindowCursor);
    await (p.name === 'backfill' ? read() : rereading(run, p.name, read));
    rereadsDone = p.name === 'backfill' ? 'all' : (s.rereads ?? []).find((r) => r.name === p.name);
  }
  if (previous?.until && !pass) {
    const from =
      s.mode === 'append' ? addMs(new Date(previous.until), -(s.overlap?.ms ?? 0)) : align(addDays(signpost, -(s.rollingDays ?? 0)));
    const rolling = { start: from, end: horizon };
    // A complete re-read just read the rolling window too.
    if (!reread || s.mode === 'append') await readWindows(run, slice(rolling, sliceMs), 'incremental', { ...spec, countDuplicates: s.mode === 'append' });
  }
  const cursor: WindowCursor = {
    ...base,
    until: horizon.toISOString(),
    rereads: rereadsAfter(s.rereads, previous?.rereads, rereadsDone, signpost),
  };
  await saveCursor(run, cursor);
}
