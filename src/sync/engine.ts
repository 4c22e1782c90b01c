import type { Logger } from 'pino';
import { isSourceError, SourceError } from '../source/errors.ts';
import type { SourceClient } from '../source/client.ts';
import { PAGE_LIMIT_MAX } from '../source/endpoints.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { targets, type Target } from '../warehouse/targets.ts';
import {
  changesArrivedSince,
  credentialHoldersChangedSince,
  credentialHoldersExpiring,
  holdersOutOfStep,
  individualsChangedSince,
  individualsOutside,
  liveKeys,
  liveRows,
  mapItem,
  markDeletedByKey,
  markMissingDeleted,
  readCheckpoint,
  settledBefore,
  startsBetween,
  writePage,
  type CheckpointWrite,
  type CursorEdit,
  type RangeFilter,
} from '../warehouse/index.ts';
import { keyText } from '../warehouse/rows.ts';
import type { Reject } from '../source/paging.ts';
import {
  ChangeCursor,
  SinceCursor,
  SnapshotCursor,
  StatusCursor,
  WindowCursor,
  PASS_AT,
  PASS_DONE,
  parseCursor,
  type Pass,
  type ReadPoint,
} from './cursors.ts';
import type { Lane } from '../ratelimit/types.ts';
import type { Observers } from '../observers.ts';
import {
  addDays,
  addMs,
  countIn,
  forEachLimited,
  halve,
  mergeByCost,
  slice,
  spanMs,
  startOfDayUtc,
  HOUR_MS,
  DAY_MS,
  type Window,
} from './windows.ts';
import {
  partitionsOf,
  streamByName,
  type ChangeDriven,
  type Partition,
  type Reread,
  type Snapshot,
  type StatusDriven,
  type StreamDef,
  type UpdatedSince,
  type Windowed,
} from './streams.ts';

/** What a stream run needs from the outside world. */
export interface SyncContext {
  companyKey: string;
  client: SourceClient;
  warehouse: Warehouse;
  log: Logger;
  /** The service's clock: checkpoints and windows are in its time, not ours. */
  now: () => Date;
  /** Asks the service for its time when what we know of it may be stale; runs once at the start of a run. */
  refreshClock?: () => Promise<unknown>;
  formIds: number[];
  runTypeIds: number[];
  /** Sub-windows read at once per stream. */
  windowConcurrency?: number;
  /** Pages of one list asked for at once, at most (client.ts `readAhead`); default READ_AHEAD. */
  readAhead?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Told of every page written and every stream that ends. */
  observers?: Observers;
}

export interface Progress {
  stream: string;
  partition: string;
  requests: number;
  rows: number;
  rejects: number;
}

export interface StreamCounters {
  requests: number;
  rows: number;
  rejects: number;
  deleted: number;
  /** Rows an append stream's overlap read again that were stored already: what the overlap absorbed. */
  duplicates: number;
  /** Complete reads whose deletion inference was skipped, each with why. */
  inferenceSkipped: string[];
  /** Periodic complete re-reads this run did (or resumed). */
  rereads: string[];
  /** Rows each re-read of `rereads` returned, in its order: the pages a re-read cannot do without. */
  rereadRows: number[];
  /** Requests each re-read of `rereads` sent, in its order. */
  rereadRequests: number[];
  /** Windows answered empty whose halves were not: a refusal that did not say so. */
  silentRefusals: number;
}

export interface RunOptions {
  /** Ignore checkpoints: read everything again (and mark what is gone). */
  fullRefresh?: boolean;
  runId?: number;
}

/**
 * The smallest span a refused window is split to before the refusal is final: an hour, or a day where the
 * endpoint takes dates only (a shorter window would send the same dates again).
 */
function minSplitMs(stream: StreamDef, startParam: string): number {
  const type = stream.endpoint.query.find((q) => q.name === startParam)?.type;
  return type === 'date' ? DAY_MS : HOUR_MS;
}

interface StreamRun {
  ctx: SyncContext;
  stream: StreamDef;
  partition: Partition;
  counters: StreamCounters;
  /** This partition's own requests and rows: partitions run side by side and share `counters`. */
  tally: { requests: number; rows: number };
  syncedAt: Date;
  opts: RunOptions;
}

export function emptyCounters(): StreamCounters {
  return { requests: 0, rows: 0, rejects: 0, deleted: 0, duplicates: 0, inferenceSkipped: [], rereads: [], rereadRows: [], rereadRequests: [], silentRefusals: 0 };
}

/** Runs one stream over all its partitions; `counters` holds what was done even when it throws. */
export async function runStream(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions = {},
  counters: StreamCounters = emptyCounters(),
): Promise<StreamCounters> {
  Object.assign(counters, { ...emptyCounters(), ...counters });
  // Partitions keep checkpoints of their own: they are read side by side, like windows.
  await forEachLimited(partitionsOf(stream, ctx), ctx.windowConcurrency ?? 4, async (partition) => {
    const run: StreamRun = { ctx, stream, partition, counters, tally: { requests: 0, rows: 0 }, syncedAt: new Date(), opts };
    const s = stream.strategy;
    if (s.kind === 'full') await runFull(run);
    else if (s.kind === 'snapshot') await runSnapshot(run, s);
    else if (s.kind === 'updated-since') await runUpdatedSince(run, s);
    else if (s.kind === 'windowed') await runWindowed(run, s);
    else if (s.kind === 'status-driven') await runStatusDriven(run, s);
    else await runChangeDriven(run, s);
  });
  return counters;
}

/** The keys a complete read returned; records refused without a readable key make its absences meaningless. */
interface Seen {
  keys: Set<string>;
  unkeyed: number;
}

const newSeen = (): Seen => ({ keys: new Set(), unkeyed: 0 });

/** Where a page stands in its read: its offset, whether it completes the read, and where the read goes on after it. */
interface PageAt {
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
function resumeFrom(point: ReadPoint | undefined): number {
  if (point === undefined) return 0;
  return typeof point === 'number' ? point : Math.max(point.offset, point.next - RESUME_OVERLAP);
}

/**
 * What a page stores with it (in its transaction): with the last page and, when `everyPage`, with every page of a
 * list the service pages by offset, which a read can resume from. Either a whole cursor (one read's pages are
 * written in order, so a later one never stores an older cursor), or an edit of the stored cursor, which the pages
 * of slices read side by side make without overwriting each other's.
 */
type Checkpoint = { everyPage: boolean } & ({ cursor: (page: PageAt) => unknown } | { edit: (page: PageAt) => CursorEdit });

interface ReadOptions {
  seen?: Seen;
  checkpoint?: Checkpoint;
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
async function readAll(run: StreamRun, query: Record<string, unknown>, lane: Lane, o: ReadOptions = {}): Promise<number> {
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
  const point = typeof o.resume === 'object' ? o.resume : undefined;
  let lookFor = point?.lastKey;
  let rows = 0;
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
        return readAll(run, query, lane, { ...o, resume: offset });
      }
    }
    if (o.seen) noteRejects(run, o.seen, page.rejects, page.extras);
    const write = (checkpoint?: CheckpointWrite) =>
      writePage(ctx.warehouse, {
        target: targetOf(stream),
        stream: stream.name,
        companyKey: ctx.companyKey,
        items: page.items as object[],
        extras: page.extras,
        rejects: page.rejects,
        syncedAt: run.syncedAt,
        runId: run.opts.runId,
        seen: o.seen?.keys,
        checkpoint: checkpoint && { partition: partition.key, ...checkpoint },
      });
    const cp = !page.hasMore || (resumable && o.checkpoint?.everyPage) ? o.checkpoint : undefined;
    const at: PageAt = { offset: page.offset, last: !page.hasMore, ...(cp && page.hasMore ? { point: pointAfter(run, page) } : {}) };
    const result = await write(cp && ('edit' in cp ? { edit: cp.edit(at) } : { cursor: cp.cursor(at) }));
    rows += page.items.length;
    counters.rows += page.items.length;
    run.tally.rows += page.items.length;
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
  return rows;
}

/** The key text of a record as its row is written (rows.ts keyText). */
function keyOf(run: StreamRun, item: unknown, extras: Record<string, unknown>): string {
  return mapItem(targetOf(run.stream), run.ctx.companyKey, item as Record<string, unknown>, extras).keyText;
}

/** Where a read goes on after `page`: past its records (refused ones too), looking for its last record. */
function pointAfter(run: StreamRun, page: { offset: number; items: readonly unknown[]; rejects: readonly unknown[]; extras: Record<string, unknown> }): ReadPoint {
  const next = page.offset + page.items.length + page.rejects.length;
  const last = page.items.at(-1);
  // A page of refused records alone names no record to look for: the read goes on from that page.
  return last === undefined ? page.offset : { offset: page.offset, next, lastKey: keyOf(run, last, page.extras) };
}

/** A refused record is still there: its key, read from the raw payload where it can be, counts as seen. */
function noteRejects(run: StreamRun, seen: Seen, rejects: readonly Reject[], extras: Record<string, unknown>): void {
  const target = targetOf(run.stream);
  for (const r of rejects) {
    const key = rawKey(target, run.ctx.companyKey, r.raw, extras);
    if (key === undefined) seen.unkeyed++;
    else seen.keys.add(key);
  }
}

function rawKey(target: Target, companyKey: string, raw: unknown, extras: Record<string, unknown>): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  try {
    const m = mapItem(target, companyKey, raw as Record<string, unknown>, extras);
    if (target.keyFields) {
      const fields = target.keyFields.flatMap((f) => (typeof f === 'string' ? [f] : f));
      if (!fields.some((f) => getField(raw, f) != null)) return undefined;
    } else if (target.key.some((k) => m.row[k] == null)) return undefined;
    return m.keyText;
  } catch {
    return undefined;
  }
}

function getField(item: unknown, path: string): unknown {
  let v: unknown = item;
  for (const part of path.split('.')) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}

interface Scope {
  range?: RangeFilter;
  where?: Record<string, unknown>;
  /** Names the read in sync_runs when its inference is skipped. */
  label: string;
}

/** Rows in the scope of a complete read that it did not return are gone, unless a refused record had no key. */
async function markGone(run: StreamRun, seen: Seen, scope: Scope): Promise<void> {
  const { ctx, stream } = run;
  if (seen.unkeyed > 0) {
    skipInference(run, `${scope.label}: ${seen.unkeyed} refused record(s) without a readable key; nothing marked gone`);
    return;
  }
  run.counters.deleted += await markMissingDeleted(ctx.warehouse, {
    target: targetOf(stream),
    companyKey: ctx.companyKey,
    seen: seen.keys,
    range: scope.range,
    where: scope.where,
    partition: partitionFilter(run),
  });
}

/** A complete read whose deletion inference is skipped: said in the run's record (sync_runs) and the log. */
function skipInference(run: StreamRun, why: string): void {
  run.counters.inferenceSkipped.push(why);
  run.ctx.log.warn({ stream: run.stream.name, partition: run.partition.key }, why);
}

/** Rows of a partitioned stream belong to their partition; a complete read of one says nothing of the others. */
function partitionFilter(run: StreamRun): Record<string, unknown> | undefined {
  return run.stream.partitions ? run.partition.query : undefined;
}

async function runFull(run: StreamRun): Promise<void> {
  const seen = newSeen();
  await readAll(run, {}, 'incremental', { seen });
  await markGone(run, seen, { label: 'complete read' });
}

function cursorOf<T>(run: StreamRun, schema: import('zod').ZodType<T>): Promise<T | undefined> {
  if (run.opts.fullRefresh) return Promise.resolve(undefined);
  return readCheckpoint(run.ctx.warehouse, run.ctx.companyKey, run.stream.name, run.partition.key).then((c) =>
    parseCursor(schema, c, { stream: run.stream.name, partition: run.partition.key }),
  );
}

/**
 * A snapshot row is gone when two complete reads in a row miss it: offset paging over a list that moves can
 * skip a record once, and the next read finds it. A snapshot that follows employees reads it whole only when its
 * re-read is due or more employees changed than its pages; otherwise only the employees a signal names.
 */
async function runSnapshot(run: StreamRun, s: Snapshot): Promise<void> {
  const { ctx } = run;
  const signpost = ctx.now();
  const previous = await cursorOf(run, SnapshotCursor);
  const f = s.followEmployees;
  // Signals written after this instant are read next time: a run of their streams still going may write more.
  const signalsAfter = f ? await signalsSettled(run) : undefined;
  const followed = f && previous?.signalsAfter && !dueReread(s.rereads, previous.rereads, signpost)
    ? await employeesToRead(run, previous, signpost)
    : undefined;
  let suspects: string[];
  if (f && followed) {
    await readEmployees(run, f, followed);
    suspects = [];
  } else {
    const read = () => readSnapshot(run, previous?.suspects ?? []);
    suspects = f && previous ? await rereadingValue(run, 'all', read) : await read();
  }
  const cursor: SnapshotCursor = {
    version: 2,
    suspects,
    ...(f ? { signalsAfter: signalsAfter!.toISOString(), signpost: signpost.toISOString(), rereads: rereadsAfter(s.rereads, previous?.rereads, followed ? undefined : 'all', signpost) } : {}),
  };
  await saveCursor(run, cursor);
}

/** Reads the whole list; returns the keys it missed for the first time (suspects), marking gone those missed twice. */
async function readSnapshot(run: StreamRun, previous: readonly string[]): Promise<string[]> {
  const { ctx, stream } = run;
  const seen = newSeen();
  await readAll(run, {}, 'incremental', { seen });
  const target = targetOf(stream);
  if (seen.unkeyed > 0) {
    await markGone(run, seen, { label: 'snapshot' });
    return [...previous];
  }
  const live = await liveKeys(ctx.warehouse, { target, companyKey: ctx.companyKey, partition: partitionFilter(run) });
  const missed = live.filter((k) => !seen.keys.has(keyText(k, target.key)));
  const suspects = new Set(previous);
  const gone = missed.filter((k) => suspects.has(keyText(k, target.key)));
  run.counters.deleted += await markDeletedByKey(ctx.warehouse, { target, companyKey: ctx.companyKey, keys: gone });
  return missed.map((k) => keyText(k, target.key)).filter((k) => !suspects.has(k));
}

type FollowEmployees = NonNullable<Snapshot['followEmployees']>;

/** The instant before which the individuals' and credentials' runs have written all they will. */
async function signalsSettled(run: StreamRun): Promise<Date> {
  const { ctx } = run;
  const [a, b] = await Promise.all([
    settledBefore(ctx.warehouse, ctx.companyKey, 'individuals'),
    settledBefore(ctx.warehouse, ctx.companyKey, 'individual-certifications'),
  ]);
  return a < b ? a : b;
}

/**
 * The employees whose rows may have changed since the last run: their individual row or credentials changed, a
 * credential of theirs expired as the service's day turned, or the last complete read missed them. Undefined when
 * reading them one by one would cost more than a complete read.
 */
async function employeesToRead(run: StreamRun, previous: SnapshotCursor, signpost: Date): Promise<number[] | undefined> {
  const { ctx, stream } = run;
  const after = new Date(previous.signalsAfter!);
  const lastDay = (previous.signpost ? new Date(previous.signpost) : signpost).toISOString().slice(0, 10);
  const today = signpost.toISOString().slice(0, 10);
  // A credential turns Expired the day after its expiration day: when the day turned, those that ended since the
  // day before the last run (a service that counts days in its own zone turns a few hours apart) are read.
  // Together, so a warehouse that goes away fails them as one and leaves no rejection unheard.
  const [changed, holders, expiring] = await Promise.all([
    individualsChangedSince(ctx.warehouse, ctx.companyKey, after),
    credentialHoldersChangedSince(ctx.warehouse, ctx.companyKey, after),
    today > lastDay ? credentialHoldersExpiring(ctx.warehouse, ctx.companyKey, addDaysText(lastDay, -1), addDaysText(today, -1)) : [],
  ]);
  const ids = new Set<number>([...changed, ...holders, ...expiring, ...previous.suspects.map((k) => Number((JSON.parse(k) as string[])[0]))]);
  const live = await liveKeys(ctx.warehouse, { target: targetOf(stream), companyKey: ctx.companyKey });
  return ids.size <= Math.ceil(live.length / PAGE_LIMIT_MAX) ? [...ids] : undefined;
}

const addDaysText = (day: string, days: number) => addDays(new Date(`${day}T00:00:00Z`), days).toISOString().slice(0, 10);

/** Each employee's rows read by the employee filter: a complete read of theirs, so what it misses is gone. */
async function readEmployees(run: StreamRun, f: FollowEmployees, ids: readonly number[]): Promise<void> {
  await forEachLimited(ids, run.ctx.windowConcurrency ?? 4, async (id) => {
    const own = newSeen();
    try {
      await readAll(run, { [f.param]: id }, 'incremental', { seen: own });
    } catch (e) {
      // An employee the service no longer knows has no rows left.
      if (!(isSourceError(e) && e.kind === 'not_found')) throw e;
    }
    await markGone(run, own, { where: { [f.column]: id }, label: `${f.param} ${id}` });
  });
}

/** Runs a periodic re-read, noting its name, the rows it returned and the requests it sent. */
async function rereading(run: StreamRun, name: string, read: () => Promise<unknown>): Promise<void> {
  await rereadingValue(run, name, read);
}

async function rereadingValue<T>(run: StreamRun, name: string, read: () => Promise<T>): Promise<T> {
  run.counters.rereads.push(name);
  const { rows, requests } = run.tally;
  const value = await read();
  run.counters.rereadRows.push(run.tally.rows - rows);
  run.counters.rereadRequests.push(run.tally.requests - requests);
  return value;
}

/** The re-read due now, the widest first (one per run); undefined when none is. */
function dueReread(rereads: readonly Reread[] | undefined, last: Record<string, string> | undefined, now: Date): Reread | undefined {
  const due = (rereads ?? []).filter((r) => {
    const at = last?.[r.name];
    return !at || now.getTime() - new Date(at).getTime() >= r.everyHours * HOUR_MS - 5 * 60_000;
  });
  return due.sort((a, b) => widthOf(b) - widthOf(a))[0];
}

const widthOf = (r: Reread) => (r.span ? r.span.backDays + r.span.forwardDays : Infinity);

/** The re-read times after `done` completed: it and every narrower one count as done now. */
function rereadsAfter(rereads: readonly Reread[] | undefined, last: Record<string, string> | undefined, done: Reread | 'all' | undefined, now: Date): Record<string, string> {
  const out = { ...last };
  for (const r of rereads ?? []) {
    if (done === 'all' || (done && (r.name === done.name || widthOf(r) <= widthOf(done)))) out[r.name] = now.toISOString();
  }
  return out;
}

async function runUpdatedSince(run: StreamRun, s: UpdatedSince): Promise<void> {
  const { ctx } = run;
  const stored = await cursorOf(run, SinceCursor);
  // A first read cut short goes on from its last written page, as of when it began.
  const partial = stored?.firstReadAt !== undefined ? stored : undefined;
  const previous = partial ? undefined : stored;
  const signpost = partial ? new Date(partial.since) : ctx.now();
  const individualsAfter =
    partial?.individualsAfter ?? (s.followIndividuals ? (await settledBefore(ctx.warehouse, ctx.companyKey, 'individuals')).toISOString() : undefined);
  const range: Record<string, unknown> = {};
  if (s.range) {
    range[s.range.start] = addDays(signpost, -s.range.backDays);
    range[s.range.end] = addDays(signpost, s.range.forwardDays);
  }
  const reread = previous ? dueReread(s.rereads, previous.rereads, signpost) : undefined;
  const followed = previous && !reread && s.followIndividuals ? await individualsToFollow(run, s.followIndividuals, previous.individualsAfter) : [];
  // One request per changed individual, or the whole list when that takes fewer pages: both are sound.
  const wholeIsCheaper = followed.length > 0 && followed.length >= (await pagesHeld(run));
  const complete = !previous || reread !== undefined || wholeIsCheaper;
  const query = complete ? range : { ...range, [s.param]: sinceParam(new Date(previous!.since), s) };
  const seen = newSeen();
  const firstRead: SinceCursor = { version: 2, since: signpost.toISOString(), rereads: {}, ...(individualsAfter ? { individualsAfter } : {}) };
  const checkpoint: Checkpoint | undefined = previous
    ? undefined
    : { everyPage: true, cursor: (page) => ({ ...firstRead, firstReadAt: page.point ?? page.offset }) satisfies SinceCursor };
  const resume = partial?.firstReadAt;
  const read = () => readAll(run, query, previous ? 'incremental' : 'backfill', { seen, checkpoint, resume });
  await (reread ? rereading(run, reread.name, read) : read());
  const label = reread ? `re-read ${reread.name}` : 'complete read';
  // A read with no `since` is complete: what it did not return is gone (e.g. credentials of former employees).
  // One resumed part way did not see the records before its offset.
  if (complete && resumeFrom(resume) > 0) skipInference(run, `${label}: resumed at offset ${resumeFrom(resume)}; nothing marked gone`);
  else if (complete) await markGone(run, seen, { label });
  else if (s.followIndividuals) await followIndividuals(run, s.followIndividuals, range, seen, followed);
  const cursor: SinceCursor = {
    version: 2,
    since: signpost.toISOString(),
    rereads: rereadsAfter(s.rereads, previous?.rereads, complete ? 'all' : undefined, signpost),
    ...(individualsAfter ? { individualsAfter } : {}),
  };
  await saveCursor(run, cursor);
}

/**
 * Records of an individual whose row changed (renamed, new job title or identifiers, back from Former) are read
 * again by the individual: the service does not bump their update stamp. Records of individuals the list no
 * longer covers are gone.
 */
async function followIndividuals(
  run: StreamRun,
  f: NonNullable<UpdatedSince['followIndividuals']>,
  range: Record<string, unknown>,
  seen: Seen,
  changed: readonly number[],
): Promise<void> {
  const { ctx } = run;
  for (const id of changed) {
    const own = newSeen();
    try {
      await readAll(run, { ...range, [f.param]: id }, 'incremental', { seen: own });
    } catch (e) {
      // The service answers an individual it no longer knows with not_found: nothing of theirs is left.
      if (!(isSourceError(e) && e.kind === 'not_found')) throw e;
    }
    for (const k of own.keys) seen.keys.add(k);
    seen.unkeyed += own.unkeyed;
    await markGone(run, own, { where: { [f.column]: id }, label: `${f.param} ${id}` });
  }
  const outside = await individualsOutside(ctx.warehouse, ctx.companyKey, f.statuses);
  if (outside.length > 0) await markGone(run, seen, { where: { [f.column]: outside }, label: `individuals not ${f.statuses.join('/')}` });
}

async function individualsToFollow(run: StreamRun, f: NonNullable<UpdatedSince['followIndividuals']>, after: string | undefined): Promise<number[]> {
  if (!after) return [];
  return holdersOutOfStep(run.ctx.warehouse, run.ctx.companyKey, new Date(after), { ...f, table: targetOf(run.stream).table });
}

/** The pages a complete read of the stream takes, judged by the rows the warehouse holds for it. */
async function pagesHeld(run: StreamRun): Promise<number> {
  const live = await liveKeys(run.ctx.warehouse, { target: targetOf(run.stream), companyKey: run.ctx.companyKey });
  return Math.max(1, Math.ceil(live.length / PAGE_LIMIT_MAX));
}

function sinceParam(since: Date, s: UpdatedSince): Date {
  const back = addMs(since, -s.overlapMs);
  return s.precision === 'date' ? startOfDayUtc(back) : back;
}

/** How a windowed read sends its windows and which rows a complete window accounts for. */
interface WindowSpec {
  start: string;
  end: string;
  deleteMissing?: { startColumn: string; endColumn?: string };
  confirmEmpty?: boolean;
  countDuplicates?: boolean;
  /** Sent with every window (an employee, a status). */
  query?: Record<string, unknown>;
  where?: Record<string, unknown>;
  /** Gathers the keys every window returned. */
  collect?: Seen;
}

const isDateOnly = (stream: StreamDef, param: string) => stream.endpoint.query.find((q) => q.name === param)?.type === 'date';

/** Date-only ranges name whole days, both ends included: [D, D+31) is sent as D .. D+30. */
function windowQuery(run: StreamRun, w: Window, spec: WindowSpec): Record<string, unknown> {
  const end = isDateOnly(run.stream, spec.end) ? addMs(w.end, -1) : w.end;
  return { ...spec.query, [spec.start]: w.start, [spec.end]: end };
}

/**
 * Reads one window completely (halving it when refused) and marks what it did not return gone. A window
 * resumed part way goes on from where it stands: its records before that were not seen by this read.
 */
async function readWindow(run: StreamRun, w: Window, lane: Lane, spec: WindowSpec, checkpoint?: Checkpoint, resume?: ReadPoint): Promise<'whole' | 'split'> {
  const seen = newSeen();
  let rows: number;
  try {
    rows = await readAll(run, windowQuery(run, w, spec), lane, { seen, checkpoint, resume, countDuplicates: spec.countDuplicates });
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
  const range = spec.deleteMissing ? { ...spec.deleteMissing, from: w.start, to: w.end } : undefined;
  const label = `window ${w.start.toISOString()} – ${w.end.toISOString()}`;
  if (resumeFrom(resume) > 0) {
    // What this read returned is only the end of the window: a row it missed may be among the records before.
    if (range) skipInference(run, `${label}: resumed at offset ${resumeFrom(resume)}; nothing marked gone`);
    return 'whole';
  }
  if (spec.confirmEmpty && range && rows === 0 && spanMs(w) > minSplitMs(run.stream, spec.start)) {
    const held = await liveKeys(run.ctx.warehouse, { target: targetOf(run.stream), companyKey: run.ctx.companyKey, range, where: spec.where });
    if (held.length > 0) {
      const before = run.counters.rows;
      for (const half of halve(w)) await readWindow(run, half, lane, { ...spec, confirmEmpty: false });
      if (run.counters.rows > before) {
        run.counters.silentRefusals++;
        run.ctx.log.warn({ stream: run.stream.name, window: w }, 'window answered empty while its halves were not: the service did not fulfil it');
      }
      return 'split';
    }
  }
  if (range) await markGone(run, seen, { range, where: spec.where, label });
  return 'whole';
}

/** Reads windows concurrently. */
async function readWindows(run: StreamRun, windows: Window[], lane: Lane, spec: WindowSpec): Promise<void> {
  await forEachLimited(windows, run.ctx.windowConcurrency ?? 4, async (w) => {
    await readWindow(run, w, lane, spec);
  });
}

/**
 * Reads a long pass (a backfill, a complete re-read) slice by slice. Each slice's completion is stored in the
 * cursor with its last page, so an interrupted pass resumes with the slices left. A backfill also stores where
 * each slice stands with each page written, and resumes each slice under way from there. A re-read pass does
 * not: it exists to find what is gone, which a slice read in part cannot tell, so its slices start over.
 */
async function readPass(run: StreamRun, pass: Pass, sliceMs: number, lane: Lane, spec: WindowSpec, cursorWith: (p: Pass | undefined) => unknown): Promise<void> {
  const done = new Set(pass.done);
  const at = pass.at ?? {};
  const windows = slice({ start: new Date(pass.from), end: new Date(pass.to) }, sliceMs).filter((w) => !done.has(w.start.toISOString()));
  if (windows.length > 0 && (done.size > 0 || Object.keys(at).length > 0)) {
    run.ctx.log.info({ stream: run.stream.name, pass: pass.name, left: windows.length, partLeft: Object.keys(at).length }, 'resuming a pass');
  }
  // Slices are read side by side and each page edits the stored pass with its slice's progress, so the pass must
  // be stored first.
  await saveCursor(run, cursorWith(pass));
  await forEachLimited(windows, run.ctx.windowConcurrency ?? 4, async (w) => {
    const id = w.start.toISOString();
    const checkpoint: Checkpoint = { edit: (page) => sliceProgress(id, page), everyPage: lane === 'backfill' };
    // A resumed slice does not simply go on after its last written page: offset paging shifts when records
    // before it are deleted meanwhile, which would skip as many unread records (RESUME_OVERLAP).
    if ((await readWindow(run, w, lane, spec, checkpoint, checkpoint.everyPage ? at[id] : undefined)) === 'split') {
      await editCursor(run, sliceProgress(id, { offset: 0, last: true }));
    }
  });
}

/** A slice's progress after `page`: done with its last page, else where it stands. */
function sliceProgress(slice: string, page: PageAt): CursorEdit {
  return page.last
    ? { kind: 'settle', object: PASS_AT, key: slice, list: PASS_DONE }
    : { kind: 'put', object: PASS_AT, key: slice, value: page.point ?? page.offset };
}

const newPass = (name: string, from: Date, to: Date): Pass => ({ name, from: from.toISOString(), to: to.toISOString(), done: [] });

/** The span a re-read covers now: its own, or the backfill's. */
function rereadSpan(r: Reread, now: Date, backfillFrom: Date, horizon: Date): { from: Date; to: Date } {
  return r.span ? { from: addDays(now, -r.span.backDays), to: addDays(now, r.span.forwardDays) } : { from: backfillFrom, to: horizon };
}

const dayAligned = (run: StreamRun, param: string, d: Date, up = false) =>
  isDateOnly(run.stream, param) ? (up ? addDays(startOfDayUtc(addMs(d, -1)), 1) : startOfDayUtc(d)) : d;

async function runWindowed(run: StreamRun, s: Windowed): Promise<void> {
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

function spanOf(span: { from: Date; to: Date }, align: (d: Date, up?: boolean) => Date): [Date, Date] {
  return [align(span.from), align(span.to, true)];
}

const saveCursor = (run: StreamRun, cursor: unknown) => storeCheckpoint(run, { cursor });
const editCursor = (run: StreamRun, edit: CursorEdit) => storeCheckpoint(run, { edit });

/** A checkpoint with no rows of its own. */
async function storeCheckpoint(run: StreamRun, checkpoint: CheckpointWrite): Promise<void> {
  await writePage(run.ctx.warehouse, {
    target: targetOf(run.stream),
    stream: run.stream.name,
    companyKey: run.ctx.companyKey,
    items: [],
    syncedAt: run.syncedAt,
    checkpoint: { partition: run.partition.key, ...checkpoint },
  });
}

function targetOf(stream: StreamDef): Target {
  return targets[stream.target];
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
  return new SourceError(e.kind, message, { status: e.status, code: e.code, endpoint: e.endpoint, fields: e.fields, cause: e });
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Assignments starting within a minute of a named start are read again: a start instant names few of them. */
const INSTANT_MS = 60_000;

async function runChangeDriven(run: StreamRun, s: ChangeDriven): Promise<void> {
  const { ctx, stream } = run;
  const signpost = ctx.now();
  const previous = await cursorOf(run, ChangeCursor);
  // The horizon moves a whole day at a time: one read a day brings the next day in, not a sliver each run.
  const horizon = startOfDayUtc(addDays(signpost, s.forwardDays + 1));
  const backfillFrom = addDays(signpost, -s.backfillDays);
  const spec: WindowSpec = { start: s.start, end: s.end, deleteMissing: { startColumn: s.startColumn } };
  const sliceMs = s.sliceDays * DAY_MS;
  const changesAfter = (await settledBefore(ctx.warehouse, ctx.companyKey, s.changes.stream)).toISOString();
  // A backfill reads every day after the changes stamped before it began (give or take how late a stamp can be).
  const changesFrom = previous?.changesFrom ?? (!previous?.horizon ? addMs(signpost, -changeLateMs(s)).toISOString() : undefined);
  const base = {
    version: 2 as const,
    changesAfter: previous?.changesAfter,
    ...(changesFrom ? { changesFrom } : {}),
    horizon: previous?.horizon,
    rereads: previous?.rereads ?? {},
  };
  let rereadsDone: Reread | 'all' | undefined;
  const pass = previous?.pass ?? (!previous?.horizon ? newPass('backfill', backfillFrom, horizon) : undefined);
  const reread = pass ? undefined : dueReread(s.rereads, previous?.rereads, signpost);
  if (pass || reread) {
    const p = pass ?? newPass(reread!.name, ...spanOf(rereadSpan(reread!, signpost, backfillFrom, horizon), (d) => d));
    const read = () => readPass(run, p, sliceMs, p.name === 'backfill' ? 'backfill' : 'incremental', spec, (x) => ({ ...base, pass: x }) satisfies ChangeCursor);
    await (p.name === 'backfill' ? read() : rereading(run, p.name, read));
    rereadsDone = p.name === 'backfill' ? 'all' : (s.rereads ?? []).find((r) => r.name === p.name);
  }
  if (previous?.horizon && !pass) {
    const target = targetOf(stream);
    const changes = previous.changesAfter
      ? await changesArrivedSince(ctx.warehouse, s.changes, ctx.companyKey, new Date(previous.changesAfter), previous.changesFrom ? new Date(previous.changesFrom) : undefined)
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
    await readWindows(run, windows.flatMap((w) => slice(w, sliceMs)), 'incremental', spec);
  }
  const cursor: ChangeCursor = {
    ...base,
    changesAfter,
    horizon: horizon.toISOString(),
    rereads: rereadsAfter(s.rereads, previous?.rereads, rereadsDone, signpost),
  };
  await saveCursor(run, cursor);
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
export async function readsDependencies(ctx: SyncContext, stream: StreamDef, opts: RunOptions = {}): Promise<boolean> {
  if (stream.strategy.kind !== 'change-driven') return true;
  if (opts.fullRefresh) return false;
  for (const partition of partitionsOf(stream, ctx)) {
    const stored = await readCheckpoint(ctx.warehouse, ctx.companyKey, stream.name, partition.key);
    if (parseCursor(ChangeCursor, stored, { stream: stream.name, partition: partition.key })?.horizon) return true;
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
    table: targetOf(run.stream).table,
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
  const target = targetOf(stream);
  const from = addDays(signpost, -s.openWhile.maxDays);
  const seen = newSeen();
  await readAll(run, { [s.start]: from, [s.end]: addDays(signpost, 1), [s.openWhile.param]: true }, 'incremental', { seen });
  const open = await liveRows(
    ctx.warehouse,
    { target, companyKey: ctx.companyKey, notNull: [s.openWhile.set], where: { [s.openWhile.unset]: null }, since: { column: s.startColumn, from } },
    [...target.key, s.startColumn],
  );
  return open.filter((r) => !seen.keys.has(keyText(r, target.key))).map((r) => new Date(String(r[s.startColumn])));
}

async function runStatusDriven(run: StreamRun, s: StatusDriven): Promise<void> {
  const { ctx } = run;
  const signpost = ctx.now();
  const previous = await cursorOf(run, StatusCursor);
  const horizon = addDays(signpost, s.forwardDays);
  const from = previous?.from ? new Date(previous.from) : addDays(signpost, -s.backfillDays);
  const spec: WindowSpec = { start: s.start, end: s.end, deleteMissing: s.deleteMissing };
  // Requests are filtered by start and by end, so a slice would lose requests that straddle it: one slice.
  const whole = 100_000 * DAY_MS;
  const base = { version: 2 as const, from: from.toISOString(), rereads: previous?.rereads ?? {} };
  let rereadsDone: Reread | 'all' | undefined;
  const pass = previous?.pass ?? (!previous?.from ? newPass('backfill', from, horizon) : undefined);
  const reread = pass ? undefined : dueReread(s.rereads, previous?.rereads, signpost);
  if (pass || reread) {
    const p = pass ?? newPass(reread!.name, ...spanOf(rereadSpan(reread!, signpost, from, horizon), (d) => d));
    const read = () => readPass(run, p, whole, p.name === 'backfill' ? 'backfill' : 'incremental', spec, (x) => ({ ...base, pass: x }) satisfies StatusCursor);
    await (p.name === 'backfill' ? read() : rereading(run, p.name, read));
    rereadsDone = p.name === 'backfill' ? 'all' : (s.rereads ?? []).find((r) => r.name === p.name);
  }
  // A re-read just read its span whole: only open records outside it that the open list misses are looked for.
  const covered = reread ? rereadSpan(reread, signpost, from, horizon) : undefined;
  if (previous?.from && !pass) await readDecisions(run, s, { start: from, end: horizon }, covered && { start: covered.from, end: covered.to });
  const cursor: StatusCursor = { ...base, rereads: rereadsAfter(s.rereads, previous?.rereads, rereadsDone, signpost) };
  await saveCursor(run, cursor);
}

/**
 * The open records (Pending) are read with the status filter; those the warehouse holds as open that it no
 * longer returns were decided (or deleted). They are read with the decided statuses over their own periods,
 * merged into the fewest paged reads the records between them allow; one that no read returns is gone.
 */
async function readDecisions(run: StreamRun, s: StatusDriven, span: Window, covered?: Window): Promise<void> {
  const { ctx, stream } = run;
  const target = targetOf(stream);
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
    .map((r) => ({ key: r, start: new Date(String(r[s.deleteMissing.startColumn])), end: new Date(String(r[endColumn])) }))
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
  await forEachLimited(windows, ctx.windowConcurrency ?? 4, async (w) => {
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
  run.counters.deleted += await markDeletedByKey(ctx.warehouse, { target, companyKey: ctx.companyKey, keys: gone.map((r) => r.key) });
}

/** Reads the open records over the periods of `records`, merged as decisions are; returns the keys it found. */
async function readOpen(run: StreamRun, s: StatusDriven, records: readonly { start: Date; end: Date }[]): Promise<Seen> {
  const { ctx } = run;
  const own = records.map((r) => ({ start: r.start, end: addMs(r.end, 1000) }));
  const starts = await startsBetween(ctx.warehouse, {
    table: targetOf(run.stream).table,
    column: s.deleteMissing.startColumn,
    companyKey: ctx.companyKey,
    from: new Date(Math.min(...own.map((w) => w.start.getTime()))),
    to: new Date(Math.max(...own.map((w) => w.end.getTime()))),
    whereIn: { column: s.statusColumn, values: [s.open] },
  });
  const found = newSeen();
  await forEachLimited(mergeByCost(own, (w) => countIn(starts, w), PAGE_LIMIT_MAX), ctx.windowConcurrency ?? 4, async (w) => {
    await readWindow(run, w, 'incremental', { start: s.start, end: s.end, query: { [s.statusParam]: [s.open] }, collect: found });
  });
  return found;
}
