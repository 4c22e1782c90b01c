/** A list read again where a change list says it changed, after a backfill of every day. */
import { PAGE_LIMIT_MAX } from '../../source/endpoints.ts';
import { changesArrivedSince, settledBefore, startsBetween } from '../../warehouse/signals.ts';
import { liveRows, markDeletedByKey } from '../../warehouse/deletions.ts';
import { readCheckpoint } from '../../warehouse/state.ts';
import { keyText } from '../../warehouse/record-keys.ts';
import { ChangeCursor, CURSOR_VERSION, parseCursor } from '../cursors.ts';
import { addDays, addMs, countIn, mergeByCost, slice, startOfDayUtc, DAY_MS, type Window } from '../windows.ts';
import { partitionsOf } from '../partitions.ts';
import { streamByName } from '../../resources/index.ts';
import type { ChangeDriven, StreamDef } from '../../resources/stream.ts';
import type { SyncContext, RunOptions, StreamRun } from '../context.ts';
import { readAll } from '../read.ts';
import { newSeen } from '../seen.ts';
import { rereadsAfter } from '../rereads.ts';
import { type WindowSpec, readWindows, readOwedPass } from '../window-reads.ts';

/** Assignments starting within a minute of a named start are read again: a start instant names few of them. */
const INSTANT_MS = 60_000;

export async function runChangeDriven(
  run: StreamRun,
  s: ChangeDriven,
  previous: ChangeCursor | undefined,
): Promise<ChangeCursor> {
  const { ctx, stream } = run;
  const signpost = ctx.now();
  // The horizon moves a whole day at a time: one read a day brings the next day in, not a sliver each run.
  const horizon = startOfDayUtc(addDays(signpost, s.forwardDays + 1));
  const backfillFrom = addDays(signpost, -s.backfillDays);
  const spec: WindowSpec = { start: s.start, end: s.end, tiles: true, deleteMissing: { startColumn: s.startColumn } };
  const sliceMs = s.sliceDays * DAY_MS;
  const changesAfter = (await settledBefore(ctx.warehouse, ctx.companyKey, s.changes.stream)).toISOString();
  // A backfill reads every day after the changes stamped before it began (give or take how late a stamp can be).
  const changesFrom =
    previous?.changesFrom ?? (!previous?.horizon ? addMs(signpost, -changeLateMs(s)).toISOString() : undefined);
  const base = {
    version: CURSOR_VERSION,
    changesAfter: previous?.changesAfter,
    ...(changesFrom ? { changesFrom } : {}),
    horizon: previous?.horizon,
    rereads: previous?.rereads ?? {},
  };
  const owed = await readOwedPass(run, {
    stored: previous?.pass,
    backfilled: Boolean(previous?.horizon),
    backfillFrom,
    horizon,
    rereads: s.rereads,
    lastRereads: previous?.rereads,
    signpost,
    sliceMs,
    spec,
    cursorWith: (x) => ({ ...base, pass: x }) satisfies ChangeCursor,
  });
  if (previous?.horizon && !owed.backfillOrResumed) {
    const target = stream.target;
    const changes = previous.changesAfter
      ? await changesArrivedSince(
          ctx.warehouse,
          s.changes,
          ctx.companyKey,
          new Date(previous.changesAfter),
          previous.changesFrom ? new Date(previous.changesFrom) : undefined,
        )
      : { starts: [], deletedKeys: [] };
    run.counters.deleted += await markDeletedByKey(ctx.warehouse, {
      target,
      companyKey: ctx.companyKey,
      keys: changes.deletedKeys.map((key) => ({ [s.changes.keyColumn]: key })),
    });
    const left = await openRowsLeft(run, s, signpost);
    const instants = [...changes.starts, ...left].map((t) => ({ start: t, end: addMs(t, INSTANT_MS) }));
    const ahead = { start: new Date(previous.horizon), end: horizon };
    const windows = await mergedReads(run, s, [...instants, ...(ahead.end > ahead.start ? [ahead] : [])]);
    await readWindows(
      run,
      windows.flatMap((w) => slice(w, sliceMs)),
      'incremental',
      spec,
    );
  }
  const cursor: ChangeCursor = {
    ...base,
    changesAfter,
    horizon: horizon.toISOString(),
    rereads: rereadsAfter(s.rereads, previous?.rereads, owed.done, signpost),
  };
  return cursor;
}

/** How long before its change was saved a change record may be stamped: the overlap of the stream that reads them. */
function changeLateMs(s: ChangeDriven): number {
  const changes = streamByName(s.changes.stream)?.strategy;
  return changes?.kind === 'windowed' ? (changes.overlap?.ms ?? 0) : 0;
}

/**
 * Whether this run of `stream` reads the rows of the streams it depends on, which must then be written first. A
 * change-driven backfill does not: it reads every day itself, and the change records that arrive while it runs
 * are applied by its next run, from those stamped after it began (`changesFrom`).
 */
export async function changeDrivenReadsDependencies(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions = {},
): Promise<boolean> {
  if (opts.fullRefresh) return false;
  for (const partition of partitionsOf(stream, ctx)) {
    const stored = await readCheckpoint(ctx.warehouse, ctx.companyKey, stream.name, partition.key);
    if (parseCursor(ChangeCursor, stored)?.horizon) return true;
  }
  return false;
}

/**
 * The windows to read again, merged into one paged read wherever the assignments between them (as the warehouse
 * holds them) fill no more pages than the requests the merge saves.
 */
async function mergedReads(run: StreamRun, s: ChangeDriven, windows: Window[]): Promise<Window[]> {
  if (windows.length < 2) return windows;
  const starts = await startsBetween(run.ctx.warehouse, {
    table: run.stream.target.table,
    column: s.startColumn,
    companyKey: run.ctx.companyKey,
    from: new Date(Math.min(...windows.map((w) => w.start.getTime()))),
    to: new Date(Math.max(...windows.map((w) => w.end.getTime()))),
  });
  return mergeByCost(windows, (w) => countIn(starts, w), PAGE_LIMIT_MAX);
}

/**
 * Reads the list of rows open now (clocked in, not out) and writes it; returns the starts of rows the warehouse
 * holds as open that the list no longer returns (clocked out since, or changed): those are read again.
 */
async function openRowsLeft(run: StreamRun, s: ChangeDriven, signpost: Date): Promise<Date[]> {
  const { ctx, stream } = run;
  const target = stream.target;
  const from = addDays(signpost, -s.openWhile.maxDays);
  const seen = newSeen();
  await readAll(run, { [s.start]: from, [s.end]: addDays(signpost, 1), [s.openWhile.param]: true }, 'incremental', {
    seen,
  });
  const open = await liveRows(
    ctx.warehouse,
    {
      target,
      companyKey: ctx.companyKey,
      notNull: [s.openWhile.set],
      where: { [s.openWhile.unset]: null },
      since: { column: s.startColumn, from },
    },
    [...target.key, s.startColumn],
  );
  return open.filter((r) => !seen.keys.has(keyText(r, target.key))).map((r) => new Date(String(r[s.startColumn])));
}
