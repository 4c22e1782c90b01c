/** A list of current state with no change stamps: read whole, or by the employees whose state may have moved. */
import { isSourceError } from '../../source/errors.ts';
import { PAGE_LIMIT_MAX } from '../../source/endpoints.ts';
import {
  credentialHoldersChangedSince,
  credentialHoldersExpiring,
  individualsChangedSince,
  settledBefore,
} from '../../warehouse/signals.ts';
import { liveKeys, markDeletedByKey } from '../../warehouse/deletions.ts';
import { keyText } from '../../warehouse/record-keys.ts';
import { CURSOR_VERSION, type SnapshotCursor } from '../cursors.ts';
import { addDays, forEachLimited } from '../windows.ts';
import type { Snapshot } from '../../resources/stream.ts';
import { windowsAtOnce, type StreamRun } from '../context.ts';
import { readAll } from '../read.ts';
import { newSeen, seenIn, markGone, partitionFilter } from '../seen.ts';
import { rereadingValue, dueReread, rereadsAfter } from '../rereads.ts';

/**
 * A snapshot row is gone when two complete reads in a row miss it: offset paging over a list that moves can
 * skip a record once, and the next read finds it. A snapshot that follows employees reads it whole only when its
 * re-read is due or more employees changed than its pages; otherwise only the employees a signal names.
 */
export async function runSnapshot(
  run: StreamRun,
  s: Snapshot,
  previous: SnapshotCursor | undefined,
): Promise<SnapshotCursor> {
  const { ctx } = run;
  const signpost = ctx.now();
  const f = s.followEmployees;
  // Signals written after this instant are read next time: a run of their streams still going may write more.
  const signalsAfter = f ? await signalsSettled(run) : undefined;
  const followed =
    f && previous?.signalsAfter && !dueReread(s.rereads, previous.rereads, signpost)
      ? await employeesToRead(run, previous, signpost)
      : undefined;
  let suspects: string[];
  if (f && followed) {
    await readEmployees(run, f, followed);
    suspects = [];
  } else {
    const read = () => readSnapshot(run, previous?.suspects ?? []);
    suspects = f && previous ? await rereadingValue(run, 'all', read) : await read();
  }
  const cursor: SnapshotCursor = {
    version: CURSOR_VERSION,
    suspects,
    ...(f
      ? {
          signalsAfter: signalsAfter!.toISOString(),
          signpost: signpost.toISOString(),
          rereads: rereadsAfter(s.rereads, previous?.rereads, followed ? undefined : 'all', signpost),
        }
      : {}),
  };
  return cursor;
}

/** Reads the whole list; returns the keys it missed for the first time (suspects), marking gone those missed twice. */
async function readSnapshot(run: StreamRun, previous: readonly string[]): Promise<string[]> {
  const { ctx, stream } = run;
  const seen = await seenIn(run);
  await readAll(run, {}, 'incremental', { seen });
  const target = stream.target;
  if (seen.unkeyed > 0) {
    await markGone(run, seen, { label: 'snapshot' });
    return [...previous];
  }
  if (!seen.storedBefore) return [];
  const live = await liveKeys(ctx.warehouse, { target, companyKey: ctx.companyKey, partition: partitionFilter(run) });
  const missed = live.filter((k) => !seen.keys.has(keyText(k, target.key)));
  const suspects = new Set(previous);
  const gone = missed.filter((k) => suspects.has(keyText(k, target.key)));
  run.counters.deleted += await markDeletedByKey(ctx.warehouse, { target, companyKey: ctx.companyKey, keys: gone });
  return missed.map((k) => keyText(k, target.key)).filter((k) => !suspects.has(k));
}

type FollowEmployees = NonNullable<Snapshot['followEmployees']>;

/** The instant before which the individuals' and credentials' runs have written all they will. */
async function signalsSettled(run: StreamRun): Promise<Date> {
  const { ctx } = run;
  const [a, b] = await Promise.all([
    settledBefore(ctx.warehouse, ctx.companyKey, 'individuals'),
    settledBefore(ctx.warehouse, ctx.companyKey, 'individual-certifications'),
  ]);
  // biome-ignore lint/complexity/useMathMinMax: Dates, which Math.min would turn into numbers
  return a < b ? a : b;
}

/**
 * The employees whose rows may have changed since the last run: their individual row or credentials changed, a
 * credential of theirs expired as the service's day turned, or the last complete read missed them. Undefined when
 * reading them one by one would cost more than a complete read.
 */
async function employeesToRead(
  run: StreamRun,
  previous: SnapshotCursor,
  signpost: Date,
): Promise<number[] | undefined> {
  const { ctx, stream } = run;
  const after = new Date(previous.signalsAfter!);
  const lastDay = (previous.signpost ? new Date(previous.signpost) : signpost).toISOString().slice(0, 10);
  const today = signpost.toISOString().slice(0, 10);
  // A credential turns Expired the day after its expiration day: when the day turned, those that ended since the
  // day before the last run (a service that counts days in its own zone turns a few hours apart) are read.
  // Together, so a warehouse that goes away fails them as one and leaves no rejection unheard.
  const [changed, holders, expiring] = await Promise.all([
    individualsChangedSince(ctx.warehouse, ctx.companyKey, after),
    credentialHoldersChangedSince(ctx.warehouse, ctx.companyKey, after),
    today > lastDay
      ? credentialHoldersExpiring(ctx.warehouse, ctx.companyKey, addDaysText(lastDay, -1), addDaysText(today, -1))
      : [],
  ]);
  const ids = new Set<number>([
    ...changed,
    ...holders,
    ...expiring,
    ...previous.suspects.map((k) => Number((JSON.parse(k) as string[])[0])),
  ]);
  const live = await liveKeys(ctx.warehouse, { target: stream.target, companyKey: ctx.companyKey });
  return ids.size <= Math.ceil(live.length / PAGE_LIMIT_MAX) ? [...ids] : undefined;
}

const addDaysText = (day: string, days: number) =>
  addDays(new Date(`${day}T00:00:00Z`), days)
    .toISOString()
    .slice(0, 10);

/** Each employee's rows read by the employee filter: a complete read of theirs, so what it misses is gone. */
async function readEmployees(run: StreamRun, f: FollowEmployees, ids: readonly number[]): Promise<void> {
  await forEachLimited(ids, windowsAtOnce(run.ctx), async (id) => {
    const own = newSeen();
    try {
      await readAll(run, { [f.param]: id }, 'incremental', { seen: own });
    } catch (e) {
      // An employee the service no longer knows has no rows left.
      if (!(isSourceError(e) && e.kind === 'not_found')) throw e;
    }
    await markGone(run, own, { where: { [f.column]: id }, label: `${f.param} ${id}` });
  });
}
