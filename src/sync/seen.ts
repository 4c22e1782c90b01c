/** What a complete read saw, and marking gone the rows it did not. */
import { anyLiveRow, markMissingDeleted, type RangeFilter } from '../warehouse/deletions.ts';
import type { MappedPage } from '../warehouse/page-map.ts';
import type { StreamRun } from './context.ts';

/** The keys a complete read returned; records refused without a readable key make its absences meaningless. */
export interface Seen {
  /** Kept only where its absences are looked for: none when the scope was empty as the read began. */
  keys: Set<string>;
  unkeyed: number;
  /**
   * Whether the read's scope held a live row as it began. A read that began on an empty scope (a first sync, a
   * backfill's new days) has nothing to mark gone: every row there came from it, or from another read after it
   * began, whose rows are not its to judge. Its own rows are not read back to find that out.
   */
  storedBefore: boolean;
}

export const newSeen = (): Seen => ({ keys: new Set(), unkeyed: 0, storedBefore: true });

/** What a complete read of `scope` sees, begun by asking whether the warehouse holds anything there yet. */
export async function seenIn(run: StreamRun, scope: Omit<Scope, 'label'> = {}): Promise<Seen> {
  const { ctx, stream } = run;
  const storedBefore = await anyLiveRow(ctx.warehouse, {
    target: stream.target,
    companyKey: ctx.companyKey,
    range: scope.range,
    where: scope.where,
    partition: partitionFilter(run),
  });
  return { keys: new Set(), unkeyed: 0, storedBefore };
}

/**
 * What a written page saw: the keys of its records, and of its refused records where their payload gives one (a
 * refused record is still there). A refused record without a readable key makes the read's absences meaningless.
 */
export function notePage(seen: Seen, page: Pick<MappedPage, 'keys' | 'refused'>): void {
  for (const r of page.refused) if (r.key === null) seen.unkeyed++;
  if (!seen.storedBefore) return;
  for (const r of page.refused) if (r.key !== null) seen.keys.add(r.key);
  for (const k of page.keys) seen.keys.add(k);
}

interface Scope {
  range?: RangeFilter;
  where?: Record<string, unknown>;
  /** Names the read in sync_runs when its inference is skipped. */
  label: string;
}

/** Rows in the scope of a complete read that it did not return are gone, unless a refused record had no key. */
export async function markGone(run: StreamRun, seen: Seen, scope: Scope): Promise<void> {
  const { ctx, stream } = run;
  if (seen.unkeyed > 0) {
    skipInference(run, `${scope.label}: ${seen.unkeyed} refused record(s) without a readable key; nothing marked gone`);
    return;
  }
  if (!seen.storedBefore) return;
  run.counters.deleted += await markMissingDeleted(ctx.warehouse, {
    target: stream.target,
    companyKey: ctx.companyKey,
    seen: seen.keys,
    range: scope.range,
    where: scope.where,
    partition: partitionFilter(run),
  });
}

/** A complete read whose deletion inference is skipped: said in the run's record (sync_runs) and the log. */
export function skipInference(run: StreamRun, why: string): void {
  run.counters.inferenceSkipped.push(why);
  run.ctx.log.warn({ stream: run.stream.name, partition: run.partition.key }, why);
}

/** Rows of a partitioned stream belong to their partition; a complete read of one says nothing of the others. */
export function partitionFilter(run: StreamRun): Record<string, unknown> | undefined {
  return run.stream.partitions ? run.partition.query : undefined;
}
