import { finishRun, startRun } from '../warehouse/index.ts';
import { emptyCounters, runStream, type RunOptions, type StreamCounters, type SyncContext } from './engine.ts';
import { streamByName, streams, type StreamDef } from './streams.ts';

export interface StreamOutcome extends StreamCounters {
  stream: string;
  outcome: 'ok' | 'failed';
  error?: string;
  durationMs: number;
}

export interface SyncSummary {
  companyKey: string;
  streams: StreamOutcome[];
  requests: number;
  rows: number;
  rejects: number;
  failed: number;
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
 * Runs streams concurrently (so the request budget is used while the service is slow),
 * a stream only after the streams it depends on. One failing stream does not stop the others.
 */
export async function runStreams(
  ctx: SyncContext,
  selected: readonly StreamDef[],
  opts: RunOptions & { concurrency?: number } = {},
): Promise<SyncSummary> {
  const started = Date.now();
  await ctx.refreshClock?.();
  const done = new Map<string, StreamOutcome>();
  const pending = [...selected];
  const running = new Map<string, Promise<void>>();
  const limit = opts.concurrency ?? 4;
  const ready = (s: StreamDef) =>
    (s.dependsOn ?? []).every((d) => done.has(d) || !selected.some((x) => x.name === d));

  while (pending.length > 0 || running.size > 0) {
    while (running.size < limit) {
      const i = pending.findIndex(ready);
      if (i < 0) break;
      const s = pending.splice(i, 1)[0]!;
      running.set(
        s.name,
        runOne(ctx, s, opts).then((o) => {
          done.set(s.name, o);
          running.delete(s.name);
        }),
      );
    }
    if (running.size === 0) break;
    await Promise.race(running.values());
  }
  const outcomes = selected.map((s) => done.get(s.name)!).filter(Boolean);
  return summarize(ctx.companyKey, outcomes, Date.now() - started);
}

/** Tells the observers a stream ended. */
function reportStream(ctx: SyncContext, o: StreamOutcome): void {
  const { stream, outcome, durationMs, rows, rejects, deleted, requests } = o;
  ctx.observers?.emit('stream', { company: ctx.companyKey, stream, outcome, durationMs, rows, rejects, deleted, requests, at: Date.now() });
}

async function runOne(ctx: SyncContext, stream: StreamDef, opts: RunOptions): Promise<StreamOutcome> {
  const started = Date.now();
  // pino repeats a key bound twice: add company only where the context's logger does not carry it yet.
  const log = ctx.log.child(ctx.log.bindings().company === undefined ? { stream: stream.name, company: ctx.companyKey } : { stream: stream.name });
  const runId = await startRun(ctx.warehouse, { companyKey: ctx.companyKey, stream: stream.name });
  log.info({ runId, fullRefresh: !!opts.fullRefresh }, 'stream started');
  const counters = emptyCounters();
  try {
    await runStream({ ...ctx, log }, stream, { ...opts, runId }, counters);
    const outcome: StreamOutcome = { stream: stream.name, outcome: 'ok', ...counters, durationMs: Date.now() - started };
    await finishRun(ctx.warehouse, runId, outcome);
    reportStream(ctx, outcome);
    const { stream: _bound, ...fields } = outcome;
    log.info(fields, 'stream finished');
    return outcome;
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    const outcome: StreamOutcome = {
      stream: stream.name,
      outcome: 'failed',
      error,
      ...counters,
      durationMs: Date.now() - started,
    };
    await finishRun(ctx.warehouse, runId, outcome).catch(() => undefined);
    reportStream(ctx, outcome);
    log.error({ err: e }, 'stream failed');
    return outcome;
  }
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
    durationMs,
  };
}
