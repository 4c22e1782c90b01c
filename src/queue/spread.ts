import { createHash } from 'node:crypto';

/**
 * Every company's runs of a job fire on the same cron: a thousand companies queue a thousand runs in the same
 * second, and the last of them start minutes late while the box idles between firings. Each company's run is
 * instead queued a fixed share of a spread after its firing (the same share at every firing, so its runs stay one
 * interval apart). The spread grows with the companies, so one or two companies run at the firing, and is at most
 * half the job's interval, so a run is never later than half an interval.
 */

/** The spread's width per company: a thousand companies spread over about eight minutes. */
export const SPREAD_PER_COMPANY_MS = 500;

/** How long after its firing a company's run of a job is queued, for its share (`sharesOf`). */
export function runOffsetMs(share: number, intervalMs: number, companies: number): number {
  const spreadMs = Math.min(intervalMs / 2, companies * SPREAD_PER_COMPANY_MS);
  if (!(spreadMs > 0) || !Number.isFinite(spreadMs)) return 0;
  return Math.floor(share * spreadMs);
}

/** A fixed place in [0, 1) for the company and job, from a hash: the order `sharesOf` spreads a fleet in. */
export function shareOf(company: string, job: string): number {
  return createHash('sha256').update(`${company}\0${job}`).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * Each company's share of a job's spread, and of its interval for the turns (turns.ts), in that order: the companies
 * in the order of their hashes, evenly spaced. A hash alone puts some of a thousand companies a fraction of a
 * millisecond apart, and two turns that close are one priority, taken in whichever order they were queued. A company
 * joining or leaving moves the others' shares by less than one place.
 */
export function sharesOf(companies: readonly string[], job: string): Map<string, number> {
  const placed = companies.map((company) => ({ company, at: shareOf(company, job) }));
  placed.sort((a, b) => a.at - b.at || (a.company < b.company ? -1 : 1));
  return new Map(placed.map((p, i) => [p.company, i / placed.length]));
}
