import type { Observer, Observers } from '../observers.ts';

/** What this process knows of one API key's budget right now, from the service's own headers. */
export interface KeyFigures {
  company: string;
  limit?: number;
  remaining?: number;
  resetAtMs?: number;
  /** Requests this process sent with the key. */
  requests: number;
  /** 429 answers this process got with the key. */
  rateLimited: number;
  /** The last time a request of this key waited for the limiter, and how long. */
  lastWaitMs: number;
  updatedAt: number;
}

const MINUTE_MS = 60_000;
/** The status page's budget chart goes back 6 hours. */
const MINUTES_KEPT = 6 * 60;

/**
 * The live figures the status page and the console show: fed by the same observer events as the metrics,
 * per API key (by company, since a company has one key).
 */
export class LiveFigures {
  readonly #keys = new Map<string, KeyFigures>();
  /** Per company: requests sent in each minute (its start, ms) of the last MINUTES_KEPT minutes. */
  readonly #perMinute = new Map<string, Map<number, number>>();

  #of(company: string): KeyFigures {
    let k = this.#keys.get(company);
    if (!k) this.#keys.set(company, (k = { company, requests: 0, rateLimited: 0, lastWaitMs: 0, updatedAt: 0 }));
    return k;
  }

  readonly observer: Observer = {
    request: (e) => {
      const k = this.#of(e.company ?? e.key);
      k.requests++;
      if (e.outcome === 'rate_limited') k.rateLimited++;
      k.updatedAt = Date.now();
      this.#countMinute(k.company, k.updatedAt);
    },
    limiterWait: (e) => {
      this.#of(e.company ?? e.key).lastWaitMs = e.waitMs;
    },
    budget: (e) => {
      const k = this.#of(e.company ?? e.key);
      if (e.limit !== undefined) k.limit = e.limit;
      if (e.remaining !== undefined) k.remaining = e.remaining;
      if (e.resetAtMs !== undefined) k.resetAtMs = e.resetAtMs;
      k.updatedAt = Date.now();
    },
  };

  listen(observers: Observers): () => void {
    return observers.add(this.observer);
  }

  /** Every key seen; a period that has reset since the service last spoke counts as unused. */
  keys(now = Date.now()): KeyFigures[] {
    return [...this.#keys.values()].map((k) =>
      k.resetAtMs !== undefined && k.resetAtMs < now && k.limit !== undefined ? { ...k, remaining: k.limit } : { ...k },
    );
  }

  /** Requests this process sent with a company's key, minute by minute from `since` to `now` (0 where none). */
  minutes(company: string, since: number, now = Date.now()): { at: Date; requests: number }[] {
    const counts = this.#perMinute.get(company);
    const out: { at: Date; requests: number }[] = [];
    for (let t = Math.floor(since / MINUTE_MS) * MINUTE_MS; t <= now; t += MINUTE_MS)
      out.push({ at: new Date(t), requests: counts?.get(t) ?? 0 });
    return out;
  }

  #countMinute(company: string, at: number): void {
    let counts = this.#perMinute.get(company);
    if (!counts) this.#perMinute.set(company, (counts = new Map()));
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    counts.set(minute, (counts.get(minute) ?? 0) + 1);
    // Keys are in insertion order, oldest minute first.
    for (const t of counts.keys()) {
      if (t > minute - MINUTES_KEPT * MINUTE_MS) break;
      counts.delete(t);
    }
  }

  key(company: string): KeyFigures | undefined {
    return this.keys().find((k) => k.company === company);
  }
}
