import type { IncomingHttpHeaders } from 'node:http';

/**
 * The service's clock as its answers tell it (the `Date` header, one-second resolution). Checkpoints are set by
 * the clock that stamps the data, not by ours, so a skew between the two must not skip or repeat records.
 */
export class ServiceClock {
  /** The service's clock minus ours, from the last answer's `Date` header. */
  #skewMs = 0;
  /** When (our clock) the service last told us its time; 0 before any answer. */
  #seenAt = 0;

  /**
   * Learns the service's time from a response. Only an answer of the service counts: a refusal may come from a
   * proxy or gateway in front of it, with a clock of its own, and a signpost set by that clock would skip or
   * stretch a backfill.
   */
  observe(headers: IncomingHttpHeaders, answered: boolean): void {
    const serviceDate = answered ? Date.parse(String(headers.date ?? '')) : NaN;
    if (!Number.isFinite(serviceDate)) return;
    this.#seenAt = Date.now();
    this.#skewMs = serviceDate - this.#seenAt;
  }

  /** The service's time as of the last answer; the local clock before any answer. */
  now(): Date {
    return new Date(Date.now() + this.#skewMs);
  }

  /** Milliseconds since the service last told its time (a clock learned before a pause may have moved since). */
  ageMs(): number {
    return Date.now() - this.#seenAt;
  }
}
