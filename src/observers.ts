import { AsyncLocalStorage } from 'node:async_hooks';
import type { Lane } from './ratelimit/types.ts';

/**
 * What the client, the limiter and the engine report as it happens. Metrics, the status page's live figures
 * and run summaries are listeners: nothing polls a component's private counters.
 */

/** How one HTTP attempt ended, in words an operator can alert on. */
export type RequestOutcome =
  | 'ok'
  | 'client_error'
  | 'rate_limited'
  | 'server_error'
  | 'network'
  | 'timeout'
  | 'aborted';

/** One HTTP attempt to the service: a retry is an event of its own. */
export interface RequestEvent {
  /** The company key, where the client serves one. */
  company?: string;
  /** The limiter key: a hash of the API key, never the key. */
  key: string;
  endpoint: string;
  method: 'GET' | 'POST';
  lane: Lane;
  /** The HTTP status, when one arrived. */
  status?: number;
  outcome: RequestOutcome;
  durationMs: number;
  /** 0 for the first attempt. */
  attempt: number;
  /** The stream whose run sent it, when one did (see `streamRun`). */
  stream?: string;
}

/** Time one request spent waiting for the limiter before it could start. */
export interface LimiterWaitEvent {
  company?: string;
  key: string;
  lane: Lane;
  waitMs: number;
}

/** What the service said of the key's budget (`X-RateLimit-*`). */
export interface BudgetEvent {
  company?: string;
  key: string;
  limit?: number;
  remaining?: number;
  resetAtMs?: number;
}

/** One page written to the warehouse. */
export interface PageEvent {
  company: string;
  stream: string;
  partition: string;
  rows: number;
  rejects: number;
  deleted: number;
}

/** A stream run that ended. */
export interface StreamEvent {
  company: string;
  stream: string;
  outcome: 'ok' | 'failed' | 'interrupted';
  durationMs: number;
  rows: number;
  rejects: number;
  deleted: number;
  requests: number;
  /** When it ended (ms since the epoch). */
  at: number;
}

/**
 * What an estimate rests on: `windows`, a pass's slices done over planned, weighted by the pages each takes;
 * `partitions`, a stream's partitions done over planned; `unknown`, a read with nothing to compare against (a
 * first `updatedSince` read, an unpaged list): its pages are counted, its share is not known.
 */
export type ProgressBasis = 'windows' | 'partitions' | 'unknown';

/** Where a stream's run stands (sync/estimate.ts), told every few seconds while it runs. */
export interface ProgressEvent {
  company: string;
  stream: string;
  basis: ProgressBasis;
  /** 0..1; null where the basis is `unknown`. */
  fraction: number | null;
  pagesDone: number;
  pagesLeft: number | null;
  /** Requests the company's key may start per second; null when its budget is not known. */
  perSecond: number | null;
}

/** A pushed change that reached a final state, or was found in doubt. */
export interface PushEvent {
  company: string;
  kind: 'individual' | 'certification' | 'verification';
  outcome: 'applied' | 'refused' | 'failed' | 'in_doubt';
  /** From intake to this outcome. */
  latencyMs: number;
}

/** A field the service sends that no column maps, first seen (`appeared`) or found gone (sync/schema-watch.ts). */
export interface SchemaChangeEvent {
  company: string;
  stream: string;
  kind: 'appeared' | 'gone';
  path: string;
}

export interface Observer {
  request?(e: RequestEvent): void;
  limiterWait?(e: LimiterWaitEvent): void;
  budget?(e: BudgetEvent): void;
  page?(e: PageEvent): void;
  stream?(e: StreamEvent): void;
  progress?(e: ProgressEvent): void;
  push?(e: PushEvent): void;
  schemaChange?(e: SchemaChangeEvent): void;
}

type Events = { [K in keyof Observer]-?: Parameters<NonNullable<Observer[K]>>[0] };

/**
 * The stream run a piece of work belongs to. The runner runs each stream inside it, so a request the client sends
 * on the stream's behalf names the stream, though the client knows nothing of streams; `onRequest` hears exactly
 * that run's attempts (two runs may read one endpoint at once).
 */
export interface StreamRunContext {
  stream: string;
  onRequest?(e: RequestEvent): void;
}

export const streamRun = new AsyncLocalStorage<StreamRunContext>();

/** A set of observers that is itself an observer; a listener that throws never breaks the work it watches. */
export class Observers {
  readonly #list = new Set<Observer>();

  /** Adds a listener; the returned function removes it. */
  add(o: Observer): () => void {
    this.#list.add(o);
    return () => this.#list.delete(o);
  }

  emit<K extends keyof Events>(kind: K, event: Events[K]): void {
    for (const o of this.#list) {
      try {
        (o[kind] as ((e: Events[K]) => void) | undefined)?.(event);
      } catch {
        // A broken listener must not fail a request or a page.
      }
    }
  }
}

/** The outcome of an HTTP status (or of no status, for an error before one arrived). */
export function outcomeOf(status: number | undefined, errorKind?: string): RequestOutcome {
  if (status === undefined) {
    if (errorKind === 'timeout') return 'timeout';
    if (errorKind === 'aborted') return 'aborted';
    return 'network';
  }
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server_error';
  if (status >= 400) return errorKind === 'rate_limit' ? 'rate_limited' : 'client_error';
  if (errorKind === 'timeout') return 'timeout';
  if (errorKind === 'network') return 'network';
  return 'ok';
}
