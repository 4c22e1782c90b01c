/** How sync names a record: by the key its row has (rows.ts keyText), which only the warehouse's mapping knows. */
import { getPath, mapRecord } from './rows.ts';
import type { Target } from './targets.ts';

/** The key text of a record as its row is written. */
export function recordKey(target: Target, companyKey: string, item: Record<string, unknown>, extras?: Record<string, unknown>): string {
  return mapRecord(target, companyKey, item, extras).keyText;
}

/**
 * The key of a record that failed its schema, where its raw payload gives one (its key columns, or the fields its
 * key is made from); undefined when it gives none.
 */
export function refusedRecordKey(target: Target, companyKey: string, raw: unknown, extras?: Record<string, unknown>): string | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  try {
    const m = mapRecord(target, companyKey, raw as Record<string, unknown>, extras);
    if (target.keyFields) {
      const fields = target.keyFields.flatMap((f) => (typeof f === 'string' ? [f] : f));
      if (!fields.some((f) => getPath(raw, f) != null)) return undefined;
    } else if (target.key.some((k) => m.row[k] == null)) return undefined;
    return m.keyText;
  } catch {
    return undefined;
  }
}
