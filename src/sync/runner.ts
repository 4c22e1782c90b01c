import { CompanyStopped } from './company-stopped.ts';
import { finishRun } from '../warehouse/runs.ts';
import type { STREAM_OUTCOMES } from '../warehouse/tables/bookkeeping.ts';
import {
  abandonEnd,
  beat,
  findResumption,
  freshRunStart,
  HEARTBEAT_MS,
  markInterruptedRuns,
  openRun,
  type RunKey,
  runOpening,
} from '../warehouse/runs.ts';
import { localStreamLocks, type StreamLocks } from '../locks/stream-lock.ts';
import type { RunLock } from '../locks/run-lock.ts';
import { isConnectionError, retryThroughOutage } from '../warehouse/outage.ts';
import { isFencedOff } from '../warehouse/fencing.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { streamRun, type RequestEvent, type RequestOutcome } from '../observers.ts';
import { readsDependencies, runStream } from './engine.ts';
import { windowsAtOnce, emptyCounters, type RunOptions, type StreamCounters, type SyncContext } from './context.ts';
import { partitionsOf } from './partitions.ts';
import { streamByName, streamDependencies, streams, type Stream } from '../resources/index.ts';
import type { StreamDef } from '../resources/stream.ts';

export interface StreamOutcome extends StreamCounters {
  stream: string;
  /**
   * `interrupted`: shutdown began (or the process died) before the stream ended; it goes on from its checkpoint.
   * `off`: the company turned the stream off; it was not read and no run is recorded.
   */
  outcome: (typeof STREAM_OUTCOMES)[number];
  error?: string;
  durationMs: number;
  /** Its pages were refused: its run lost the job's lock to a later run (fencing.ts). */
  fencedOff?: boolean;
  /** Not read: the run of it that started then is fresh enough for this one (see `FreshEnough`); no run is recorded. */
  freshFrom?: string;
  /** Every HTTP attempt the stream sent, retries included, by how it ended (`requests` is their sum). */
  requestsByOutcome?: Partial<Record<RequestOutcome, number>>;
}

export interface SyncSummary {
  companyKey: string;
  streams: StreamOutcome[];
  requests: number;
  rows: number;
  rejects: number;
  failed: number;
  interrupted: number;
  durationMs: number;
}

export class UnknownStreamError extends Error {
  override readonly name = 'UnknownStreamError';
}

/** The streams named (all when none), with the streams they depend on, in catalog order. */
export function selectStreams(names?: readonly string[]): Stream[] {
  if (!names || names.length === 0) return [...streams];
  const unknown = names.find((n) => !streamByName(n));
  if (unknown !== undefined)
    throw new UnknownStreamError(`unknown stream "${unknown}"; streams: ${streams.map((x) => x.name).join(', ')}`);
  const wanted = new Set([...names, ...streamDependencies.dependenciesOf(names)]);
  return streams.filter((s) => wanted.has(s.name));
}

/**
 * Reads kept going at once across the streams of a run: enough that requests wait for the limiter while the
 * service answers and pages are written (each read asks for its next page while it writes one), so a compressed
 * or fast budget is used whole; the limiter holds them to the budget however many there are. Each read holds
 * its pages in memory, so more reads at once raise the peak of a first sync (docs/performance.md).
 */
export const READS_AT_ONCE = 8;

/** How many reads a stream keeps going at once, at most: a window or a partition at a time each, or one. */
function readsOf(ctx: SyncContext, s: StreamDef): number {
  const lanes = windowsAtOnce(ctx);
  const windows = s.strategy.kind === 'windowed' || s.strategy.kind === 'change-driven' ? lanes : 1;
  return Math.max(windows, Math.min(partitionsOf(s, ctx).length, lanes));
}

/**
 * Which reads a scheduled run may take from another run instead of reading again. A run of one of its streams
 * that started after the job fell due read what this one would. A stream the job reads only because one of its
 * streams depends on it is fresh enough within that stream's own bound (its own job's interval): what the job's
 * stream derives from it is then as fresh as between two runs of that job, the bound the README states.
 */
export interface FreshEnough {
  firedAt: Date;
  /** The bound of each stream the job reads only as a dependency. */
  dependencyBoundsMs?: Readonly<Record<string, number>>;
}

export interface RunStreamsOptions extends RunOptions {
  reads?: number;
  /** Who holds each stream of each company while a run reads it; default this process's own. */
  locks?: StreamLocks;
  /** Without it, every stream is read (a command run by hand, a first sync). */
  freshness?: FreshEnough;
}

/** The streams of runs in this process without other locks, shared by every run so they queue behind each other. */
const processLocks = localStreamLocks();

/**
 * Runs streams concurrently (so the request budget is used while the service is slow), starting streams in
 * catalog order while the reads they keep going stay under `reads` (READS_AT_ONCE), a stream only after the
 * streams it depends on. One failing stream does not stop the others; once the context's signal is aborted
 * (shutdown), no stream starts. A stream is read once this run holds it for the company (`locks`: a run of it by
 * another job is waited for, and its result taken when it is fresh enough, see `FreshEnough`). A stream the
 * company turned off is not read (no request, no run recorded): its outcome is `off`.
 */
export async function runStreams(
  ctx: SyncContext,
  selected: readonly StreamDef[],
  opts: RunStreamsOptions = {},
): Promise<SyncSummary> {
  const off = new Set(ctx.streamsOff ?? []);
  const offOutcomes = selected
    .filter((s) => off.has(s.name))
    .map((s): StreamOutcome => ({ stream: s.name, outcome: 'off', ...emptyCounters(), durationMs: 0 }));
  if (offOutcomes.length === selected.length) return summarize(ctx.companyKey, offOutcomes, 0);
  const summary = await runOn(
    ctx,
    selected.filter((s) => !off.has(s.name)),
    opts,
  );
  const byName = new Map([...offOutcomes, ...summary.streams].map((o) => [o.stream, o]));
  const outcomes = selected.flatMap((s) => byName.get(s.name) ?? []);
  return summarize(ctx.companyKey, outcomes, summary.durationMs);
}

/** runStreams over the streams the company has on. */
async function runOn(ctx: SyncContext, selected: readonly StreamDef[], opts: RunStreamsOptions): Promise<SyncSummary> {
  const started = Date.now();
  await ctx.refreshClock?.();
  await markInterruptedRuns(ctx.warehouse, openRunIds(ctx.warehouse), ctx.companyKey).catch((err: unknown) =>
    ctx.log.warn({ err }, 'could not look for runs interrupted by a process that ended'),
  );
  const resumed = opts.fullRefresh ? undefined : await resumptionOf(ctx, selected);
  const syncStartedAt = resumed?.since ?? new Date(started);
  const done = new Map<string, StreamOutcome>();
  const pending = selected.filter((s) => !resumed?.done.has(s.name));
  const running = new Map<string, Promise<void>>();
  const { reads: readsAtOnce, locks = processLocks, freshness, ...runOpts } = opts;
  const limit = readsAtOnce ?? READS_AT_ONCE;
  let reads = 0;
  const waits = await streamsThatWait(ctx, selected, runOpts);
  const ready = (s: StreamDef) =>
    !waits.has(s.name) ||
    streamDependencies
      .dependsOn(s.name)
      .every((d) => done.has(d) || resumed?.done.has(d) || !selected.some((x) => x.name === d));

  while (pending.length > 0 || running.size > 0) {
    // A run fenced off has lost its job to a later run: it starts nothing more.
    while (reads < limit && !ctx.signal?.aborted && ![...done.values()].some((o) => o.fencedOff)) {
      const i = pending.findIndex(ready);
      if (i < 0) break;
      const s = pending.splice(i, 1)[0]!;
      const width = readsOf(ctx, s);
      reads += width;
      running.set(
        s.name,
        claimAndRun(ctx, s, runOpts, syncStartedAt, { locks, freshness }).then((o) => {
          done.set(s.name, o);
          running.delete(s.name);
          reads -= width;
        }),
      );
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  const outcomes = selected.map((s) => done.get(s.name)!).filter(Boolean);
  return summarize(ctx.companyKey, outcomes, Date.now() - started);
}

/**
 * The streams of this run that must wait for the streams they depend on: those whose run reads their rows
 * (a change-driven backfill does not). A stream whose checkpoint cannot be read waits, and fails on its own.
 */
async function streamsThatWait(
  ctx: SyncContext,
  selected: readonly StreamDef[],
  opts: RunOptions,
): Promise<Set<string>> {
  const waits = new Set<string>();
  for (const s of selected) {
    if (streamDependencies.dependsOn(s.name).length === 0) continue;
    if (await readsDependencies(ctx, s, opts).catch(() => true)) waits.add(s.name);
  }
  return waits;
}

/** A run recorded in sync_runs ended (a stream not read, `off`, has none). */
type RunOutcome = StreamOutcome & { outcome: Exclude<StreamOutcome['outcome'], 'off'> };

/** Tells the observers a stream ended. */
function reportStream(ctx: SyncContext, o: RunOutcome): void {
  const { stream, outcome, durationMs, rows, rejects, deleted, requests } = o;
  ctx.observers?.emit('stream', {
    company: ctx.companyKey,
    stream,
    outcome,
    durationMs,
    rows,
    rejects,
    deleted,
    requests,
    at: Date.now(),
  });
}

/** A stream is run again from its checkpoint at most this many times when the warehouse went away under it. */
const OUTAGE_RERUNS = 3;

/**
 * The interrupted sync this one goes on with (a SIGKILLed `sync --once` run again, a stalled job taken up again):
 * the streams it read through are not read again.
 */
async function resumptionOf(ctx: SyncContext, selected: readonly StreamDef[]) {
  const found = await findResumption(
    ctx.warehouse,
    ctx.companyKey,
    selected.map((s) => s.name),
  ).catch((err: unknown) => {
    ctx.log.warn({ err }, 'could not look for an interrupted sync to resume; every stream is read');
    return undefined;
  });
  if (found && found.done.size > 0) {
    ctx.log.info(
      { since: found.since.toISOString(), done: [...found.done] },
      'resuming an interrupted sync: the streams it finished are not read again',
    );
  }
  return found;
}

/** The logger of one stream's run. pino repeats a key bound twice: company is added only where it is not bound yet. */
function streamLog(ctx: SyncContext, stream: StreamDef): SyncContext['log'] {
  return ctx.log.child(
    ctx.log.bindings().company === undefined
      ? { stream: stream.name, company: ctx.companyKey }
      : { stream: stream.name },
  );
}

/**
 * Reads the stream once this run holds it for the company (waiting for a run of another job that holds it),
 * unless a run that finished meanwhile, or earlier within its bound, is fresh enough (`FreshEnough`).
 */
async function claimAndRun(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions,
  syncStartedAt: Date,
  claim: { locks: StreamLocks; freshness?: FreshEnough },
): Promise<StreamOutcome> {
  const started = Date.now();
  const log = streamLog(ctx, stream);
  let lock: RunLock;
  try {
    lock = await claim.locks.take(ctx.companyKey, stream.name, {
      signal: ctx.signal,
      onWait: (heldBy) => log.info({ heldBy }, 'another run is reading this stream; this one waits for it'),
    });
  } catch (e) {
    const outcome = { stream: stream.name, ...emptyCounters(), durationMs: Date.now() - started };
    if (ctx.signal?.aborted)
      return { ...outcome, outcome: 'interrupted', error: 'shutdown began before the stream started' };
    log.error({ err: e }, 'could not take the stream for this run; it is not read');
    return { ...outcome, outcome: 'failed', error: `could not take the stream for this run: ${(e as Error).message}` };
  }
  try {
    const from = await freshRead(ctx, stream, opts, claim.freshness);
    if (from) {
      log.info({ freshFrom: from.toISOString() }, 'stream not read: its run that started then is fresh enough');
      return {
        stream: stream.name,
        outcome: 'ok',
        ...emptyCounters(),
        durationMs: Date.now() - started,
        freshFrom: from.toISOString(),
      };
    }
    return await runOne(ctx, stream, opts, syncStartedAt, lock.lost);
  } finally {
    await lock.release();
  }
}

/** When the run this one takes the result of started, if there is one (see `FreshEnough`). */
async function freshRead(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions,
  freshness?: FreshEnough,
): Promise<Date | undefined> {
  if (!freshness) return undefined;
  const bound = freshness.dependencyBoundsMs?.[stream.name];
  // A full refresh re-reads its own streams whatever ran since.
  if (opts.fullRefresh && bound === undefined) return undefined;
  const query = { companyKey: ctx.companyKey, stream: stream.name, since: freshness.firedAt, withinMs: bound ?? 0 };
  return freshRunStart(ctx.warehouse, query).catch((err: unknown) => {
    ctx.log.warn({ err, stream: stream.name }, 'could not look for a fresh run of the stream; it is read');
    return undefined;
  });
}

/** Reads one stream and records its run; it stops when `lost` says another run may hold the stream now. */
async function runOne(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions,
  syncStartedAt: Date,
  lost: AbortSignal,
): Promise<StreamOutcome> {
  const started = Date.now();
  const turnedOff = ctx.streamStopped?.(stream.name);
  const signal = AbortSignal.any([ctx.signal, lost, turnedOff].filter((x): x is AbortSignal => x !== undefined));
  const log = streamLog(ctx, stream);
  // Turned off after this run began, before the run reached the stream.
  if (turnedOff?.aborted) return { stream: stream.name, outcome: 'off', ...emptyCounters(), durationMs: 0 };
  const wh = ctx.warehouse;
  const runId = await openStreamRun(ctx, stream, syncStartedAt, signal);
  if (runId === undefined) {
    const error = ctx.signal?.aborted
      ? 'shutdown began before the stream started'
      : 'its lock on the stream expired before the stream started';
    return { stream: stream.name, outcome: 'interrupted', error, ...emptyCounters(), durationMs: Date.now() - started };
  }
  const run = { companyKey: ctx.companyKey, id: runId };
  const release = holdRun(wh, run);
  log.info({ runId, fullRefresh: !!opts.fullRefresh }, 'stream started');
  const counters = emptyCounters();
  const requests = countRequests(stream.name);
  const finish = async (outcome: RunOutcome) => {
    release();
    Object.assign(outcome, { requests: requests.total(), requestsByOutcome: requests.byOutcome });
    await retryThroughOutage(() => finishRun(wh, run, outcome), wh.outage).catch((err: unknown) => {
      abandonEnd(wh, runId);
      log.error({ err, runId }, 'could not record the end of the run');
    });
    reportStream(ctx, outcome);
    return outcome;
  };
  try {
    for (let rerun = 0; ; rerun++) {
      try {
        await requests.within(() => runStream({ ...ctx, log, signal }, stream, { ...opts, runId }, counters));
        break;
      } catch (e) {
        if (!isConnectionError(e) || rerun >= OUTAGE_RERUNS || signal.aborted) throw e;
        log.warn(
          { err: { message: (e as Error).message } },
          'the warehouse went away during the stream; it runs again from its checkpoint',
        );
        await retryThroughOutage(() => wh.sql`select 1`, wh.outage);
      }
    }
    const outcome = await finish({ stream: stream.name, outcome: 'ok', ...counters, durationMs: Date.now() - started });
    const { stream: _bound, ...fields } = outcome;
    log.info(fields, 'stream finished');
    return outcome;
  } catch (e) {
    const fencedOff = isFencedOff(e);
    const interrupted = !!ctx.signal?.aborted || fencedOff || !!turnedOff?.aborted;
    const lockLost = !interrupted && lost.aborted;
    // A run stopped because its company was paused or removed, or the stream turned off, says so, not what the stop cut short.
    const stoppedBy = [ctx.signal, turnedOff].find((x) => x?.aborted && x.reason instanceof CompanyStopped)?.reason
      .message as string | undefined;
    const error = lockLost
      ? 'its lock on the stream expired while Redis was out of reach'
      : (stoppedBy ?? (e instanceof Error ? e.message : String(e)));
    const outcome = await finish({
      stream: stream.name,
      outcome: interrupted ? 'interrupted' : 'failed',
      ...(fencedOff ? { fencedOff } : {}),
      error,
      ...counters,
      durationMs: Date.now() - started,
    });
    if (fencedOff)
      log.warn({ runId }, 'stream stopped: its run lost the lock to a later run, and Postgres refused its page');
    else if (interrupted)
      log.info(
        { runId },
        stoppedBy
          ? `stream stopped: ${stoppedBy}; it goes on from its checkpoint next time`
          : 'stream interrupted by shutdown; it goes on from its checkpoint next time',
      );
    else if (lockLost)
      log.warn(
        { runId },
        'stream stopped: its lock expired while Redis was out of reach, and another run may read it now',
      );
    else log.error({ err: e }, 'stream failed');
    return outcome;
  }
}

/**
 * Opens the stream's run, or none once the run is told to stop (undefined): a run opened after its process began
 * to stop, its insert having waited for a Postgres that restarted, could outlive the warehouse. While it is being
 * opened a stopping process keeps the warehouse open (runs.ts `runOpening`).
 */
async function openStreamRun(
  ctx: SyncContext,
  stream: StreamDef,
  syncStartedAt: Date,
  signal: AbortSignal,
): Promise<number | undefined> {
  if (signal.aborted) return undefined;
  const wh = ctx.warehouse;
  const opened = runOpening(wh);
  try {
    return await retryThroughOutage(
      () => openRun(wh, { companyKey: ctx.companyKey, stream: stream.name, syncStartedAt }),
      { ...wh.outage, signal },
    );
  } catch (e) {
    if (signal.aborted) return undefined;
    throw e;
  } finally {
    opened();
  }
}

/** The HTTP attempts of one stream run, retries included, heard through the run's context (observers.ts `streamRun`). */
interface RequestCount {
  byOutcome: Partial<Record<RequestOutcome, number>>;
  total(): number;
  within<T>(fn: () => Promise<T>): Promise<T>;
}

function countRequests(stream: string): RequestCount {
  const byOutcome: Partial<Record<RequestOutcome, number>> = {};
  const onRequest = (e: RequestEvent) => {
    byOutcome[e.outcome] = (byOutcome[e.outcome] ?? 0) + 1;
  };
  return {
    byOutcome,
    total: () => Object.values(byOutcome).reduce((n, x) => n + (x ?? 0), 0),
    within: (fn) => streamRun.run({ stream, onRequest }, fn),
  };
}

/** Open runs of this process, per warehouse (by id), kept beating while they go on. */
const held = new WeakMap<Warehouse, { runs: Map<number, RunKey>; timer?: NodeJS.Timeout }>();

function openRunIds(wh: Warehouse): ReadonlySet<number> {
  return new Set(held.get(wh)?.runs.keys());
}

function holdRun(wh: Warehouse, run: RunKey): () => void {
  let h = held.get(wh);
  if (!h) held.set(wh, (h = { runs: new Map() }));
  const entry = h;
  entry.runs.set(run.id, run);
  if (!entry.timer) {
    entry.timer = setInterval(() => void beat(wh, [...entry.runs.values()]).catch(() => undefined), HEARTBEAT_MS);
    entry.timer.unref();
  }
  return () => {
    entry.runs.delete(run.id);
    if (entry.runs.size === 0 && entry.timer) {
      clearInterval(entry.timer);
      entry.timer = undefined;
    }
  };
}

function summarize(companyKey: string, outcomes: StreamOutcome[], durationMs: number): SyncSummary {
  const sum = (k: 'requests' | 'rows' | 'rejects') => outcomes.reduce((n, o) => n + o[k], 0);
  return {
    companyKey,
    streams: outcomes,
    requests: sum('requests'),
    rows: sum('rows'),
    rejects: sum('rejects'),
    failed: outcomes.filter((o) => o.outcome === 'failed').length,
    interrupted: outcomes.filter((o) => o.outcome === 'interrupted').length,
    durationMs,
  };
}
