/** Reading a span of time in windows: halved when refused, checked when empty, sliced into passes that resume. */
import { isSourceError, SourceError } from '../source/errors.ts';
import { liveKeys } from '../warehouse/deletions.ts';
import type { Pass, ReadPoint } from './cursors.ts';
import type { Lane } from '../ratelimit/types.ts';
import {
  addDays,
  addMs,
  forEachLimited,
  halve,
  slice,
  spanMs,
  startOfDayUtc,
  HOUR_MS,
  DAY_MS,
  type Window,
} from './windows.ts';
import type { Reread, StreamDef } from '../resources/stream.ts';
import { windowsAtOnce, type StreamRun } from './context.ts';
import { resumeFrom, readAll } from './read.ts';
import type { ReadProgress } from './stream-cursor.ts';
import { type Seen, newSeen, seenIn, markGone, skipInference } from './seen.ts';
import { dueReread, rereading, rereadSpan } from './rereads.ts';

const isDateOnly = (stream: StreamDef, param: string) =>
  stream.endpoint.query.find((q) => q.name === param)?.type === 'date';

/**
 * The smallest span a refused window is split to before the refusal is final: an hour, or a day where the
 * endpoint takes dates only (a shorter window would send the same dates again).
 */
function minSplitMs(stream: StreamDef, startParam: string): number {
  return isDateOnly(stream, startParam) ? DAY_MS : HOUR_MS;
}

/** How a windowed read sends its windows and which rows a complete window accounts for. */
export interface WindowSpec {
  start: string;
  end: string;
  deleteMissing?: { startColumn: string; endColumn?: string };
  confirmEmpty?: boolean;
  countDuplicates?: boolean;
  /**
   * Both bounds filter one stamp, so windows side by side tile the span, each holding its start and not its end
   * (as deletions are inferred). The service includes both bounds: the end is sent a millisecond short, or a
   * record stamped on the bound between two windows would be read by both.
   */
  tiles?: boolean;
  /** Sent with every window (an employee, a status). */
  query?: Record<string, unknown>;
  where?: Record<string, unknown>;
  /** Gathers the keys every window returned. */
  collect?: Seen;
}

/**
 * The service includes both bounds. Date-only ranges name whole days: [D, D+31) is sent as D .. D+30; windows that
 * tile (`tiles`) are sent a millisecond short of their end.
 */
function windowQuery(run: StreamRun, w: Window, spec: WindowSpec): Record<string, unknown> {
  const end = spec.tiles || isDateOnly(run.stream, spec.end) ? addMs(w.end, -1) : w.end;
  return { ...spec.query, [spec.start]: w.start, [spec.end]: end };
}

/** A pass's slice read as a window: where its pages' progress is stored, and where a resumed read stands. */
export interface SliceRead {
  progress?: ReadProgress;
  resume?: ReadPoint;
}

/**
 * Reads one window completely (halving it when refused) and marks what it did not return gone. A window
 * resumed part way goes on from where it stands: its records before that were not seen by this read.
 */
export async function readWindow(
  run: StreamRun,
  w: Window,
  lane: Lane,
  spec: WindowSpec,
  { progress, resume }: SliceRead = {},
): Promise<'whole' | 'split'> {
  const range = spec.deleteMissing ? { ...spec.deleteMissing, from: w.start, to: w.end } : undefined;
  // A window resumed part way infers nothing (below): it need not ask what its scope held. One whose keys are
  // collected keeps them all.
  const seen =
    range && resumeFrom(resume) === 0 && !spec.collect ? await seenIn(run, { range, where: spec.where }) : newSeen();
  let rows: number;
  try {
    rows = await readAll(run, windowQuery(run, w, spec), lane, {
      seen,
      progress,
      resume,
      countDuplicates: spec.countDuplicates,
    });
  } catch (e) {
    if (!splittable(e)) throw e;
    const minimum = minSplitMs(run.stream, spec.start);
    if (spanMs(w) <= minimum) throw refusedAtMinimum(run, w, e, minimum);
    run.ctx.log.warn({ stream: run.stream.name, window: w, err: describe(e) }, 'window refused; splitting it');
    for (const half of halve(w)) await readWindow(run, half, lane, spec);
    return 'split';
  }
  if (spec.collect) {
    for (const k of seen.keys) spec.collect.keys.add(k);
    spec.collect.unkeyed += seen.unkeyed;
  }
  const label = `window ${w.start.toISOString()} – ${w.end.toISOString()}`;
  if (resumeFrom(resume) > 0) {
    // What this read returned is only the end of the window: a row it missed may be among the records before.
    if (range) skipInference(run, `${label}: resumed at offset ${resumeFrom(resume)}; nothing marked gone`);
    return 'whole';
  }
  if (spec.confirmEmpty && range && rows === 0 && spanMs(w) > minSplitMs(run.stream, spec.start)) {
    const held = await liveKeys(run.ctx.warehouse, {
      target: run.stream.target,
      companyKey: run.ctx.companyKey,
      range,
      where: spec.where,
    });
    if (held.length > 0) {
      const before = run.counters.rows;
      for (const half of halve(w)) await readWindow(run, half, lane, { ...spec, confirmEmpty: false });
      if (run.counters.rows > before) {
        run.counters.silentRefusals++;
        run.ctx.log.warn(
          { stream: run.stream.name, window: w },
          'window answered empty while its halves were not: the service did not fulfil it',
        );
      }
      return 'split';
    }
  }
  if (range) await markGone(run, seen, { range, where: spec.where, label });
  return 'whole';
}

/** Reads windows concurrently. */
export async function readWindows(run: StreamRun, windows: Window[], lane: Lane, spec: WindowSpec): Promise<void> {
  await forEachLimited(windows, windowsAtOnce(run.ctx), async (w) => {
    await readWindow(run, w, lane, spec);
  });
}

/**
 * Reads a long pass (a backfill, a complete re-read) slice by slice. Each slice's completion is stored in the
 * cursor with its last page, so an interrupted pass resumes with the slices left. A backfill also stores where
 * each slice stands with each page written, and resumes each slice under way from there. A re-read pass does
 * not: it exists to find what is gone, which a slice read in part cannot tell, so its slices start over.
 */
export async function readPass(
  run: StreamRun,
  pass: Pass,
  lane: Lane,
  { sliceMs, spec, cursorWith }: Pick<PassOwed, 'sliceMs' | 'spec' | 'cursorWith'>,
): Promise<void> {
  const done = new Set(pass.done);
  const at = pass.at ?? {};
  const planned = slice({ start: new Date(pass.from), end: new Date(pass.to) }, sliceMs);
  const windows = planned.filter((w) => !done.has(w.start.toISOString()));
  run.progress?.plan(planned.length, planned.length - windows.length);
  if (windows.length > 0 && (done.size > 0 || Object.keys(at).length > 0)) {
    run.ctx.log.info(
      { stream: run.stream.name, pass: pass.name, left: windows.length, partLeft: Object.keys(at).length },
      'resuming a pass',
    );
  }
  // Slices are read side by side and each page edits the stored pass with its slice's progress, so the pass must
  // be stored first.
  await run.cursor.save(cursorWith(pass));
  await forEachLimited(windows, windowsAtOnce(run.ctx), async (w) => {
    const id = w.start.toISOString();
    const progress = run.cursor.slice(id, lane === 'backfill');
    // A resumed slice does not simply go on after its last written page: offset paging shifts when records
    // before it are deleted meanwhile, which would skip as many unread records (RESUME_OVERLAP).
    const sliceRun = run.progress ? { ...run, progress: run.progress.slice(id) } : run;
    const resume = progress.everyPage ? at[id] : undefined;
    if ((await readWindow(sliceRun, w, lane, spec, { progress, resume })) === 'split') await run.cursor.closeSlice(id);
    sliceRun.progress?.settle();
  });
}

const newPass = (name: string, from: Date, to: Date): Pass => ({
  name,
  from: from.toISOString(),
  to: to.toISOString(),
  done: [],
});

export const dayAligned = (run: StreamRun, param: string, d: Date, up = false) =>
  isDateOnly(run.stream, param) ? (up ? addDays(startOfDayUtc(addMs(d, -1)), 1) : startOfDayUtc(d)) : d;

function spanOf(span: { from: Date; to: Date }, align: (d: Date, up?: boolean) => Date): [Date, Date] {
  return [align(span.from), align(span.to, true)];
}

function splittable(e: unknown): e is SourceError {
  return isSourceError(e) && (e.kind === 'bad_request' || e.kind === 'server' || e.kind === 'timeout');
}

/** A refusal of a window too small to split again: names the window, so an operator can find it, and what the service said. */
function refusedAtMinimum(run: StreamRun, w: Window, e: SourceError, minimum: number): SourceError {
  const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;
  const message =
    `${run.stream.name}: window ${w.start.toISOString()} – ${w.end.toISOString()} (${minutes(spanMs(w))}) refused, ` +
    `and windows are not split below ${minutes(minimum)}: ${e.message}`;
  return new SourceError(e.kind, message, {
    status: e.status,
    code: e.code,
    endpoint: e.endpoint,
    fields: e.fields,
    cause: e,
  });
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** What a windowed kind of stream knows when it asks which pass it owes (see `readOwedPass`). */
export interface PassOwed {
  /** The pass its cursor holds under way, if any. */
  stored: Pass | undefined;
  /** Whether its backfill ever completed. */
  backfilled: boolean;
  backfillFrom: Date;
  horizon: Date;
  /** The re-reads it takes, and when each last ran. */
  rereads: readonly Reread[] | undefined;
  lastRereads: Record<string, string> | undefined;
  signpost: Date;
  /** Moves a re-read's span onto the days the endpoint can be asked for (as it is, without). */
  align?: (d: Date, up?: boolean) => Date;
  sliceMs: number;
  spec: WindowSpec;
  /** The stream's cursor holding a pass. */
  cursorWith: (p: Pass | undefined) => unknown;
}

/** What `readOwedPass` read, and which re-reads it counts as done. */
export interface PassRead {
  /** A backfill, or a pass an earlier run left under way. */
  backfillOrResumed: boolean;
  /** A re-read that fell due now. */
  reread: Reread | undefined;
  done: Reread | 'all' | undefined;
}

/**
 * Reads the pass a run owes, if any: the one stored under way, else a backfill where none completed, else the
 * widest re-read due. A backfill counts as every re-read.
 */
export async function readOwedPass(run: StreamRun, o: PassOwed): Promise<PassRead> {
  const begun = o.stored ?? (!o.backfilled ? newPass('backfill', o.backfillFrom, o.horizon) : undefined);
  const reread = begun ? undefined : dueReread(o.rereads, o.lastRereads, o.signpost);
  if (!begun && !reread) return { backfillOrResumed: false, reread: undefined, done: undefined };
  const pass =
    begun ??
    newPass(reread!.name, ...spanOf(rereadSpan(reread!, o.signpost, o.backfillFrom, o.horizon), o.align ?? ((d) => d)));
  const backfill = pass.name === 'backfill';
  const read = () => readPass(run, pass, backfill ? 'backfill' : 'incremental', o);
  await (backfill ? read() : rereading(run, pass.name, read));
  return {
    backfillOrResumed: begun !== undefined,
    reread,
    done: backfill ? 'all' : (o.rereads ?? []).find((r) => r.name === pass.name),
  };
}
