import type { Rng } from './rng.ts';

/** The stretch of time one `advance` covers, and what it changed. */
export interface Advance {
  fromMs: number;
  toMs: number;
  /** A random instant inside the advance: after its start, before its end (see latestStamp in time.ts). */
  at(): number;
  days: number;
  counts: Record<string, number>;
}

export function add(p: Advance, kind: string, n = 1): void {
  p.counts[kind] = (p.counts[kind] ?? 0) + n;
}

/** A random item that `keep` accepts, or undefined after `tries` misses. */
export function randomOf<T>(rng: Rng, items: readonly T[], keep: (t: T) => boolean, tries = 40): T | undefined {
  for (let i = 0; i < tries && items.length > 0; i++) {
    const t = rng.pick(items);
    if (keep(t)) return t;
  }
  return undefined;
}
