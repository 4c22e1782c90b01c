import type { ZodType } from 'zod';
import { forEachLimited } from './windows.ts';
import { ChangeCursor, SinceCursor, SnapshotCursor, StatusCursor, WindowCursor } from './cursors.ts';
import { StreamCursor } from './stream-cursor.ts';
import { partitionsOf } from './partitions.ts';
import type { Strategy, StreamDef } from '../resources/stream.ts';
import {
  windowsAtOnce,
  emptyCounters,
  type RunOptions,
  type StreamCounters,
  type StreamRun,
  type SyncContext,
} from './context.ts';
import { runFull } from './strategies/full.ts';
import { runSnapshot } from './strategies/snapshot.ts';
import { runUpdatedSince } from './strategies/updated-since.ts';
import { runWindowed } from './strategies/windowed.ts';
import { changeDrivenReadsDependencies, runChangeDriven } from './strategies/change-driven.ts';
import { runStatusDriven } from './strategies/status-driven.ts';
import { StreamProgress } from './estimate.ts';
import { reportProgress } from './progress-report.ts';

/**
 * How one kind of stream is read, in one lifecycle for every kind: its state is loaded (the stored cursor, in
 * `state`'s format), `read` plans the slices and passes that state and the strategy say are owed and reads them
 * (writing progress into the cursor page by page where a read can be resumed), and the state it answers is
 * stored when the partition is done.
 */
interface Reader<S extends Strategy, State = unknown> {
  /** The format of the state the stream keeps between runs (cursors.ts); none for a stream that keeps none. */
  state?: ZodType<State>;
  read(run: StreamRun, s: S, previous: State | undefined): Promise<State | undefined>;
  /**
   * Whether this run reads the rows of the streams the stream depends on, which must then be written first;
   * every kind does but the change-driven one, whose backfill reads every day itself.
   */
  readsDependencies?(ctx: SyncContext, stream: StreamDef, opts: RunOptions): Promise<boolean>;
}

/** How each kind of stream is read: a kind added to the catalog without a reader here does not compile. */
const readers: { [K in Strategy['kind']]: Reader<Extract<Strategy, { kind: K }>> } = {
  full: { read: runFull },
  snapshot: reader({ state: SnapshotCursor, read: runSnapshot }),
  'updated-since': reader({ state: SinceCursor, read: runUpdatedSince }),
  windowed: reader({ state: WindowCursor, read: runWindowed }),
  'change-driven': reader({
    state: ChangeCursor,
    read: runChangeDriven,
    readsDependencies: changeDrivenReadsDependencies,
  }),
  'status-driven': reader({ state: StatusCursor, read: runStatusDriven }),
};

/** Pairs a reader with the format of its state (the compiler checks they agree), for the table above. */
function reader<S extends Strategy, State>(r: Reader<S, State>): Reader<S> {
  return r as unknown as Reader<S>;
}

/** One partition through the lifecycle: load the state, read, store the state the read answers. */
async function readPartition<S extends Strategy>(run: StreamRun, r: Reader<S>, s: S): Promise<void> {
  const previous = r.state ? await run.cursor.load(r.state) : undefined;
  const next = await r.read(run, s, previous);
  if (next !== undefined) await run.cursor.save(next);
}

/** The reader of a stream's kind (TypeScript cannot pair an indexed member with its argument's member itself). */
function readerOf<S extends Strategy>(s: S): Reader<S> {
  return readers[s.kind] as unknown as Reader<S>;
}

/** Whether this run of `stream` reads the rows of the streams it depends on (Reader.readsDependencies). */
export async function readsDependencies(ctx: SyncContext, stream: StreamDef, opts: RunOptions = {}): Promise<boolean> {
  return (await readerOf(stream.strategy).readsDependencies?.(ctx, stream, opts)) ?? true;
}

/** Runs one stream over all its partitions; `counters` holds what was done even when it throws. */
export async function runStream(
  ctx: SyncContext,
  stream: StreamDef,
  opts: RunOptions = {},
  counters: StreamCounters = emptyCounters(),
): Promise<StreamCounters> {
  Object.assign(counters, { ...emptyCounters(), ...counters });
  const partitions = partitionsOf(stream, ctx);
  const progress = new StreamProgress(partitions.map((p) => p.key));
  const report = reportProgress(ctx, stream.name, progress, opts.runId);
  try {
    // Partitions keep checkpoints of their own: they are read side by side, like windows.
    await forEachLimited(partitions, windowsAtOnce(ctx), async (partition) => {
      const run = streamRun({ ctx, stream, partition, counters, opts, progress: progress.counter(partition.key) });
      await readPartition(run, readerOf(stream.strategy), stream.strategy);
      progress.finish(partition.key);
    });
  } finally {
    report.stop();
  }
  return counters;
}

/** One partition's run, with the cursor that owns its progress. */
export function streamRun({
  ctx,
  stream,
  partition,
  counters,
  opts,
  progress,
}: Pick<StreamRun, 'ctx' | 'stream' | 'partition' | 'counters' | 'opts' | 'progress'>): StreamRun {
  const syncedAt = new Date();
  const cursor = new StreamCursor({
    warehouse: ctx.warehouse,
    companyKey: ctx.companyKey,
    stream: stream.name,
    target: stream.target,
    partition: partition.key,
    syncedAt,
    fullRefresh: opts.fullRefresh,
    log: ctx.log,
    restarted: counters.cursorsRestarted,
  });
  return {
    ctx,
    stream,
    partition,
    counters,
    tally: { requests: 0, rows: 0 },
    syncedAt,
    opts,
    cursor,
    ...(progress ? { progress } : {}),
  };
}
