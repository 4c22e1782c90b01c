/** fresh: synced within its schedule; late: a run is overdue; stale: no success for two schedule intervals. */
export type Freshness = 'fresh' | 'late' | 'stale';

/**
 * How fresh a stream is: its lag is the time since its last successful run started (the data is as of then).
 * A run that is due may take a while, so "late" starts at 1.5 intervals; "stale" is two intervals with no success.
 */
export function freshnessOf(
  lastOkStartedAt: Date | null,
  intervalMs: number,
  now = Date.now(),
): { freshness: Freshness; lagMs: number | null } {
  if (!lastOkStartedAt) return { freshness: 'stale', lagMs: null };
  const lagMs = Math.max(0, now - lastOkStartedAt.getTime());
  if (lagMs > 2 * intervalMs) return { freshness: 'stale', lagMs };
  if (lagMs > 1.5 * intervalMs) return { freshness: 'late', lagMs };
  return { freshness: 'fresh', lagMs };
}

/** A duration the way an operator reads it: 45 s, 12 min, 3 h 5 min, 2 d 4 h. */
export function formatLag(ms: number | null): string {
  if (ms === null) return 'never';
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}
