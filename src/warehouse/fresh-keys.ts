import type { Warehouse } from './connection.ts';
import type { Target } from './targets.ts';

/**
 * Whether a company's next page of a target is expected to hold only keys its table does not have yet: once a
 * page found none of its keys stored, the pages after it (a first sync, a backfill of new days) skip the read of
 * stored keys and insert straight away; the first page that finds any puts the read back. A wrong guess costs
 * its page one INSERT that fails on the unique key and rolls back, and the page is written again with the read.
 */

const expected = new WeakMap<Warehouse, Map<string, boolean>>();

const id = (companyKey: string, target: Target) => `${companyKey}\u0000${target.table}`;

export function expectsFreshKeys(wh: Warehouse, companyKey: string, target: Target): boolean {
  return expected.get(wh)?.get(id(companyKey, target)) === true;
}

/** What a page written found: whether any of its keys were stored already. */
export function noteStoredKeys(wh: Warehouse, companyKey: string, target: Target, foundStored: boolean): void {
  let byTarget = expected.get(wh);
  if (!byTarget) expected.set(wh, (byTarget = new Map()));
  byTarget.set(id(companyKey, target), !foundStored);
}
