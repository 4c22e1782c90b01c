import { z } from 'zod';

/**
 * Faults on demand, off by default. Probabilities are per API request; the draws come from an RNG seeded
 * with the sandbox seed, so a run with the same seed and the same request order meets the same faults.
 */
export interface FaultSpec {
  /** Probability of a 500 `internal_server_error`, answered before the request is processed. */
  error500?: number;
  /** Probability that the connection is reset before the request is processed: a write is not applied. */
  reset?: number;
  /** Probability that the request is processed (a write is applied) and the connection then dropped unanswered. */
  lost?: number;
  /** Probability of a slow response; defaults to 1 when only `slowMs` is given. */
  slow?: number;
  /** Delay of a slow response. */
  slowMs?: number;
  /** Probability that the body is cut short: Content-Length promises more than is sent, then the socket closes. */
  truncate?: number;
  /** Probability that a write is applied and answered with a bare 304 (the spec's "not modified (error occurred)"); reads are not affected. */
  notModified?: number;
  /** Only requests of this kind meet the faults (default: reads and writes alike). Storms meet everything. */
  only?: 'reads' | 'writes';
  /** 429 for every request, whatever the budget, during the first `forMs` of every `everyMs`. */
  storm429?: { everyMs: number; forMs: number };
}

const probability = z.number().min(0).max(1);

export const FaultSpecSchema = z.strictObject({
  error500: probability.optional(),
  reset: probability.optional(),
  lost: probability.optional(),
  slow: probability.optional(),
  slowMs: z.number().int().min(0).optional(),
  truncate: probability.optional(),
  notModified: probability.optional(),
  only: z.enum(['reads', 'writes']).optional(),
  storm429: z
    .strictObject({ everyMs: z.number().int().positive(), forMs: z.number().int().min(0) })
    .refine((s) => s.forMs <= s.everyMs, 'storm429.forMs must not exceed everyMs')
    .optional(),
});

function number(item: string, text: string | undefined): number {
  const n = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(n))
    throw new Error(`--faults: bad value in "${item}"`);
  return n;
}

/** `500=0.1,reset=0.05,lost=0.05,slow=0.1:2000,truncate=0.05,304=0.1,storm=10000:2000,only=writes` → FaultSpec. */
export function parseFaults(text: string): FaultSpec {
  const spec: FaultSpec = {};
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = item.split('=', 2) as [string, string | undefined];
    const [a, b] = (value ?? '').split(':', 2);
    switch (name) {
      case '500':
        spec.error500 = number(item, a);
        break;
      case 'reset':
        spec.reset = number(item, a);
        break;
      case 'lost':
        spec.lost = number(item, a);
        break;
      case 'truncate':
        spec.truncate = number(item, a);
        break;
      case '304':
        spec.notModified = number(item, a);
        break;
      case 'only':
        if (a !== 'reads' && a !== 'writes') throw new Error(`--faults: "${item}": only=reads or only=writes`);
        spec.only = a;
        break;
      case 'slow':
        spec.slow = number(item, a);
        spec.slowMs = b === undefined ? 1000 : number(item, b);
        break;
      case 'storm':
        spec.storm429 = { everyMs: number(item, a), forMs: number(item, b) };
        break;
      default:
        throw new Error(
          `--faults: unknown fault "${name}" (known: 500, reset, lost, slow, truncate, 304, storm, only)`,
        );
    }
  }
  const parsed = FaultSpecSchema.safeParse(spec);
  if (!parsed.success)
    throw new Error(`--faults: ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/**
 * What the HTTP layer does to one request. Reads and writes meet the same faults (unless `only` says otherwise):
 * `error500` and `reset` come before the request is processed (a write is not applied); `lost`, `truncate`,
 * `notModified` (writes only) and `delayMs` after it (a write is applied, and its answer is dropped, cut short, a
 * bare 304 or late).
 */
export interface FaultPlan {
  error500: boolean;
  reset: boolean;
  lost: boolean;
  truncate: boolean;
  notModified: boolean;
  delayMs: number;
}

export type FaultKind = 'error500' | 'reset' | 'lost' | 'truncate' | 'notModified' | 'slow';

const NO_FAULTS: FaultPlan = Object.freeze({
  error500: false,
  reset: false,
  lost: false,
  truncate: false,
  notModified: false,
  delayMs: 0,
});

/** mulberry32: small, fast and good enough to make fault sequences repeatable. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultInjector {
  #spec: FaultSpec = {};
  #active = false;
  #stormEpochMs = 0;
  readonly #random: () => number;
  /** `lost` and `notModified` draw from their own sequences, so adding them left the other faults' sequences as they were. */
  readonly #randomLost: () => number;
  readonly #randomNotModified: () => number;
  readonly #now: () => number;

  constructor(seed: number, spec: FaultSpec = {}, now: () => number = Date.now) {
    this.#random = rng(seed ^ 0x5eed_fa17);
    this.#randomLost = rng(seed ^ 0x1057_c0de);
    this.#randomNotModified = rng(seed ^ 0x0304_0304);
    this.#now = now;
    this.set(spec);
  }

  /** Replaces the faults; a storm's schedule starts now. */
  set(spec: FaultSpec): void {
    this.#spec = FaultSpecSchema.parse(spec);
    this.#active = Object.values(this.#spec).some((v) => v !== undefined && v !== 0);
    this.#stormEpochMs = this.#now();
  }

  get spec(): FaultSpec {
    return { ...this.#spec };
  }

  /** When a storm is blowing, the epoch ms at which it ends; otherwise undefined. */
  stormEndsAt(): number | undefined {
    const storm = this.#spec.storm429;
    if (!storm || storm.forMs === 0) return undefined;
    const elapsed = this.#now() - this.#stormEpochMs;
    const into = elapsed % storm.everyMs;
    return into < storm.forMs ? this.#now() - into + storm.forMs : undefined;
  }

  /**
   * The faults of one request (`write`: it is a write). Draws the same number of values for every request, kept by
   * `only` or not, so enabling one fault or narrowing them does not shift another's sequence.
   */
  plan(write: boolean): FaultPlan {
    if (!this.#active) return NO_FAULTS;
    const s = this.#spec;
    const [e, r, sl, t] = [this.#random(), this.#random(), this.#random(), this.#random()];
    const [l, nm] = [this.#randomLost(), this.#randomNotModified()];
    if (s.only === (write ? 'reads' : 'writes')) return NO_FAULTS;
    const slowMs = s.slowMs ?? 0;
    return {
      error500: e < (s.error500 ?? 0),
      reset: r < (s.reset ?? 0),
      lost: l < (s.lost ?? 0),
      truncate: t < (s.truncate ?? 0),
      notModified: write && nm < (s.notModified ?? 0),
      delayMs: slowMs > 0 && sl < (s.slow ?? 1) ? slowMs : 0,
    };
  }
}
