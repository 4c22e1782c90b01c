import { forEachLimited } from './windows.ts';
import { partitionsOf } from './partitions.ts';
import type { Strategy, StreamDef } from '../resources/stream.ts';
import { emptyCounters, type RunOptions, type StreamCounters, type StreamRun, type SyncContext } from './context.ts';
import { runFull } from './strategies/full.ts';
import { runSnapshot } from './strategies/snapshot.ts';
import { runUpdatedSince } from './strategies/updated-since.ts';
import { runWindowed } from './strategies/windowed.ts';
import { changeDrivenReadsDependencies, runChangeDriven } from './strategies/change-driven.ts';
import { runStatusDriven } from './strategies/status-driven.ts';
import { StreamProgress } from './estimate.ts';
import { reportProgress } from './progress-report.ts';

/** How one kind of stream is read. */
interface Reader<S extends Strategy> {
  read(run: StreamRun, s: S): Promise<void>;
  /**
   * Whether this run reads the rows of the streams the stream depends on, which must then be written first;
   * every kind does but the change-driven one, whose backfill reads every day itself.
   */
  readsDependencies?(ctx: SyncContext, stream: StreamDef, opts: RunOptions): Promise<boolean>;
}

/** How each kind of stream is read: a kind added to the catalog without a reader here does not compile. */
const readers: { [K in Strategy['kind']]: Reader<Extract<Strategy, { kind: K }>> } = {
  full: { read: runFull },
  snapshot: { read: runSnapshot },
  'updated-since': { read: runUpdatedSince },
  windowed: { read: runWindowed },
  'change-driven': { read: runChangeDriven, readsDependencies: changeDrivenReadsDependencies },
  'status-driven': { read: runStatusDriven },
};

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
    await forEachLimited(partitions, ctx.windowConcurrency ?? 4, async (partition) => {
      const run: StreamRun = { ctx, stream, partition, counters, tally: { requests: 0, rows: 0 }, syncedAt: new Date(), opts, progress: progress.counter(partition.key) };
      await readerOf(stream.strategy).read(run, stream.strategy);
      progress.finish(partition.key);
    });
  } finally {
    report.stop();
  }
  return counters;
}
