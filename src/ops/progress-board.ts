import type { Logger } from 'pino';
import type { Observer, Observers, ProgressEvent } from '../observers.ts';
import type { LiveFigures } from './live.ts';
import type { Console } from '../console.ts';
import { describeProgress } from './progress-view.ts';
import { sharedEtas } from '../sync/estimate.ts';

/** Off a terminal, a stream's progress is logged at most this often. */
export const PROGRESS_LOG_MS = 30_000;

interface Line {
  company: string;
  stream: string;
  pages: number;
  requests: number;
  rows: number;
  rejects: number;
  startedAt: number;
  lastPrinted: number;
  progress?: ProgressEvent;
}

export interface ProgressBoardOptions {
  console: Console;
  live: LiveFigures;
  /**
   * Off a terminal, log each stream's progress as a structured event at most every PROGRESS_LOG_MS (sync --once,
   * a first sync); else nothing. Text lines would land between the JSON log lines.
   */
  plain?: boolean;
  /** Where those events go. */
  log?: Logger;
}

/**
 * One line per running stream, fed by the observers' request, page, progress and stream events: rows, pages,
 * requests (retries included), rejects, its share done and time left (estimate.ts), and the company's budget left
 * and limiter wait. On a terminal the lines are a live block under the logs.
 */
export class ProgressBoard {
  readonly #lines = new Map<string, Line>();
  readonly #opts: ProgressBoardOptions;
  #timer?: NodeJS.Timeout;
  /** Progress events off a terminal: on for a first sync a person waits for, off for scheduled runs. */
  plain: boolean;

  constructor(opts: ProgressBoardOptions) {
    this.#opts = opts;
    this.plain = !!opts.plain;
  }

  #line(company: string, stream: string): Line {
    const key = `${company}/${stream}`;
    let l = this.#lines.get(key);
    if (!l)
      this.#lines.set(
        key,
        (l = { company, stream, pages: 0, requests: 0, rows: 0, rejects: 0, startedAt: Date.now(), lastPrinted: 0 }),
      );
    return l;
  }

  readonly observer: Observer = {
    request: (e) => {
      if (e.company !== undefined && e.stream !== undefined) this.#line(e.company, e.stream).requests++;
    },
    page: (e) => {
      const now = Date.now();
      const l = this.#line(e.company, e.stream);
      l.pages++;
      l.rows += e.rows;
      l.rejects += e.rejects;
      if (this.#opts.console.live) this.#schedule();
      else if (this.plain && now - Math.max(l.startedAt, l.lastPrinted) >= PROGRESS_LOG_MS) {
        l.lastPrinted = now;
        this.#logProgress(l);
      }
    },
    progress: (e) => {
      this.#line(e.company, e.stream).progress = e;
      if (this.#opts.console.live) this.#schedule();
    },
    stream: (e) => {
      this.#lines.delete(`${e.company}/${e.stream}`);
      if (this.#opts.console.live) this.#schedule();
    },
  };

  listen(observers: Observers): () => void {
    const off = observers.add(this.observer);
    return () => {
      off();
      this.clear();
    };
  }

  /** Removes the live block (before a summary is printed). */
  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#opts.console.setLive([]);
  }

  /** What the live block shows now. */
  lines(): string[] {
    return [...this.#lines.values()].map((l) => this.#format(l));
  }

  #schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      const lines = this.lines();
      this.#opts.console.setLive(lines.length ? [`running (${lines.length}):`, ...lines.map((l) => `  ${l}`)] : []);
    }, 200);
    this.#timer.unref();
  }

  #logProgress(l: Line): void {
    const { company, stream, rows, pages, requests, rejects } = l;
    const p = l.progress;
    const progress = p && { basis: p.basis, fraction: p.fraction, etaSeconds: this.#eta(l) ?? null };
    this.#opts.log?.info(
      { company, stream, rows, pages, requests, rejects, ...(progress ? { progress } : {}) },
      'stream progress',
    );
  }

  /** Seconds until the stream is read, its company's streams under way sharing the key's budget. */
  #eta(l: Line): number | undefined {
    const mine = l.progress;
    if (mine?.pagesLeft == null || !mine.perSecond) return undefined;
    const peers = [...this.#lines.values()].filter((x) => x.company === l.company && x.progress?.pagesLeft != null);
    const etas = sharedEtas(
      peers.map((x) => x.progress!.pagesLeft!),
      mine.perSecond,
    );
    return Math.round(etas[peers.indexOf(l)]!);
  }

  #format(l: Line): string {
    const key = this.#opts.live.key(l.company);
    const budget =
      key?.limit !== undefined && key.remaining !== undefined ? `budget ${key.remaining}/${key.limit}` : 'budget -';
    const now = Date.now();
    // When the period's budget is spent, the next request starts at its reset: the limiter's own ETA.
    const eta =
      key?.remaining === 0 && key.resetAtMs !== undefined && key.resetAtMs > now
        ? `, next request in ${Math.ceil((key.resetAtMs - now) / 1000)} s`
        : '';
    const wait =
      key && key.lastWaitMs >= 1000 ? `, last waited ${(key.lastWaitMs / 1000).toFixed(0)} s for the limiter` : '';
    const secs = ((now - l.startedAt) / 1000).toFixed(0);
    const p = l.progress;
    const share = p ? `${describeProgress({ ...p, etaSeconds: this.#eta(l) ?? null })}  ` : '';
    return `${l.stream.padEnd(32)} ${String(l.rows).padStart(9)} rows ${String(l.pages).padStart(6)} pages ${String(l.requests).padStart(6)} requests ${l.rejects ? `${l.rejects} rejects ` : ''} ${secs.padStart(4)} s  ${share}${budget}${eta}${wait}`;
  }
}
