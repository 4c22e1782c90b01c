/**
 * How far a stream's run is, and how long the rest takes. The service's pages carry no total count (ResultCount
 * is the page's own), so the pages a read has left are estimated from what the read has seen so far: a pass's
 * slices done and planned, each weighted by the pages a slice takes; a stream's partitions done and planned. The
 * time left follows from the pages left and the key's budget (L requests per W), not from the time spent so far.
 */
import type { RateLimit } from '../config.ts';
import type { ProgressBasis } from '../observers.ts';

/** Where one stream's run stands. `fraction` and `pagesLeft` are null where the basis is `unknown`. */
export interface StreamEstimate {
  basis: ProgressBasis;
  fraction: number | null;
  pagesDone: number;
  pagesLeft: number | null;
}

interface Slice {
  start: string;
  pages: number;
  records: number;
  done: boolean;
}

interface PartitionState {
  /** Slices of the pass planned, done by earlier runs, and read by this one (by start). */
  planned?: number;
  doneBefore: number;
  slices: Map<string, Slice>;
  /** Pages read outside the slices of the pass under way (the whole list, a rolling window, an earlier pass). */
  pages: number;
  finished: boolean;
}

/** Counts one partition's (or one of its slices') pages as they are written. */
export interface PageCounter {
  /** A page of `records` records (refused ones too) was written. */
  page(records: number): void;
  /** A pass of `planned` slices begins, `doneBefore` of them read by earlier runs. */
  plan(planned: number, doneBefore: number): void;
  /** The counter of one slice of this partition's pass. */
  slice(start: string): PageCounter;
  /** A slice read through to its end. */
  settle(): void;
}

/** One stream run's progress, fed by its reads; `estimate()` says where it stands. */
export class StreamProgress {
  readonly #partitions = new Map<string, PartitionState>();
  readonly #planned: number;

  /** `partitions`: the keys of the stream's partitions this run reads. */
  constructor(partitions: readonly string[]) {
    this.#planned = partitions.length;
    for (const p of partitions)
      this.#partitions.set(p, { doneBefore: 0, slices: new Map(), pages: 0, finished: false });
  }

  #state(partition: string): PartitionState {
    let s = this.#partitions.get(partition);
    if (!s) this.#partitions.set(partition, (s = { doneBefore: 0, slices: new Map(), pages: 0, finished: false }));
    return s;
  }

  /** The partition was read through. */
  finish(partition: string): void {
    this.#state(partition).finished = true;
  }

  counter(partition: string): PageCounter {
    const state = this.#state(partition);
    // A pass begun again (a re-read after a backfill) is planned afresh.
    const plan = (planned: number, doneBefore: number) => {
      state.pages = pagesOf(state);
      Object.assign(state, { planned, doneBefore, slices: new Map() });
    };
    const sliceCounter = (start: string): PageCounter => {
      const slice = state.slices.get(start) ?? { start, pages: 0, records: 0, done: false };
      state.slices.set(start, slice);
      const page = (records: number) => {
        slice.pages++;
        slice.records += records;
      };
      return { page, plan, slice: sliceCounter, settle: () => void (slice.done = true) };
    };
    return { page: () => void state.pages++, plan, slice: sliceCounter, settle: () => undefined };
  }

  estimate(): StreamEstimate {
    const states = [...this.#partitions.values()];
    const pagesDone = states.reduce((n, s) => n + s.pages + sum([...s.slices.values()].map((x) => x.pages)), 0);
    const passes = states.filter((s) => s.planned !== undefined && !s.finished);
    if (passes.length > 0) {
      const parts = passes.map(passEstimate);
      const done = sum(parts.map((p) => p.done));
      const total = sum(parts.map((p) => p.total));
      return { basis: 'windows', fraction: total > 0 ? done / total : 0, pagesDone, pagesLeft: total - done };
    }
    const finished = states.filter((s) => s.finished);
    if (this.#planned > 1) {
      const left = this.#planned - finished.length;
      const perPartition = finished.length > 0 ? sum(finished.map(pagesOf)) / finished.length : undefined;
      return {
        basis: 'partitions',
        fraction: finished.length / this.#planned,
        pagesDone,
        pagesLeft: perPartition === undefined ? null : Math.max(0, left * perPartition),
      };
    }
    return { basis: 'unknown', fraction: null, pagesDone, pagesLeft: null };
  }
}

const sum = (xs: readonly number[]) => xs.reduce((n, x) => n + x, 0);
const pagesOf = (s: PartitionState) => s.pages + sum([...s.slices.values()].map((x) => x.pages));

/**
 * The pages a slice not read yet is expected to take: as many as the slices read through took on average, from
 * the first that held records on. Slices are read oldest first, and a company's records begin somewhere: the
 * empty slices before that (a page each) say nothing of those after. Before any slice is read through, the slice
 * under way that took most pages stands in for the average.
 */
function expectedPages(slices: readonly Slice[]): number {
  const settled = slices.filter((x) => x.done).sort((a, b) => (a.start < b.start ? -1 : 1));
  const first = settled.findIndex((x) => x.records > 0);
  const held = first < 0 ? settled : settled.slice(first);
  const open = slices.filter((x) => !x.done).map((x) => x.pages);
  return Math.max(1, held.length > 0 ? sum(held.map((x) => x.pages)) / held.length : Math.max(0, ...open));
}

/**
 * A pass in page units. A slice not read yet (or read by an earlier run) is expected to take `expectedPages`;
 * one under way at least one page more than it took so far.
 */
function passEstimate(s: PartitionState): { done: number; total: number } {
  const slices = [...s.slices.values()];
  const settled = slices.filter((x) => x.done);
  const open = slices.filter((x) => !x.done);
  const expected = expectedPages(slices);
  const unread = Math.max(0, (s.planned ?? 0) - s.doneBefore - slices.length);
  const settledPages = sum(settled.map((x) => x.pages));
  const openDone = sum(open.map((x) => x.pages));
  const openTotal = sum(open.map((x) => Math.max(expected, x.pages + 1)));
  return {
    done: s.doneBefore * expected + settledPages + openDone,
    total: s.doneBefore * expected + settledPages + openTotal + unread * expected,
  };
}

/** Requests a key may start per second under its budget. */
export const requestsPerSecond = (budget: RateLimit) => budget.limit / (budget.periodMs / 1000);

/**
 * Seconds until each stream of one key is read through, when the streams under way share its budget equally
 * until each ends (a stream that ends leaves its share to the others). `pagesLeft` in, seconds out, in order.
 */
export function sharedEtas(pagesLeft: readonly number[], perSecond: number): number[] {
  const order = pagesLeft.map((p, i) => ({ p: Math.max(0, p), i })).sort((a, b) => a.p - b.p);
  const etas = new Array<number>(pagesLeft.length);
  let t = 0;
  let read = 0;
  order.forEach(({ p, i }, k) => {
    const sharing = order.length - k;
    t += ((p - read) * sharing) / perSecond;
    read = p;
    etas[i] = t;
  });
  return etas;
}
