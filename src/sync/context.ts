/** What the run of one stream is given, and what it counts. */
import type { Logger } from 'pino';
import type { SourceClient } from '../source/client.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { Retention, RateLimit } from '../config.ts';
import type { Observers } from '../observers.ts';
import type { PageCounter } from './estimate.ts';
import type { StreamCursor } from './stream-cursor.ts';
import type { Partition } from './partitions.ts';
import type { StreamDef } from '../resources/stream.ts';

/** What a stream run needs from the outside world. */
export interface SyncContext {
  companyKey: string;
  client: SourceClient;
  warehouse: Warehouse;
  log: Logger;
  /** The service's clock: checkpoints and windows are in its time, not ours. */
  now: () => Date;
  /** Asks the service for its time when what we know of it may be stale; runs once at the start of a run. */
  refreshClock?: () => Promise<unknown>;
  formIds: number[];
  runTypeIds: number[];
  /** Sub-windows read at once per stream; windowsAtOnce gives the default. */
  windowConcurrency?: number;
  /** Pages of one list asked for at once, at most (client.ts `readAhead`); default READ_AHEAD. */
  readAhead?: number;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Told of every page written and every stream that ends. */
  observers?: Observers;
  /** How long housekeeping keeps the bookkeeping; default DEFAULT_RETENTION. */
  retention?: Retention;
  /** The company key's budget: how long the pages a run has left take (estimate.ts). */
  budget?: RateLimit;
  /** Streams the company turned off (the companies table, as of this run's start): a run does not read them. */
  streamsOff?: readonly string[];
  /** Aborted once the company turns the stream off: its run stops after the page in flight. */
  streamStopped?: (stream: string) => AbortSignal | undefined;
}

/** The companies a process runs streams for, one context each. */
export interface CompanyContexts {
  /** The companies not paused, as of the last read of the companies table. */
  readonly contexts: readonly SyncContext[];
  /** A job's company, the companies table read again first when it is new to this process. */
  resolve(key: string): Promise<RegisteredCompany | undefined>;
}

/** One company as a running process runs it. */
export interface RegisteredCompany {
  ctx: SyncContext;
  paused: boolean;
  /** Aborted once the company is paused or removed: its runs stop after the page in flight. */
  stopped: AbortSignal;
}

export interface Progress {
  stream: string;
  partition: string;
  requests: number;
  rows: number;
  rejects: number;
}

export interface StreamCounters {
  requests: number;
  rows: number;
  rejects: number;
  deleted: number;
  /** Rows an append stream's overlap read again that were stored already: what the overlap absorbed. */
  duplicates: number;
  /** Complete reads whose deletion inference was skipped, each with why. */
  inferenceSkipped: string[];
  /** Periodic complete re-reads this run did (or resumed). */
  rereads: string[];
  /** Rows each re-read of `rereads` returned, in its order: the pages a re-read cannot do without. */
  rereadRows: number[];
  /** Requests each re-read of `rereads` sent, in its order. */
  rereadRequests: number[];
  /** Windows answered empty whose halves were not: a refusal that did not say so. */
  silentRefusals: number;
  /** Partitions whose stored cursor could not be used, each with why: they read everything again. */
  cursorsRestarted: string[];
}

export interface RunOptions {
  /** Ignore checkpoints: read everything again (and mark what is gone). */
  fullRefresh?: boolean;
  runId?: number;
}

/** One partition of one stream, as one run reads it. */
export interface StreamRun {
  ctx: SyncContext;
  stream: StreamDef;
  partition: Partition;
  counters: StreamCounters;
  /** This partition's own requests and rows: partitions run side by side and share `counters`. */
  tally: { requests: number; rows: number };
  syncedAt: Date;
  opts: RunOptions;
  /** Owns this partition's progress: loaded and saved by the engine, observed and closed by the reads. */
  cursor: StreamCursor;
  /** Counts this read's pages (of its partition, or of one slice of its pass) for its progress. */
  progress?: PageCounter;
}

/** Windows, slices, partitions or followed ids of one stream read at once: the context's, else four. */
export function windowsAtOnce(ctx: Pick<SyncContext, 'windowConcurrency'>): number {
  return ctx.windowConcurrency ?? 4;
}

export function emptyCounters(): StreamCounters {
  return {
    requests: 0,
    rows: 0,
    rejects: 0,
    deleted: 0,
    duplicates: 0,
    inferenceSkipped: [],
    rereads: [],
    rereadRows: [],
    rereadRequests: [],
    silentRefusals: 0,
    cursorsRestarted: [],
  };
}
