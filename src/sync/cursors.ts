import { z } from 'zod';

/**
 * What each strategy keeps in `sync_state.cursor`, parsed on every read: a cursor written by another version
 * of the engine fails with a message naming the stream instead of steering a read by fields that mean nothing.
 */

const instant = z.iso.datetime({ offset: true });

/**
 * Where a list read in part stands: its last written page's offset, the offset after that page, and the key of
 * that page's last record (keyText of rows.ts). Every page before it is written too: a read's pages are written
 * one after another, in order. A bare offset is what earlier versions stored: such a read goes on from that page.
 */
export const ReadPoint = z.union([
  z.number().int().nonnegative(),
  z.strictObject({ offset: z.number().int().nonnegative(), next: z.number().int().nonnegative(), lastKey: z.string() }),
]);
export type ReadPoint = z.infer<typeof ReadPoint>;

/** A long read in progress (a backfill, a complete re-read): the slices done so far, so a resumed run skips them. */
export const Pass = z.object({
  name: z.string(),
  from: instant,
  to: instant,
  /** Starts of the slices read completely. */
  done: z.array(instant),
  /** Slices read in part, by start: where each stands. */
  at: z.record(instant, ReadPoint).optional(),
});
export type Pass = z.infer<typeof Pass>;

/** When each periodic complete re-read last completed (service time). */
const Rereads = z.record(z.string(), instant);

export const SinceCursor = z.strictObject({
  version: z.literal(2),
  since: instant,
  rereads: Rereads,
  /** Individuals whose warehouse row changed after this local instant have their records read again. */
  individualsAfter: instant.optional(),
  /** A first read under way (`since` is when it began): where it stands, written with each page. */
  firstReadAt: ReadPoint.optional(),
});
export type SinceCursor = z.infer<typeof SinceCursor>;

/** What every cursor that walks windows keeps: its version, its periodic re-reads, and the pass under way. */
const passing = { version: z.literal(2), rereads: Rereads, pass: Pass.optional() };

/** Where in such a cursor a pass keeps its slices read in part, and its slices done (edited in SQL by pages). */
export const PASS_AT = ['pass', 'at'] as const;
export const PASS_DONE = ['pass', 'done'] as const;

export const WindowCursor = z.strictObject({
  ...passing,
  /** Everything before this instant has been read (append) or backfilled (reread). */
  until: instant.optional(),
  backfilledFrom: instant.optional(),
});
export type WindowCursor = z.infer<typeof WindowCursor>;

export const ChangeCursor = z.strictObject({
  ...passing,
  /** Change records written to the warehouse after this local instant have not been applied yet. */
  changesAfter: instant.optional(),
  /**
   * Change records stamped (service time) before this instant changed nothing the backfill did not read: the
   * backfill began after them. Its assignment changes may arrive while or after it runs.
   */
  changesFrom: instant.optional(),
  /** Assignments starting before this instant have been read. */
  horizon: instant.optional(),
});
export type ChangeCursor = z.infer<typeof ChangeCursor>;

export const StatusCursor = z.strictObject({
  ...passing,
  /** The span the backfill read: open records are looked for in it. */
  from: instant.optional(),
});
export type StatusCursor = z.infer<typeof StatusCursor>;

export const SnapshotCursor = z.strictObject({
  version: z.literal(2),
  /** Keys the last complete read missed: gone when this read misses them too. */
  suspects: z.array(z.string()),
  /** A snapshot that follows employees: signals (individual and credential rows) written after this local instant are read next. */
  signalsAfter: instant.optional(),
  /** The service's time of the last run: the days since then are the days credentials may have expired in. */
  signpost: instant.optional(),
  rereads: Rereads.optional(),
});
export type SnapshotCursor = z.infer<typeof SnapshotCursor>;

export class CursorError extends Error {
  override readonly name = 'CursorError';
  readonly kind = 'cursor';
}

/** Parses a stored cursor; one that does not match fails loudly, naming the stream and what to do. */
export function parseCursor<T>(schema: z.ZodType<T>, stored: unknown, where: { stream: string; partition: string }): T | undefined {
  if (stored === undefined || stored === null) return undefined;
  const r = schema.safeParse(stored);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.join('.') || '(cursor)'}: ${i.message}`).join('; ');
  throw new CursorError(
    `${where.stream} (${where.partition}): the stored cursor was written by another version (${issues}); ` +
      `run this stream once with a full refresh to replace it`,
  );
}
