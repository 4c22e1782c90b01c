import { forEachLimited } from './windows.ts';
import { partitionsOf, type Strategy, type StreamDef } from './streams.ts';
import { emptyCounters, type RunOptions, type StreamCounters, type StreamRun, type SyncContext } from './context.ts';
import { runFull } from './strategies/full.ts';
import { runSnapshot } from './strategies/snapshot.ts';
import { runUpdatedSince } from './strategies/updated-since.ts';
import { runWindowed } from './strategies/windowed.ts';
import { runChangeDriven } from './strategies/change-driven.ts';
import { runStatusDriven } from './strategies/status-driven.ts';
import { StreamProgress } from './estimate.ts';
import { reportProgress } from './progress-report.ts';

/** How each kind of stream is read: a kind added to the catalog without a reader here does not compile. */
const readers: { [K in Strategy['kind']]: (run: StreamRun, s: Extract<Strategy, { kind: K }>) => Promise<void> } = {
  full: runFull,
  snapshot: runSnapshot,
  'updated-since': runUpdatedSince,
  windowed: runWindowed,
  'change-driven': runChangeDriven,
  'status-driven': runStatusDriven,
};

/** The reader of a stream's kind (TypeScript cannot pair an indexed function with its argument's member itself). */
function readerOf<S extends Strategy>(s: S): (run: StreamRun, s: S) => Promise<void> {
  return readers[s.kind] as (run: StreamRun, s: S) => Promise<void>;
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
      await readerOf(stream.strategy)(run, stream.strategy);
      progress.finish(partition.key);
    });
  } finally {
    report.stop();
  }
  return counters;
}
