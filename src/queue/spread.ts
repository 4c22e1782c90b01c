import { createHash } from 'node:crypto';

/**
 * Every company's runs of a job fire on the same cron: a thousand companies queue a thousand runs in the same
 * second, and the last of them start minutes late while the box idles between firings. Each company's run is
 * instead queued a fixed share of a window after its firing (the same share at every firing, so its runs stay one
 * interval apart). The window grows with the companies, so one or two companies run at the firing, and is at most
 * half the job's interval, so a run is never later than half an interval.
 */

/** The window's width per company: a thousand companies spread over about eight minutes. */
export const SPREAD_PER_COMPANY_MS = 500;

/** How long after its firing a company's run of a job is queued. */
export function runOffsetMs(company: string, job: string, intervalMs: number, companies: number): number {
  const windowMs = Math.min(intervalMs / 2, companies * SPREAD_PER_COMPANY_MS);
  if (!(windowMs > 0) || !Number.isFinite(windowMs)) return 0;
  return Math.floor(shareOf(company, job) * windowMs);
}

/** A fixed share in [0, 1) for the company and job: where its runs fall in a window, and its turns in an interval (turns.ts). */
export function shareOf(company: string, job: string): number {
  return createHash('sha256').update(`${company}\0${job}`).digest().readUInt32BE(0) / 2 ** 32;
}
