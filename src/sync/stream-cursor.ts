/**
 * The one owner of a stream partition's progress (after Airbyte's concurrent `Cursor`): the engine loads the state
 * a run goes on from and saves the state it ends with; a strategy's reads observe their pages through it, each page
 * storing what it completes in its own transaction, and close the slices of a pass.
 */
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { Warehouse } from '../warehouse/connection.ts';
import { readCheckpoint, type CheckpointWrite, type CursorEdit } from '../warehouse/state.ts';
import { writePage } from '../warehouse/upsert.ts';
import type { Target } from '../warehouse/targets.ts';
import { PASS_AT, PASS_DONE, readStoredCursor, type ReadPoint } from './cursors.ts';

/** Where a page stands in its read: its offset, whether it completes the read, and where the read goes on after it. */
export interface PageAt {
  offset: number;
  last: boolean;
  /** Set on a page with records: the point a read resumed after this page goes on from. */
  point?: ReadPoint;
}

/**
 * One read's progress. Its last page, and when `everyPage` every page of a list the service pages by offset (which a
 * read can resume from), stores what `observe` answers with it.
 */
export interface ReadProgress {
  readonly everyPage: boolean;
  observe(page: PageAt): CheckpointWrite;
}

/** The partition whose progress a StreamCursor owns, and what it tells of a stored state it cannot use. */
export interface CursorScope {
  warehouse: Warehouse;
  companyKey: string;
  stream: string;
  target: Target;
  partition: string;
  /** The run's `_synced_at` (a checkpoint written alone is a page with no rows). */
  syncedAt: Date;
  /** Ignore the stored state: the run reads everything again. */
  fullRefresh?: boolean;
  log: Logger;
  /** Where a stored state that cannot be used is counted, with why (the run's record). */
  restarted: string[];
}

export class StreamCursor {
  constructor(private readonly scope: CursorScope) {}

  /**
   * The state a run goes on from (migrated from an earlier version's format). One that cannot be used (not a
   * cursor, or of a newer version) counts as none: this partition reads everything again, which the run's log and
   * record say, rather than failing every run until someone asks for a full refresh.
   */
  async load<T>(schema: ZodType<T>): Promise<T | undefined> {
    const s = this.scope;
    if (s.fullRefresh) return undefined;
    const r = readStoredCursor(schema, await readCheckpoint(s.warehouse, s.companyKey, s.stream, s.partition));
    if (r.ok) return r.cursor;
    s.log.warn(
      { stream: s.stream, partition: s.partition, reason: r.error.reason },
      'the stored cursor cannot be used; this partition reads everything again',
    );
    s.restarted.push(`${s.partition}: ${r.error.reason}`);
    return undefined;
  }

  /** Stores the whole state, outside a page: when the partition is done, or before a pass's slices edit it. */
  async save(state: unknown): Promise<void> {
    await this.store({ cursor: state });
  }

  /** A read whose pages each store the whole state `at(page)`. */
  whole(at: (page: PageAt) => unknown): ReadProgress {
    return { everyPage: true, observe: (page) => ({ cursor: at(page) }) };
  }

  /**
   * A slice of the stored pass: its last page closes it, and when `everyPage` each page before stores where it
   * stands. Slices read side by side each edit their own part of the stored pass.
   */
  slice(id: string, everyPage: boolean): ReadProgress {
    return { everyPage, observe: (page) => ({ edit: sliceEdit(id, page) }) };
  }

  /** Closes a slice read without a last page of its own (its halves were read instead). */
  async closeSlice(id: string): Promise<void> {
    await this.store({ edit: sliceEdit(id, { offset: 0, last: true }) });
  }

  /** A checkpoint with no rows of its own: a page write, behind the run's fence. */
  private async store(checkpoint: CheckpointWrite): Promise<void> {
    const s = this.scope;
    await writePage(s.warehouse, {
      target: s.target,
      stream: s.stream,
      companyKey: s.companyKey,
      items: [],
      syncedAt: s.syncedAt,
      checkpoint: { partition: s.partition, ...checkpoint },
    });
  }
}

/** A slice's progress after `page`: done with its last page, else where it stands. */
function sliceEdit(slice: string, page: PageAt): CursorEdit {
  return page.last
    ? { kind: 'settle', object: PASS_AT, key: slice, list: PASS_DONE }
    : { kind: 'put', object: PASS_AT, key: slice, value: page.point ?? { offset: page.offset } };
}
