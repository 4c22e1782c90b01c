import type { RateLimit } from '../config.ts';
import type { Logger } from '../log.ts';
import type { RateLimiter, ServiceFeedback } from './types.ts';
import type { Lane } from './types.ts';
import {
  isPaced,
  nextPacedAtMs,
  paceSpacingMs,
  planFeedback,
  reconcileGraceMs,
  shortKey,
  WaitingRoom,
  type Decision,
  type OnStart,
  type Store,
} from './waiting.ts';

/**
 * The in-process limiter (no Redis): the same sliding-window log, the same pacing of lower lanes and the same
 * waiting room as the Redis one, for a single process. Times come from the monotonic clock, so a wall-clock step cannot open the period.
 */

interface KeyLog {
  /** Start times, oldest first, kept for the period and the reconciliation grace after it. */
  starts: number[];
  pausedUntil: number;
  /** When the next lower-lane start is paced to come (see paceSpacingMs); undefined before the first. */
  pacedAt?: number;
  /** The paced start a lower-lane waiter was refused before (see nextPacedAtMs). */
  awaitedPacedAt?: number;
}

const now = (): number => performance.timeOrigin + performance.now();

export class MemoryStore implements Store {
  private readonly logs = new Map<string, KeyLog>();
  private readonly graceMs: number;
  private readonly spacingMs: number;
  private seq = 0;

  /** `periodMs` is the effective period: the service's plus the safety margin. */
  constructor(
    private readonly limit: number,
    private readonly periodMs: number,
    private readonly logger?: Logger,
  ) {
    this.graceMs = reconcileGraceMs(periodMs);
    this.spacingMs = paceSpacingMs(limit, periodMs);
  }

  async tryStart(key: string, lane: Lane): Promise<Decision> {
    const t = now();
    const log = this.current(key, t);
    if (log.pausedUntil > t) return { granted: false, waitMs: Math.ceil(log.pausedUntil - t), reason: 'paused' };
    const first = firstInPeriod(log.starts, t - this.periodMs);
    const full = log.starts.length - first >= this.limit;
    const paced = isPaced(lane);
    const early = paced && log.pacedAt !== undefined && t < log.pacedAt;
    if (full || early) {
      if (early) log.awaitedPacedAt = log.pacedAt;
      // Both waits at once, so one timer covers them.
      const fullMs = full ? log.starts[first]! + this.periodMs - t : 0;
      const pacedMs = early ? log.pacedAt! - t : 0;
      return {
        granted: false,
        waitMs: Math.max(1, Math.ceil(Math.max(fullMs, pacedMs))),
        reason: fullMs >= pacedMs ? 'full' : 'paced',
      };
    }
    log.starts.push(t);
    if (paced)
      log.pacedAt = nextPacedAtMs(log.pacedAt, t, this.spacingMs, this.periodMs, log.awaitedPacedAt === log.pacedAt);
    return { granted: true, id: String(++this.seq), atMs: t };
  }

  /** The grant is handed over in the same tick of the event loop that made it: its time is already right. */
  handedOver(): void {}

  /** One process: nobody else needs to know which lanes wait. */
  async announce(): Promise<void> {}

  async observe(key: string, feedback: ServiceFeedback): Promise<void> {
    const t = now();
    const plan = planFeedback(feedback, this.limit, this.periodMs);
    const log = this.current(key, t);
    // Compared with the period and its grace: the service may have counted starts that just left the period.
    const missing = plan.remaining < 0 ? 0 : this.limit - log.starts.length - plan.remaining;
    const pauseMs = Math.max(plan.pauseMs, missing > 0 ? plan.pauseIfBehindMs : 0);
    if (pauseMs > 0 && t + pauseMs > log.pausedUntil) {
      log.pausedUntil = t + pauseMs;
      this.logger?.info({ key: shortKey(key), pauseMs, ...feedback }, 'rate limit: pausing key');
    }
    if (missing <= 0) return;
    // Starts the service counted and we did not (another client of the key): placeholders that leave with its reset.
    const at = t + plan.placeholderMs - this.periodMs;
    for (let i = 0; i < missing; i++) log.starts.push(at);
    log.starts.sort((a, b) => a - b);
    this.logger?.debug({ key: shortKey(key), missing }, 'rate limit: reconciled with the service');
  }

  async close(): Promise<void> {
    this.logs.clear();
  }

  /** The key's log with starts older than the period and its grace dropped (keys are per company: few, never swept). */
  private current(key: string, t: number): KeyLog {
    let log = this.logs.get(key);
    if (!log) {
      log = { starts: [], pausedUntil: 0 };
      this.logs.set(key, log);
    }
    const expired = firstInPeriod(log.starts, t - this.periodMs - this.graceMs);
    if (expired > 0) log.starts.splice(0, expired);
    return log;
  }
}

/** Index of the first start after `horizon` (starts sorted, oldest first). */
function firstInPeriod(starts: number[], horizon: number): number {
  let i = 0;
  while (i < starts.length && starts[i]! <= horizon) i++;
  return i;
}

export function createMemoryRateLimiter(
  rateLimit: RateLimit,
  safetyMarginMs: number,
  logger?: Logger,
  onStart?: OnStart,
): RateLimiter {
  return new WaitingRoom(
    new MemoryStore(rateLimit.limit, rateLimit.periodMs + safetyMarginMs, logger),
    logger,
    onStart,
  );
}
