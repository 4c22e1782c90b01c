import type { Warehouse } from './connection.ts';
import type { Target } from './targets.ts';

/**
 * Whether a company's next page of a target is expected to hold only keys its table does not have yet: once a few
 * pages in a row found none of their keys stored (a first sync, a backfill of new days), the pages after them
 * skip the read of stored keys and insert straight away; the first page that finds any puts the read back. A
 * wrong guess costs its page an INSERT that fails on the unique key and rolls back, and the page is written
 * again with the read: several reads' worth, hence a streak before guessing, so that pages that alternate
 * between new and stored keys keep their reads.
 */
export const FRESH_STREAK = 3;

/** Pages in a row that found none of their keys stored, by company and target. */
const streaks = new WeakMap<Warehouse, Map<string, number>>();

const id = (companyKey: string, target: Target) => `${companyKey}\u0000${target.table}`;

export function expectsFreshKeys(wh: Warehouse, companyKey: string, target: Target): boolean {
  return (streaks.get(wh)?.get(id(companyKey, target)) ?? 0) >= FRESH_STREAK;
}

/** What a page written found: whether any of its keys were stored already. */
export function noteStoredKeys(wh: Warehouse, companyKey: string, target: Target, foundStored: boolean): void {
  let byTarget = streaks.get(wh);
  if (!byTarget) streaks.set(wh, (byTarget = new Map()));
  const key = id(companyKey, target);
  byTarget.set(key, foundStored ? 0 : (byTarget.get(key) ?? 0) + 1);
}
