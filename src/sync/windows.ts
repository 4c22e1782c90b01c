import { DAY_MS, HOUR_MS } from '../resources/stream.ts';

/** Time windows: half-open [start, end) spans that streams read, slice and split. */
export interface Window {
  start: Date;
  end: Date;
}

export { DAY_MS, HOUR_MS };

export function addMs(d: Date, ms: number): Date {
  return new Date(d.getTime() + ms);
}

export function addDays(d: Date, days: number): Date {
  return addMs(d, days * DAY_MS);
}

/** Midnight UTC of the day that holds `d`. */
export function startOfDayUtc(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

export function spanMs(w: Window): number {
  return w.end.getTime() - w.start.getTime();
}

/** Cuts a window into consecutive slices of at most `sliceMs` (the last may be shorter). */
export function slice(w: Window, sliceMs: number): Window[] {
  const out: Window[] = [];
  for (let t = w.start.getTime(); t < w.end.getTime(); t += sliceMs) {
    out.push({ start: new Date(t), end: new Date(Math.min(t + sliceMs, w.end.getTime())) });
  }
  return out;
}

/** Halves a window; used when the service refuses or times out on a span. */
export function halve(w: Window): [Window, Window] {
  const mid = new Date(w.start.getTime() + Math.floor(spanMs(w) / 2));
  return [
    { start: w.start, end: mid },
    { start: mid, end: w.end },
  ];
}

/** Merges day windows that touch into as few windows as possible. */
export function coalesce(windows: Window[]): Window[] {
  const sorted = [...windows].sort((a, b) => a.start.getTime() - b.start.getTime());
  const out: Window[] = [];
  for (const w of sorted) {
    const last = out[out.length - 1];
    if (last && w.start.getTime() <= last.end.getTime()) {
      if (w.end > last.end) last.end = w.end;
    } else {
      out.push({ start: w.start, end: w.end });
    }
  }
  return out;
}

/** The day windows holding each instant. */
export function daysOf(instants: Iterable<Date>): Window[] {
  const seen = new Map<number, Window>();
  for (const d of instants) {
    const start = startOfDayUtc(d);
    seen.set(start.getTime(), { start, end: addDays(start, 1) });
  }
  return [...seen.values()];
}

/** Runs `fn` over `items` with at most `limit` running at once; the first failure stops new work and rethrows. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: unknown;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (failed === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (e) {
        failed ??= e;
      }
    }
  });
  await Promise.all(lanes);
  if (failed !== undefined) throw failed;
}

/** Records of a sorted list of instants (epoch ms) that fall in [start, end]. */
export function countIn(sorted: readonly number[], w: Window): number {
  const lower = (x: number, strict: boolean) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (strict ? sorted[mid]! <= x : sorted[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return lower(w.end.getTime(), true) - lower(w.start.getTime(), false);
}

/**
 * Merges windows into as few paged reads as cost no more requests than reading them apart: two neighbours
 * become one window over both when the pages of the records between them (`count`) do not exceed the two
 * reads they replace. A window costs at least one request, and one more per `pageSize` records.
 */
export function mergeByCost(windows: readonly Window[], count: (w: Window) => number, pageSize: number): Window[] {
  const cost = (w: Window) => Math.max(1, Math.ceil(count(w) / pageSize));
  const out: Window[] = [];
  for (const w of coalesce([...windows])) {
    const last = out[out.length - 1];
    // biome-ignore lint/complexity/useMathMinMax: Dates, which Math.max would turn into numbers
    const merged = last && { start: last.start, end: w.end > last.end ? w.end : last.end };
    if (last && merged && cost(merged) <= cost(last) + cost(w)) out[out.length - 1] = merged;
    else out.push({ start: w.start, end: w.end });
  }
  return out;
}
