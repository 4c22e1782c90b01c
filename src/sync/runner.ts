import { finishRun } from '../warehouse/index.ts';
import { beat, findResumption, HEARTBEAT_MS, markInterruptedRuns, openRun } from '../warehouse/runs.ts';
import { isConnectionError, retryThroughOutage } from '../warehouse/outage.ts';
import { isFencedOff } from '../warehouse/fencing.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { streamRun, type RequestEvent, type RequestOutcome } from '../observers.ts';
import { runStream } from './engine.ts';
import { emptyCounters, type RunOptions, type StreamCounters, type SyncContext } from './context.ts';
import { readsDependencies } from './strategies/change-driven.ts';
import { partitionsOf, streamByName, streams, type StreamDef } from './streams.ts';

export interface StreamOutcome extends StreamCounters {
  stream: string;
  /** `interrupted`: shutdown began (or the process died) before the stream ended; it goes on from its checkpoint. */
  outcome: 'ok' | 'failed' | 'interrupted';
  error?: string;
  durationMs: number;
  /** Its pages were refused: its run lost the job's lock to a later run (fencing.ts). */
  fencedOff?: boolean;
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
export function selectStreams(names?: readonly string[]): StreamDef[] {
  if (!names || names.length === 0) return [...streams];
  const wanted = new Set<string>();
  const add = (name: string) => {
    const s = streamByName(name);
    if (!s) throw new UnknownStreamError(`unknown stream "${name}"; streams: ${streams.map((x) => x.name).join(', ')}`);
    wanted.add(name);
    s.dependsOn?.forEach(add);
  };
  names.forEach(add);
  return streams.filter((s) => wanted.has(s.name));
}

/**
 * Reads kept going at once across the streams of a run: enough that requests wait for the limiter while the
 * service answers and pages are written (each read asks for its next page while it writes one), so a compressed
 * or fast budget is used whole; the limiter holds them to the budget however many there are. Each read holds
 * its pages in memory: at `small`, 4 reads peaked at 271 MB RSS, 8 at 296 and 16 at about 320 (no heap limit).
 */
export const READS_AT_ONCE = 8;

/** How many reads a stream keeps going at once, at most: a window or a partition at a time each, or one. */
function readsOf(ctx: SyncContext, s: StreamDef): number {
  const lanes = ctx.windowConcurrency ?? 4;
  const windows = s.strategy.kind === 'windowed' || s.strategy.kind === 'change-driven' ? lanes : 1;
  return Math.max(windows, Math.min(partitionsOf(s, ctx).length, lanes));
}

/**
 * Runs streams concurrently (so the request budget is used while the service is slow), starting streams in
 * catalog order while the reads they keep going stay under `reads` (READS_AT_ONCE), a stream only after the
 * streams it depends on. One failing stream does not stop the others; once the context's signal is aborted
 * (shutdown), no stream starts.
 */
export async function runStreams(
  ctx: SyncContext,
  selected: readonly StreamDef[],
  opts: RunOptions & { reads?: number } = {},
): Promise<SyncSummary> {
  const started = Date.now();
  await ctx.refreshClock?.();
  await markInterruptedRuns(ctx.warehouse, openRunIds(ctx.warehouse)).catch((err: unknown) =>
    ctx.log.warn({ err }, 'could not look for runs interrupted by a process that ended'),
  );
  const resumed = opts.fullRefresh ? undefined : await resumptionOf(ctx, selected);
  const syncStartedAt = resumed?.since ?? new Date(started);
  const done = new Map<string, StreamOutcome>();
  const pending = selected.filter((s) => !resumed?.done.has(s.name));
  const running = new Map<string, Promise<void>>();
  const limit = opts.reads ?? READS_AT_ONCE;
  let reads = 0;
  const waits = await streamsThatWait(ctx, selected, opts);
  const ready = (s: StreamDef) =>
    !waits.has(s.name) || (s.dependsOn ?? []).every((d) => done.has(d) || resumed?.done.has(d) || !selected.some((x) => x.name === d));

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
        runOne(ctx, s, opts, syncStartedAt).then((o) => {
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
async function streamsThatWait(ctx: SyncContext, selected: readonly StreamDef[], opts: RunOptions): Promise<Set<string>> {
  const waits = new Set<string>();
  for (const s of selected) {
    if (!s.dependsOn?.length) continue;
    if (await readsDependencies(ctx, s, opts).catch(() => true)) waits.add(s.name);
  }
  return waits;
}

/** Tells the observers a stream ended. */
function reportStream(ctx: SyncContext, o: StreamOutcome): void {
  const { stream, outcome, durationMs, rows, rejects, deleted, requests } = o;
  ctx.observers?.emit('stream', { company: ctx.companyKey, stream, outcome, durationMs, rows, rejects, deleted, requests, at: Date.now() });
}

/** A stream is run again from its checkpoint at most this many times when the warehouse went away under it. */
const OUTAGE_RERUNS = 3;

/**
 * The interrupted sync this one goes on with (a SIGKILLed `sync --once` run again, a stalled job taken up again):
 * the streams it read through are not read again.
 */
async function resumptionOf(ctx: SyncContext, selected: readonly StreamDef[]) {
  const found = await findResumption(ctx.warehouse, ctx.companyKey, selected.map((s) => s.name)).catch((err: unknown) => {
    ctx.log.warn({ err }, 'could not look for an interrupted sync to resume; every stream is read');
    return undefined;
  });
  if (found && found.done.size > 0) {
    ctx.log.info({ since: found.since.toISOString(), done: [...found.done] }, 'resuming an interrupted sync: the streams it finished are not read again');
  }
  return found;
}

async function runOne(ctx: SyncContext, stream: StreamDef, opts: RunOptions, syncStartedAt: Date): Promise<StreamOutcome> {
  const started = Date.now();
  // pino repeats a key bound twice: add company only where the context's logger does not carry it yet.
  const log = ctx.log.child(ctx.log.bindings().company === undefined ? { stream: stream.name, company: ctx.companyKey } : { stream: stream.name });
  const wh = ctx.warehouse;
  const runId = await retryThroughOutage(() => openRun(wh, { companyKey: ctx.companyKey, stream: stream.name, syncStartedAt }), wh.outage);
  const release = holdRun(wh, runId);
  log.info({ runId, fullRefresh: !!opts.fullRefresh }, 'stream started');
  const counters = emptyCounters();
  const requests = countRequests(stream.name);
  const finish = async (outcome: StreamOutcome) => {
    release();
    Object.assign(outcome, { requests: requests.total(), requestsByOutcome: requests.byOutcome });
    await retryThroughOutage(() => finishRun(wh, runId, outcome), wh.outage).catch((err: unknown) =>
      log.error({ err, runId }, 'could not record the end of the run'),
    );
    reportStream(ctx, outcome);
    return outcome;
  };
  try {
    for (let rerun = 0; ; rerun++) {
      try {
        await requests.within(() => runStream({ ...ctx, log }, stream, { ...opts, runId }, counters));
        break;
      } catch (e) {
        if (!isConnectionError(e) || rerun >= OUTAGE_RERUNS || ctx.signal?.aborted) throw e;
        log.warn({ err: { message: (e as Error).message } }, 'the warehouse went away during the stream; it runs again from its checkpoint');
        await retryThroughOutage(() => wh.sql`select 1`, wh.outage);
      }
    }
    const outcome = await finish({ stream: stream.name, outcome: 'ok', ...counters, durationMs: Date.now() - started });
    const { stream: _bound, ...fields } = outcome;
    log.info(fields, 'stream finished');
    return outcome;
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    const fencedOff = isFencedOff(e);
    const interrupted = !!ctx.signal?.aborted || fencedOff;
    const outcome = await finish({
      stream: stream.name,
      outcome: interrupted ? 'interrupted' : 'failed',
      ...(fencedOff ? { fencedOff } : {}),
      error,
      ...counters,
      durationMs: Date.now() - started,
    });
    if (fencedOff) log.warn({ runId }, 'stream stopped: its run lost the lock to a later run, and Postgres refused its page');
    else if (interrupted) log.info({ runId }, 'stream interrupted by shutdown; it goes on from its checkpoint next time');
    else log.error({ err: e }, 'stream failed');
    return outcome;
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

/** Open runs of this process, per warehouse, kept beating while they go on. */
const held = new WeakMap<Warehouse, { ids: Set<number>; timer?: NodeJS.Timeout }>();

function openRunIds(wh: Warehouse): ReadonlySet<number> {
  return held.get(wh)?.ids ?? new Set();
}

function holdRun(wh: Warehouse, id: number): () => void {
  let h = held.get(wh);
  if (!h) held.set(wh, (h = { ids: new Set() }));
  const entry = h;
  entry.ids.add(id);
  if (!entry.timer) {
    entry.timer = setInterval(() => void beat(wh, [...entry.ids]).catch(() => undefined), HEARTBEAT_MS);
    entry.timer.unref();
  }
  return () => {
    entry.ids.delete(id);
    if (entry.ids.size === 0 && entry.timer) {
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
