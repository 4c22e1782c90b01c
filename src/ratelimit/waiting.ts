import type { Logger } from '../log.ts';
import { LANES, type Lane, type RateLimiter, type ServiceFeedback } from './types.ts';

/**
 * The waiting room both limiters share: per key, waiters queue by lane in this process, and one attempt at a
 * time asks the store (memory or Redis) for a start. A refused attempt says how long to wait, so the room
 * sleeps exactly that long instead of polling.
 */

/**
 * The store's answer to one attempt: granted (as start `id`, at `atMs` on the store's clock), or wait this long (ms)
 * before asking again.
 */
export type Decision = { granted: true; id: string; atMs: number } | { granted: false; waitMs: number; reason: string };

/** Called for every start handed to a caller, with the store's clock (epoch ms): for metrics and tests. */
export type OnStart = (key: string, lane: Lane, atMs: number) => void;

/** This process's waiters per lane, in LANES order. */
export type LaneCounts = readonly [number, number, number];

/** Where the log of starts lives. Only the store knows the clock and the other processes. */
export interface Store {
  /** One attempt to start a request in `lane`; `waiting` counts this process's waiters, the caller included. */
  tryStart(key: string, lane: Lane, waiting: LaneCounts): Promise<Decision>;
  /** Tells other processes which lanes this process waits in (all zero: none). */
  announce(key: string, waiting: LaneCounts): Promise<void>;
  /**
   * The granted start `id` is being handed to its caller now: the store may move its time to now. A process that
   * stalled between the grant and the hand-over then sends later than the log says, and the log follows it.
   */
  handedOver(key: string, id: string): void;
  observe(key: string, feedback: ServiceFeedback, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
  /** How often `announce` must be repeated while waiters exist; undefined when nobody else listens. */
  readonly heartbeatMs?: number;
}

interface Waiter {
  lane: Lane;
  resolve(): void;
  reject(err: Error): void;
  detach(): void;
}

interface KeyRoom {
  queues: Record<Lane, Waiter[]>;
  /** An attempt is in flight: at most one per key per process. */
  busy: boolean;
  timer?: NodeJS.Timeout;
  heartbeat?: NodeJS.Timeout;
  /** The store may hold registrations of this process for the key. */
  announced: boolean;
}

/** After a store error, try again this soon (waiters stay queued; callers may abort). */
const ERROR_RETRY_MS = 500;

export function abortError(signal: AbortSignal): Error {
  const err = new Error('rate limiter wait aborted', { cause: signal.reason });
  err.name = 'AbortError';
  return err;
}

export class WaitingRoom implements RateLimiter {
  private readonly rooms = new Map<string, KeyRoom>();
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly logger?: Logger,
    private readonly onStart?: OnStart,
  ) {}

  acquire(key: string, lane: Lane = 'incremental', signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new Error('rate limiter is closed'));
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<void>((resolve, reject) => {
      const room = this.room(key);
      const onAbort = () => this.abandon(key, room, waiter, abortError(signal!));
      const waiter: Waiter = {
        lane,
        resolve,
        reject,
        detach: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const laneWasIdle = room.queues[lane].length === 0;
      room.queues[lane].push(waiter);
      this.startHeartbeat(key, room);
      // A lane that just became busy is announced at once, so other processes' lower lanes yield to it.
      if (!room.busy && (room.timer === undefined || laneWasIdle)) void this.pump(key, room);
    });
  }

  observe(key: string, feedback: ServiceFeedback, signal?: AbortSignal): Promise<void> {
    return this.store.observe(key, feedback, signal);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const closing = new Error('rate limiter is closed');
    const withdrawals: Promise<void>[] = [];
    for (const [key, room] of this.rooms) {
      clearTimeout(room.timer);
      clearInterval(room.heartbeat);
      for (const lane of LANES) for (const w of room.queues[lane].splice(0)) settle(w, closing);
      if (room.announced) withdrawals.push(this.store.announce(key, [0, 0, 0]).catch(() => {}));
    }
    this.rooms.clear();
    await Promise.all(withdrawals);
    await this.store.close();
  }

  private room(key: string): KeyRoom {
    let room = this.rooms.get(key);
    if (!room) {
      room = { queues: { push: [], incremental: [], backfill: [] }, busy: false, announced: false };
      this.rooms.set(key, room);
    }
    return room;
  }

  /** Asks the store for starts while waiters remain, sleeping between refusals for as long as it says. */
  private async pump(key: string, room: KeyRoom): Promise<void> {
    clearTimeout(room.timer);
    room.timer = undefined;
    while (!this.closed) {
      const lane = firstLane(room);
      if (!lane) return this.idle(key, room);
      const waiting = counts(room);
      room.busy = true;
      const decision = await this.attempt(key, lane, waiting);
      room.busy = false;
      if (this.closed) return;
      room.announced = decision.granted ? waiting.some((n, i) => n - (LANES[i] === lane ? 1 : 0) > 0) : true;
      if (!decision.granted) {
        room.timer = setTimeout(() => void this.pump(key, room), decision.waitMs);
        return;
      }
      // The waiter asked for may have aborted meanwhile: the start goes to the next one rather than being lost.
      const next = firstLane(room);
      if (!next) continue;
      this.store.handedOver(key, decision.id);
      this.onStart?.(key, next, decision.atMs);
      settle(room.queues[next].shift()!);
    }
  }

  private async attempt(key: string, lane: Lane, waiting: LaneCounts): Promise<Decision> {
    try {
      return await this.store.tryStart(key, lane, waiting);
    } catch (err) {
      this.logger?.warn({ err, key: shortKey(key) }, 'rate limiter store failed; retrying');
      return { granted: false, waitMs: ERROR_RETRY_MS, reason: 'error' };
    }
  }

  /** No waiters left: stop the heartbeat, withdraw this process's registrations, forget the key. */
  private idle(key: string, room: KeyRoom): void {
    clearInterval(room.heartbeat);
    room.heartbeat = undefined;
    this.rooms.delete(key);
    if (room.announced) this.sync(key, [0, 0, 0]);
  }

  private abandon(key: string, room: KeyRoom, waiter: Waiter, err: Error): void {
    const queue = room.queues[waiter.lane];
    const i = queue.indexOf(waiter);
    if (i < 0) return;
    queue.splice(i, 1);
    settle(waiter, err);
    // While an attempt is in flight the pump will see the new counts; otherwise bring the store up to date now.
    if (room.busy) return;
    if (!firstLane(room)) {
      clearTimeout(room.timer);
      room.timer = undefined;
      this.idle(key, room);
    } else if (room.announced && queue.length === 0) {
      this.sync(key, counts(room));
    }
  }

  private sync(key: string, waiting: LaneCounts): void {
    this.store.announce(key, waiting).catch((err: unknown) => {
      this.logger?.warn({ err, key: shortKey(key) }, 'rate limiter could not update its waiter registration');
    });
  }

  private startHeartbeat(key: string, room: KeyRoom): void {
    const every = this.store.heartbeatMs;
    if (every === undefined || room.heartbeat) return;
    room.heartbeat = setInterval(() => {
      if (!room.busy && firstLane(room)) this.sync(key, counts(room));
    }, every);
    room.heartbeat.unref();
  }
}

function firstLane(room: KeyRoom): Lane | undefined {
  return LANES.find((lane) => room.queues[lane].length > 0);
}

function counts(room: KeyRoom): LaneCounts {
  return [room.queues.push.length, room.queues.incremental.length, room.queues.backfill.length];
}

function settle(waiter: Waiter, err?: Error): void {
  waiter.detach();
  if (err) waiter.reject(err);
  else waiter.resolve();
}

/** Keys are already hashes of API keys; logs carry only a prefix of the hash. */
export function shortKey(key: string): string {
  return key.length > 8 ? `${key.slice(0, 8)}…` : key;
}

/**
 * Starts stay in the log this long after they left the period, only to be compared with the service's counts: a
 * response read after some of the starts it counted have left the period would otherwise look like another client's
 * use of the key.
 */
export function reconcileGraceMs(periodMs: number): number {
  return Math.ceil(periodMs / 4);
}

/**
 * Lower lanes (`incremental`, `backfill`) are paced: a lower-lane start needs a free slot in the period and also
 * its paced start on an even schedule, one every `periodMs / limit`. A sliding-window log alone lets a backfill
 * start L requests at once, and those slots free only a whole period later, so a push arriving after them would
 * wait for the period whatever its lane; paced, a slot frees every W/L, and the push lane (never paced, free to burst)
 * takes the next one.
 */
export function paceSpacingMs(limit: number, periodMs: number): number {
  return periodMs / limit;
}

/**
 * The next paced lower-lane start after a start granted at `nowMs` for the one paced at `pacedAtMs` (undefined: the
 * first start). `awaited`: a lower-lane waiter was already waiting for that paced start before it came.
 *
 * A start less than `paceSlackMs` late keeps the schedule's phase, so timers that fire late and responses that
 * come back late cost nothing (spacing each start from the previous actual start would lose that lateness at every
 * slot: at 100/1s, a tenth of the budget). A later start after a waiter was waiting means the process stalled (a
 * busy machine): the schedule keeps its phase, making up at most a quarter period, as the sliding-window log alone
 * would have. A later start nobody waited for ends idle time: the schedule restarts from now, never making idle
 * time up with a burst.
 */
export function nextPacedAtMs(
  pacedAtMs: number | undefined,
  nowMs: number,
  spacingMs: number,
  periodMs: number,
  awaited: boolean,
): number {
  if (pacedAtMs === undefined) return nowMs + spacingMs;
  if (nowMs - pacedAtMs < paceSlackMs(spacingMs)) return pacedAtMs + spacingMs;
  if (awaited) return Math.max(pacedAtMs, nowMs - periodMs / 4) + spacingMs;
  return nowMs + spacingMs;
}

/** A gap shorter than this is lateness, not idle time: one spacing, and at least 100 ms (a slow answer, a busy machine). */
export function paceSlackMs(spacingMs: number): number {
  return Math.max(spacingMs, 100);
}

export const isPaced = (lane: Lane): boolean => lane !== 'push';

/** What a store does with the service's feedback, worked out once for both stores. */
export interface FeedbackPlan {
  /** Pause every process of the key this long (0: no pause). */
  pauseMs: number;
  /** Pause this long only if the log believed starts remained when the service said none do (0: no pause). */
  pauseIfBehindMs: number;
  /** The service's remaining count to reconcile the log with, or -1 when there is nothing (fresh) to reconcile. */
  remaining: number;
  /** Placeholder starts added by reconciliation leave the log this long from now. */
  placeholderMs: number;
}

/**
 * `periodMs` is the limiter's effective period (with its safety margin). A 429 pauses until the reset (the whole
 * period when the service gave none). `remaining: 0` pauses until the reset only when the log disagrees: when it
 * agrees, the log already holds the next start back, and the reset is rounded up to whole seconds by the service,
 * so pausing on every period's last request would waste up to a second per period. A reset already past makes the
 * counts stale, so they are not reconciled; a 429 then still pauses for one request's share of the period.
 */
export function planFeedback(f: ServiceFeedback, limit: number, periodMs: number, nowMs = Date.now()): FeedbackPlan {
  const resetIn = f.resetAtMs === undefined ? undefined : Math.max(0, Math.ceil(f.resetAtMs - nowMs));
  const pauseMs = !f.limited ? 0 : resetIn === undefined ? periodMs : Math.max(resetIn, Math.ceil(periodMs / limit));
  const fresh = f.remaining !== undefined && f.remaining >= 0 && resetIn !== 0;
  return {
    pauseMs,
    pauseIfBehindMs: fresh && f.remaining === 0 ? (resetIn ?? periodMs) : 0,
    remaining: fresh ? Math.floor(f.remaining!) : -1,
    placeholderMs: Math.min(resetIn ?? periodMs, periodMs),
  };
}
