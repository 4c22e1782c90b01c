/**
 * The collector's work in a process run with V8's `--trace-gc-nvp`, which prints one line of name=value pairs per
 * collection on stdout: `gc=s` a scavenge of the young generation, anything else a full (mark-compact) collection.
 * Bytes promoted out of the young generation drive both kinds: each scavenge copies them, and the full collections
 * come as often as they fill the old generation. They move far less from run to run than CPU time does, which makes
 * them the figure to compare for a change in what a page allocates or how long it keeps it.
 */

export interface GcTotals {
  scavenges: number;
  scavengePauseMs: number;
  /** Bytes moved from the young generation to the old one, in MB. */
  promotedMb: number;
  fullCollections: number;
  /** Their pauses and the incremental marking steps before them, which run on the main thread between tasks. */
  fullCollectionMs: number;
}

const PAIR = /(\S+)=(\S+)/g;

/** True for a line `--trace-gc-nvp` printed. */
export function isGcTraceLine(line: string): boolean {
  return line.includes(' pause=') && line.includes(' gc=');
}

/** The totals of the trace lines among `lines` (others are ignored), unrounded: callers round what they print. */
export function gcTotals(lines: readonly string[]): GcTotals {
  const totals: GcTotals = { scavenges: 0, scavengePauseMs: 0, promotedMb: 0, fullCollections: 0, fullCollectionMs: 0 };
  for (const line of lines) {
    if (!isGcTraceLine(line)) continue;
    const v = Object.fromEntries(Array.from(line.matchAll(PAIR), (m) => [m[1]!, m[2]!]));
    const pause = Number(v.pause ?? 0);
    if (v.gc === 's') {
      totals.scavenges++;
      totals.scavengePauseMs += pause;
      totals.promotedMb += Number(v.promoted ?? 0) / 1e6;
    } else {
      totals.fullCollections++;
      totals.fullCollectionMs += pause + Number(v.incremental ?? 0);
    }
  }
  return totals;
}
