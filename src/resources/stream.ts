import type { Endpoint } from '../source/endpoints.ts';
import type { Lane } from '../ratelimit/types.ts';
import type { Target } from '../warehouse/targets.ts';
import { FIELD_KINDS, PERSONAL_NAMES, personalColumnsOf } from './personal-data.ts';

/**
 * What a stream declaration says: each stream is data — its endpoint, fixed parameters, how it moves forward,
 * its warehouse target and its partitions. One engine (sync/engine.ts) runs any of them.
 */

/**
 * A periodic complete re-read: the bound on changes the service gives no signal for. Each pass reads its span
 * completely (rows it does not return are gone) at most once per `everyHours`.
 */
export interface Reread {
  name: string;
  everyHours: number;
  /** The span read, around now; without it, the span of the backfill. */
  span?: { backDays: number; forwardDays: number };
  /** Which changes only this re-read brings. */
  reason: string;
}

/** One request or one paged read of everything; rows missing from a complete read get `_deleted_at`. */
export interface Full {
  kind: 'full';
}

/**
 * Paged lists with no filter: every page each run. A record that moves while pages are read can be skipped by
 * offset paging, so a row is marked gone only when two complete reads in a row miss it.
 */
export interface Snapshot {
  kind: 'snapshot';
  /**
   * Rows that follow an employee (required credential status): between complete reads (`rereads`), a run reads
   * by `param` only the employees a signal names (their individual row or credentials changed, a credential of
   * theirs expired, or the last complete read missed them), unless they are more than the list's pages.
   */
  followEmployees?: { param: string; column: string };
  rereads?: readonly Reread[];
}

/**
 * Reads what changed since the checkpoint. The checkpoint is the signpost taken when the read started,
 * written with the last page, so nothing updated while pages were read is skipped next time.
 */
export interface UpdatedSince {
  kind: 'updated-since';
  param: string;
  /** `date` parameters lose the time of day, so the next read starts a day earlier. */
  precision: 'date' | 'datetime';
  overlapMs: number;
  /** Required range parameters the endpoint filters on besides the update stamp (form start, run date). */
  range?: { start: string; end: string; backDays: number; forwardDays: number };
  /**
   * The records follow their individual (credentials): an individual whose row changed or came back since the
   * last run has its records read again by `param`, since the service does not bump their update stamp; records
   * of individuals outside `statuses` are gone from the list.
   */
  followIndividuals?: {
    param: string;
    column: string;
    statuses: readonly string[];
    /** Record column → the individual's column it repeats: only a change to these (or `derivedFrom`) is followed. */
    copies: Readonly<Record<string, string>>;
    /** Record column repeating the individual's additional job titles. */
    jobTitles?: string;
    /** Individual columns the records derive values from without repeating them. */
    derivedFrom: readonly string[];
  };
  rereads?: readonly Reread[];
}

/**
 * Reads by a date range, sliced. `append`: event-time data, read from the checkpoint up to now.
 * `reread`: period data that changes in place; backfill once, then re-read a rolling window each run.
 */
export interface Windowed {
  kind: 'windowed';
  mode: 'append' | 'reread';
  start: string;
  end: string;
  sliceDays: number;
  backfillDays: number;
  forwardDays: number;
  /** `reread`: how far back the rolling window reaches. */
  rollingDays?: number;
  /** `append`: how far before the checkpoint each read starts again, and why that is enough. */
  overlap?: { ms: number; reason: string };
  /** Rows of a completely read window that the service no longer returns get `_deleted_at`. */
  deleteMissing?: { startColumn: string; endColumn?: string };
  /**
   * An empty answer for a window the warehouse holds rows in is confirmed by reading its halves: a service that
   * answers a range it will not fulfil with an empty list must not delete the window's rows.
   */
  confirmEmpty?: boolean;
  rereads?: readonly Reread[];
}

/**
 * Re-reads only what change records name (the start instants of changed assignments), the rows that left the
 * clocked-in list, and the horizon as time moves forward. Backfills like a windowed stream the first time.
 */
export interface ChangeDriven {
  kind: 'change-driven';
  start: string;
  end: string;
  sliceDays: number;
  backfillDays: number;
  forwardDays: number;
  startColumn: string;
  /**
   * Rows still open (clocked in, not yet out): the list filtered by `param` is read each run up to `maxDays`
   * back; rows it returns are written, open rows it no longer returns are read again at their start.
   */
  openWhile: { param: string; set: string; unset: string; maxDays: number };
  /** Where the change records are: the stream that syncs them and the columns of its table this stream reads. */
  changes: {
    /** Also in the stream's `dependsOn`. */
    stream: string;
    table: string;
    /** The start of the record that changed: it is read again. */
    dayColumn: string;
    /** The changed record's key in this stream's table. */
    keyColumn: string;
    /** A change that deletes the record. */
    deleted: { column: string; value: string };
    /** When the change happened: changes from before a backfill began are held by the backfill itself. */
    eventColumn: string;
  };
  rereads?: readonly Reread[];
}

/**
 * Records with an open status that the service decides later (time off: Pending). Each run reads the open ones
 * (`statusParam`); the records the warehouse holds as open that the list no longer returns were decided (or
 * deleted), and are read with the `decided` statuses over their own periods, merged into as few paged reads as
 * the records between them allow (windows.ts `mergeByCost`).
 */
export interface StatusDriven {
  kind: 'status-driven';
  start: string;
  end: string;
  backfillDays: number;
  forwardDays: number;
  statusParam: string;
  open: string;
  /** Every status a decision leaves a record in: what a read for decisions asks for. */
  decided: readonly string[];
  statusColumn: string;
  deleteMissing: { startColumn: string; endColumn?: string };
  rereads?: readonly Reread[];
}

export type Strategy = Full | Snapshot | UpdatedSince | Windowed | ChangeDriven | StatusDriven;

export type PartitionSource = 'formIds' | 'runTypes';

/**
 * One stream of the catalog, under one name: the endpoint it reads, the table its items land in, how it moves
 * forward. `Name` and `Deps` keep the literal names, so the catalog (index.ts) derives the stream names and
 * checks every dependency names a stream.
 */
export interface StreamDef<Name extends string = string, Deps extends string = string> {
  name: Name;
  endpoint: Endpoint;
  /** Where its items land: the table, its key, child tables and history. */
  target: Target;
  strategy: Strategy;
  /** Parameters sent on every request of the stream. */
  fixed?: Record<string, unknown>;
  partitions?: PartitionSource;
  /**
   * Streams whose rows this one reads from the warehouse; they run first, except where the sync engine says a run
   * does not read them (a change-driven backfill).
   */
  dependsOn?: readonly Deps[];
  lane?: Lane;
}

export function defineStream<const Name extends string, const Deps extends string = never>(
  stream: StreamDef<Name, Deps>,
): StreamDef<Name, Deps> {
  return {
    ...stream,
    target: {
      ...stream.target,
      personal: personalColumnsOf(stream.target, stream.endpoint.item),
      personalNames: PERSONAL_NAMES,
      personalKinds: FIELD_KINDS,
    },
  };
}

/** A table keyed by the service's id of its item. */
export const byId = (resource: string, table: string, id: string): Target => ({ resource, table, key: [id] });

/** Reference lists and other small lists: one complete read each run. */
export const FULL: Full = { kind: 'full' };

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const HOURS_A_WEEK = 168;
