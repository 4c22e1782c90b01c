/** A list read by its update stamp after a first complete read, with individuals' own changes followed. */
import { isSourceError } from '../../source/errors.ts';
import { PAGE_LIMIT_MAX } from '../../source/endpoints.ts';
import { holdersOutOfStep, individualsOutside, settledBefore } from '../../warehouse/signals.ts';
import { liveKeys } from '../../warehouse/deletions.ts';
import { CURSOR_VERSION, type SinceCursor } from '../cursors.ts';
import { addDays, addMs, startOfDayUtc } from '../windows.ts';
import type { UpdatedSince } from '../../resources/stream.ts';
import type { StreamRun } from '../context.ts';
import { resumeFrom, readAll } from '../read.ts';
import { type Seen, newSeen, seenIn, markGone, skipInference } from '../seen.ts';
import { rereading, dueReread, rereadsAfter } from '../rereads.ts';

export async function runUpdatedSince(
  run: StreamRun,
  s: UpdatedSince,
  stored: SinceCursor | undefined,
): Promise<SinceCursor> {
  const { ctx } = run;
  // A first read cut short goes on from its last written page, as of when it began.
  const partial = stored?.firstReadAt !== undefined ? stored : undefined;
  const previous = partial ? undefined : stored;
  const signpost = partial ? new Date(partial.since) : ctx.now();
  const individualsAfter =
    partial?.individualsAfter ??
    (s.followIndividuals
      ? (await settledBefore(ctx.warehouse, ctx.companyKey, 'individuals')).toISOString()
      : undefined);
  const range: Record<string, unknown> = {};
  if (s.range) {
    range[s.range.start] = addDays(signpost, -s.range.backDays);
    range[s.range.end] = addDays(signpost, s.range.forwardDays);
  }
  const reread = previous ? dueReread(s.rereads, previous.rereads, signpost) : undefined;
  const followed =
    previous && !reread && s.followIndividuals
      ? await individualsToFollow(run, s.followIndividuals, previous.individualsAfter)
      : [];
  // One request per changed individual, or the whole list when that takes fewer pages: both are sound.
  const wholeIsCheaper = followed.length > 0 && followed.length >= (await pagesHeld(run));
  const complete = !previous || reread !== undefined || wholeIsCheaper;
  const query = complete ? range : { ...range, [s.param]: sinceParam(new Date(previous!.since), s) };
  const resume = partial?.firstReadAt;
  // A complete read resumed part way infers nothing (below): it need not ask what its scope held.
  const seen = complete && resumeFrom(resume) === 0 ? await seenIn(run) : newSeen();
  const firstRead: SinceCursor = {
    version: CURSOR_VERSION,
    since: signpost.toISOString(),
    rereads: {},
    ...(individualsAfter ? { individualsAfter } : {}),
  };
  const progress = previous
    ? undefined
    : run.cursor.whole(
        (page) => ({ ...firstRead, firstReadAt: page.point ?? { offset: page.offset } }) satisfies SinceCursor,
      );
  const read = () => readAll(run, query, previous ? 'incremental' : 'backfill', { seen, progress, resume });
  await (reread ? rereading(run, reread.name, read) : read());
  const label = reread ? `re-read ${reread.name}` : 'complete read';
  // A read with no `since` is complete: what it did not return is gone (e.g. credentials of former employees).
  // One resumed part way did not see the records before its offset.
  if (complete && resumeFrom(resume) > 0)
    skipInference(run, `${label}: resumed at offset ${resumeFrom(resume)}; nothing marked gone`);
  else if (complete) await markGone(run, seen, { label });
  else if (s.followIndividuals) await followIndividuals(run, s.followIndividuals, range, seen, followed);
  const cursor: SinceCursor = {
    version: CURSOR_VERSION,
    since: signpost.toISOString(),
    rereads: rereadsAfter(s.rereads, previous?.rereads, complete ? 'all' : undefined, signpost),
    ...(individualsAfter ? { individualsAfter } : {}),
  };
  return cursor;
}

/**
 * Records of an individual whose row changed (renamed, new job title or identifiers, back from Former) are read
 * again by the individual: the service does not bump their update stamp. Records of individuals the list no
 * longer covers are gone.
 */
async function followIndividuals(
  run: StreamRun,
  f: NonNullable<UpdatedSince['followIndividuals']>,
  range: Record<string, unknown>,
  seen: Seen,
  changed: readonly number[],
): Promise<void> {
  const { ctx } = run;
  for (const id of changed) {
    const own = newSeen();
    try {
      await readAll(run, { ...range, [f.param]: id }, 'incremental', { seen: own });
    } catch (e) {
      // The service answers an individual it no longer knows with not_found: nothing of theirs is left.
      if (!(isSourceError(e) && e.kind === 'not_found')) throw e;
    }
    for (const k of own.keys) seen.keys.add(k);
    seen.unkeyed += own.unkeyed;
    await markGone(run, own, { where: { [f.column]: id }, label: `${f.param} ${id}` });
  }
  const outside = await individualsOutside(ctx.warehouse, ctx.companyKey, f.statuses);
  if (outside.length > 0)
    await markGone(run, seen, { where: { [f.column]: outside }, label: `individuals not ${f.statuses.join('/')}` });
}

async function individualsToFollow(
  run: StreamRun,
  f: NonNullable<UpdatedSince['followIndividuals']>,
  after: string | undefined,
): Promise<number[]> {
  if (!after) return [];
  return holdersOutOfStep(run.ctx.warehouse, run.ctx.companyKey, new Date(after), {
    ...f,
    table: run.stream.target.table,
  });
}

/** The pages a complete read of the stream takes, judged by the rows the warehouse holds for it. */
async function pagesHeld(run: StreamRun): Promise<number> {
  const live = await liveKeys(run.ctx.warehouse, { target: run.stream.target, companyKey: run.ctx.companyKey });
  return Math.max(1, Math.ceil(live.length / PAGE_LIMIT_MAX));
}

function sinceParam(since: Date, s: UpdatedSince): Date {
  const back = addMs(since, -s.overlapMs);
  return s.precision === 'date' ? startOfDayUtc(back) : back;
}
