import { z } from 'zod';

/**
 * What each strategy keeps in `sync_state.cursor`, parsed on every read. Every cursor names the version of its
 * format; one stored by an earlier version is migrated forward, one step per version, before it is parsed, so an
 * upgrade goes on from where the stream stood instead of reading everything again.
 */

/** The format cursors are written in. A change to any cursor's shape or meaning moves it, with a step below. */
export const CURSOR_VERSION = 3 as const;

const instant = z.iso.datetime({ offset: true });

const offset = z.number().int().nonnegative();

/**
 * Where a list read in part stands: its last written page's offset, the offset after that page, and the key of
 * that page's last record (keyText of warehouse/record-keys.ts). Every page before it is written too: a read's pages are written
 * one after another, in order. A page of refused records alone names no record: its point is its offset alone,
 * and the read goes on from that page.
 */
export const ReadPoint = z.union([
  z.strictObject({ offset, next: offset, lastKey: z.string() }),
  z.strictObject({ offset }),
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
  version: z.literal(CURSOR_VERSION),
  since: instant,
  rereads: Rereads,
  /** Individuals whose warehouse row changed after this local instant have their records read again. */
  individualsAfter: instant.optional(),
  /** A first read under way (`since` is when it began): where it stands, written with each page. */
  firstReadAt: ReadPoint.optional(),
});
export type SinceCursor = z.infer<typeof SinceCursor>;

/** What every cursor that walks windows keeps: its version, its periodic re-reads, and the pass under way. */
const passing = { version: z.literal(CURSOR_VERSION), rereads: Rereads, pass: Pass.optional() };

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
  version: z.literal(CURSOR_VERSION),
  /** Keys the last complete read missed: gone when this read misses them too. */
  suspects: z.array(z.string()),
  /** A snapshot that follows employees: signals (individual and credential rows) written after this local instant are read next. */
  signalsAfter: instant.optional(),
  /** The service's time of the last run: the days since then are the days credentials may have expired in. */
  signpost: instant.optional(),
  rereads: Rereads.optional(),
});
export type SnapshotCursor = z.infer<typeof SnapshotCursor>;

/** A stored cursor as JSON, before it is parsed. */
type Stored = Record<string, unknown>;

/** Each step turns a cursor of version N (the key) into one of version N + 1, whatever its stream's kind. */
export const MIGRATIONS: Readonly<Record<number, (cursor: Stored) => Stored>> = {
  // Version 2 (release 0.1.0) stored a point of a read in part as a bare offset where its page named no record
  // (and, before points named records, always); version 3 stores every point as an object.
  2: (c) => ({
    ...c,
    version: 3,
    ...(c.firstReadAt !== undefined ? { firstReadAt: pointOf(c.firstReadAt) } : {}),
    ...(isObject(c.pass) && isObject(c.pass.at) ? { pass: { ...c.pass, at: mapValues(c.pass.at, pointOf) } } : {}),
  }),
};

/** The oldest version migrated: the first that cursors named (release 0.1.0 stores it); none older was stored. */
const OLDEST = Math.min(...Object.keys(MIGRATIONS).map(Number));

const isObject = (x: unknown): x is Stored => typeof x === 'object' && x !== null && !Array.isArray(x);
const pointOf = (p: unknown) => (typeof p === 'number' ? { offset: p } : p);
const mapValues = (o: Stored, f: (v: unknown) => unknown): Stored =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));

/** Why a stored cursor cannot steer a read: its stream reads everything again instead. */
export interface UnusableCursor {
  kind: 'cursor';
  reason: string;
}

export type StoredCursor<T> =
  | { ok: true; cursor: T | undefined; migratedFrom?: number }
  | { ok: false; error: UnusableCursor };

/** Migrates a stored cursor forward to CURSOR_VERSION and parses it; none stored is `cursor: undefined`. */
export function readStoredCursor<T>(schema: z.ZodType<T>, stored: unknown): StoredCursor<T> {
  if (stored === undefined || stored === null) return { ok: true, cursor: undefined };
  const version = isObject(stored) ? stored.version : undefined;
  if (typeof version !== 'number' || !Number.isInteger(version)) return unusable('it names no version');
  if (version > CURSOR_VERSION) return unusable(`it is of version ${version}, newer than this one (${CURSOR_VERSION})`);
  if (version < OLDEST)
    return unusable(`its version ${version} is older than any release stored (the oldest migrated is ${OLDEST})`);
  let cursor = stored as Stored;
  for (let v = version; v < CURSOR_VERSION; v++) cursor = MIGRATIONS[v]!(cursor);
  const r = schema.safeParse(cursor);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(cursor)'}: ${i.message}`).join('; ');
    return unusable(`it does not match its format (${issues})`);
  }
  return { ok: true, cursor: r.data, ...(version < CURSOR_VERSION ? { migratedFrom: version } : {}) };
}

const unusable = (reason: string): { ok: false; error: UnusableCursor } => ({
  ok: false,
  error: { kind: 'cursor', reason },
});

/** The cursor a read goes on from: a stored one that cannot be used counts as none (everything is read again). */
export function parseCursor<T>(schema: z.ZodType<T>, stored: unknown): T | undefined {
  const r = readStoredCursor(schema, stored);
  return r.ok ? r.cursor : undefined;
}
