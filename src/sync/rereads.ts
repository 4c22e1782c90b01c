/** When a periodic complete re-read is due, and what each one cost. */
import { addDays, HOUR_MS } from './windows.ts';
import type { Reread } from '../resources/stream.ts';
import type { StreamRun } from './context.ts';

/** Runs a periodic re-read, noting its name, the rows it returned and the requests it sent. */
export async function rereading(run: StreamRun, name: string, read: () => Promise<unknown>): Promise<void> {
  await rereadingValue(run, name, read);
}

export async function rereadingValue<T>(run: StreamRun, name: string, read: () => Promise<T>): Promise<T> {
  run.counters.rereads.push(name);
  const { rows, requests } = run.tally;
  const value = await read();
  run.counters.rereadRows.push(run.tally.rows - rows);
  run.counters.rereadRequests.push(run.tally.requests - requests);
  return value;
}

/** The re-read due now, the widest first (one per run); undefined when none is. */
export function dueReread(
  rereads: readonly Reread[] | undefined,
  last: Record<string, string> | undefined,
  now: Date,
): Reread | undefined {
  const due = (rereads ?? []).filter((r) => {
    const at = last?.[r.name];
    return !at || now.getTime() - new Date(at).getTime() >= r.everyHours * HOUR_MS - 5 * 60_000;
  });
  return due.sort((a, b) => widthOf(b) - widthOf(a))[0];
}

const widthOf = (r: Reread) => (r.span ? r.span.backDays + r.span.forwardDays : Infinity);

/** The re-read times after `done` completed: it and every narrower one count as done now. */
export function rereadsAfter(
  rereads: readonly Reread[] | undefined,
  last: Record<string, string> | undefined,
  done: Reread | 'all' | undefined,
  now: Date,
): Record<string, string> {
  const out = { ...last };
  for (const r of rereads ?? []) {
    if (done === 'all' || (done && (r.name === done.name || widthOf(r) <= widthOf(done))))
      out[r.name] = now.toISOString();
  }
  return out;
}

/** The span a re-read covers now: its own, or the backfill's. */
export function rereadSpan(r: Reread, now: Date, backfillFrom: Date, horizon: Date): { from: Date; to: Date } {
  return r.span
    ? { from: addDays(now, -r.span.backDays), to: addDays(now, r.span.forwardDays) }
    : { from: backfillFrom, to: horizon };
}
