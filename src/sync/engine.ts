import type { Logger } from 'pino';
import { isSourceError, SourceError } from '../source/errors.ts';
import type { SourceClient } from '../source/client.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { targets } from '../warehouse/targets.ts';
import {
  markDeletedByKey,
  markMissingDeleted,
  readCheckpoint,
  writePage,
  type RangeFilter,
} from '../warehouse/index.ts';
import type { Lane } from '../ratelimit/types.ts';
import type { Observers } from '../observers.ts';
import {
  addDays,
  addMs,
  coalesce,
  daysOf,
  forEachLimited,
  halve,
  slice,
  spanMs,
  startOfDayUtc,
  HOUR_MS,
  DAY_MS,
  type Window,
} from './windows.ts';
import { partitionsOf, type ChangeDriven, type Partition, type StreamDef, type UpdatedSince, type Windowed } from './streams.ts';

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
  syncedAt: Date;
  opts: RunOptions;
}

export function emptyCounters(): StreamCounters {
  return { requests: 0, rows: 0, rejects: 0, deleted: 0 };
}

/** Runs one stream over all its partitions; `counters` holds what was done even when it throws. */
export async function runStream(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions = {},
  counters: StreamCounters = emptyCounters(),
): Promise<StreamCounters> {
  for (const partition of partitionsOf(stream, ctx)) {
    const run: StreamRun = { ctx, stream, partition, counters, syncedAt: new Date(), opts };
    const s = stream.strategy;
    if (s.kind === 'full' || s.kind === 'snapshot') await runFull(run);
    else if (s.kind === 'updated-since') await runUpdatedSince(run, s);
    else if (s.kind === 'windowed') await runWindowed(run, s);
    else await runChangeDriven(run, s);
  }
  return counters;
}

/** Reads every page of one query and writes each page (with the checkpoint on the last one, when given). */
async function readAll(
  run: StreamRun,
  query: Record<string, unknown>,
  lane: Lane,
  checkpoint?: unknown,
): Promise<void> {
  const { ctx, stream, partition, counters } = run;
  const pages = ctx.client.pages(stream.endpoint, { ...stream.fixed, ...partition.query, ...query } as never, {
    lane: stream.lane ?? lane,
    signal: ctx.signal,
  });
  for await (const page of pages) {
    counters.requests++;
    const result = await writePage(ctx.warehouse, {
      target: targetOf(stream),
      stream: stream.name,
      companyKey: ctx.companyKey,
      items: page.items as object[],
      extras: page.extras,
      rejects: page.rejects,
      syncedAt: run.syncedAt,
      runId: run.opts.runId,
      checkpoint: !page.hasMore && checkpoint !== undefined ? { partition: partition.key, cursor: checkpoint } : undefined,
    });
    counters.rows += page.items.length;
    counters.rejects += page.rejects.length;
    counters.deleted += result.deleted;
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
}

async function markGone(run: StreamRun, range?: RangeFilter): Promise<void> {
  const { ctx, stream } = run;
  run.counters.deleted += await markMissingDeleted(ctx.warehouse, {
    target: targetOf(stream),
    companyKey: ctx.companyKey,
    notSyncedSince: run.syncedAt,
    range,
    partition: partitionFilter(run),
  });
}

/** Rows of a partitioned stream belong to their partition; a complete read of one says nothing of the others. */
function partitionFilter(run: StreamRun): Record<string, unknown> | undefined {
  return run.stream.partitions ? run.partition.query : undefined;
}

async function runFull(run: StreamRun): Promise<void> {
  await readAll(run, {}, 'incremental');
  await markGone(run);
}

interface SinceCursor {
  since: string;
}

async function runUpdatedSince(run: StreamRun, s: UpdatedSince): Promise<void> {
  const { ctx, stream, partition } = run;
  const signpost = ctx.now();
  const previous = run.opts.fullRefresh
    ? undefined
    : await readCheckpoint<SinceCursor>(ctx.warehouse, ctx.companyKey, stream.name, partition.key);
  const query: Record<string, unknown> = {};
  if (s.range) {
    query[s.range.start] = addDays(signpost, -s.range.backDays);
    query[s.range.end] = addDays(signpost, s.range.forwardDays);
  }
  if (previous) query[s.param] = sinceParam(new Date(previous.since), s);
  const cursor: SinceCursor = { since: signpost.toISOString() };
  await readAll(run, query, previous ? 'incremental' : 'backfill', cursor);
  // A read with no `since` is complete: what it did not return is gone (e.g. credentials of former employees).
  if (!previous) await markGone(run);
  else if (stream.coversIndividuals) await markUncovered(run, stream.coversIndividuals);
}

/** Rows of individuals the list no longer covers (now Former, say) leave it like rows a full read misses. */
async function markUncovered(run: StreamRun, covers: NonNullable<StreamDef['coversIndividuals']>): Promise<void> {
  const { sql, schema } = run.ctx.warehouse;
  const outside = await sql<{ service_id: number }[]>`
    select service_id from ${sql(schema)}.individuals
    where company_key = ${run.ctx.companyKey} and _deleted_at is null and status <> all(${[...covers.statuses]})`;
  if (outside.length === 0) return;
  run.counters.deleted += await markMissingDeleted(run.ctx.warehouse, {
    target: targetOf(run.stream),
    companyKey: run.ctx.companyKey,
    notSyncedSince: run.syncedAt,
    where: { [covers.column]: outside.map((r) => r.service_id) },
  });
}

function sinceParam(since: Date, s: UpdatedSince): Date {
  const back = addMs(since, -s.overlapMs);
  return s.precision === 'date' ? startOfDayUtc(back) : back;
}

interface WindowCursor {
  /** Everything before this instant has been read (append) or backfilled (reread). */
  until: string;
  backfilledFrom: string;
}

async function runWindowed(run: StreamRun, s: Windowed): Promise<void> {
  const { ctx, stream, partition } = run;
  const signpost = ctx.now();
  const previous = run.opts.fullRefresh
    ? undefined
    : await readCheckpoint<WindowCursor>(ctx.warehouse, ctx.companyKey, stream.name, partition.key);
  const horizon = addDays(signpost, s.forwardDays);
  const from = !previous
    ? addDays(signpost, -s.backfillDays)
    : s.mode === 'append'
      ? addDays(new Date(previous.until), -s.rollingDays)
      : addDays(signpost, -s.rollingDays);
  const lane: Lane = previous ? 'incremental' : 'backfill';
  await readWindows(run, slice({ start: from, end: horizon }, s.sliceDays * DAY_MS), lane, s);
  const cursor: WindowCursor = {
    until: horizon.toISOString(),
    backfilledFrom: previous?.backfilledFrom ?? from.toISOString(),
  };
  await saveCursor(run, cursor);
}

/** A checkpoint with no rows of its own, once every window it covers has been read. */
async function saveCursor(run: StreamRun, cursor: unknown): Promise<void> {
  await writePage(run.ctx.warehouse, {
    target: targetOf(run.stream),
    stream: run.stream.name,
    companyKey: run.ctx.companyKey,
    items: [],
    syncedAt: run.syncedAt,
    checkpoint: { partition: run.partition.key, cursor },
  });
}

/** Reads windows concurrently; a window refused or timed out is halved and both halves are read. */
async function readWindows(
  run: StreamRun,
  windows: Window[],
  lane: Lane,
  s: { start: string; end: string; deleteMissing?: Windowed['deleteMissing'] },
): Promise<void> {
  const readOne = async (w: Window): Promise<void> => {
    try {
      await readAll(run, { [s.start]: w.start, [s.end]: w.end }, lane);
    } catch (e) {
      if (!splittable(e)) throw e;
      const minimum = minSplitMs(run.stream, s.start);
      if (spanMs(w) <= minimum) throw refusedAtMinimum(run, w, e, minimum);
      run.ctx.log.warn({ stream: run.stream.name, window: w, err: describe(e) }, 'window refused; splitting it');
      for (const half of halve(w)) await readOne(half);
      return;
    }
    if (s.deleteMissing) {
      await markGone(run, {
        startColumn: s.deleteMissing.startColumn,
        endColumn: s.deleteMissing.endColumn,
        from: w.start,
        to: w.end,
      });
    }
  };
  await forEachLimited(windows, run.ctx.windowConcurrency ?? 4, readOne);
}

function targetOf(stream: StreamDef) {
  return targets[stream.target as keyof typeof targets];
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

interface ChangeCursor {
  /** Assignment changes up to this event time have been applied. */
  changesUntil: string;
  /** Assignments starting before this instant have been read. */
  horizon: string;
}

async function runChangeDriven(run: StreamRun, s: ChangeDriven): Promise<void> {
  const { ctx, stream, partition } = run;
  const signpost = ctx.now();
  const previous = run.opts.fullRefresh
    ? undefined
    : await readCheckpoint<ChangeCursor>(ctx.warehouse, ctx.companyKey, stream.name, partition.key);
  const horizon = addDays(signpost, s.forwardDays);
  const deleteMissing = { startColumn: s.startColumn };
  const windowed = { start: s.start, end: s.end, deleteMissing };
  if (!previous) {
    const all = { start: addDays(signpost, -s.backfillDays), end: horizon };
    await readWindows(run, slice(all, s.sliceDays * DAY_MS), 'backfill', windowed);
  } else {
    const changes = await changedRecords(run, s, new Date(previous.changesUntil));
    run.counters.deleted += await markDeletedByKey(ctx.warehouse, {
      target: targetOf(stream),
      companyKey: ctx.companyKey,
      keys: changes.deletedKeys.map((key) => ({ [s.changes.keyColumn]: key })),
    });
    const recent = { start: startOfDayUtc(addDays(signpost, -s.recentDays)), end: addDays(startOfDayUtc(signpost), 1) };
    const ahead = { start: new Date(previous.horizon), end: horizon };
    const open = await openDays(run, s, signpost);
    const windows = coalesce([...daysOf([...changes.days, ...open]), recent, ...(ahead.end > ahead.start ? [ahead] : [])]);
    await readWindows(run, windows.flatMap((w) => slice(w, s.sliceDays * DAY_MS)), 'incremental', windowed);
  }
  const changesUntil = await changesCoveredUntil(run, s, signpost);
  const cursor: ChangeCursor = { changesUntil, horizon: horizon.toISOString() };
  await saveCursor(run, cursor);
}

/** The change records synced since `since`: the days they touch and the keys of the records they deleted. */
async function changedRecords(run: StreamRun, s: ChangeDriven, since: Date): Promise<{ days: Date[]; deletedKeys: unknown[] }> {
  const { sql, schema } = run.ctx.warehouse;
  const c = s.changes;
  const rows = await sql<{ day: Date | null; deleted: boolean; key: unknown }[]>`
    select ${sql(c.dayColumn)} as day, ${sql(c.deleted.column)} = ${c.deleted.value} as deleted, ${sql(c.keyColumn)} as key
    from ${sql(schema)}.${sql(c.table)}
    where company_key = ${run.ctx.companyKey} and ${sql(c.eventColumn)} >= ${addMs(since, -HOUR_MS)}`;
  return {
    days: rows.flatMap((r) => (r.day ? [r.day] : [])),
    deletedKeys: rows.filter((r) => r.deleted).map((r) => r.key),
  };
}

/** Start days of rows the warehouse holds as still open (clocked in, not out): their clock-out is yet to come. */
async function openDays(run: StreamRun, s: ChangeDriven, signpost: Date): Promise<Date[]> {
  const { sql, schema } = run.ctx.warehouse;
  const table = targetOf(run.stream).table;
  const rows = await sql<{ day: Date }[]>`
    select distinct date_trunc('day', ${sql(s.startColumn)}, 'UTC') as day
    from ${sql(schema)}.${sql(table)}
    where company_key = ${run.ctx.companyKey} and _deleted_at is null
      and ${sql(s.openWhile.set)} is not null and ${sql(s.openWhile.unset)} is null
      and ${sql(s.startColumn)} >= ${addDays(signpost, -s.openWhile.maxDays)}`;
  return rows.map((r) => r.day);
}

/** Changes are applied up to where the stream of change records has read, never past this run's signpost. */
async function changesCoveredUntil(run: StreamRun, s: ChangeDriven, signpost: Date): Promise<string> {
  const changes = await readCheckpoint<WindowCursor>(run.ctx.warehouse, run.ctx.companyKey, s.changes.stream, '-');
  if (!changes) return signpost.toISOString();
  const until = new Date(changes.until);
  return (until < signpost ? until : signpost).toISOString();
}
