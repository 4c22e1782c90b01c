import { PAGE_LIMIT_MAX, type Endpoint, type ItemOf, type QueryOf } from './endpoints.ts';
import { SourceError } from './errors.ts';
import type { PageReader, PageResult } from './paging.ts';
import { buildQuery } from './query.ts';
import type { RequestOptions, Transport } from './transport.ts';

/**
 * The pages of an envelope list, asked for by offset: one request per page, some asked for ahead of the one
 * being written so a long list is not read one round trip at a time.
 */

export interface PagingOptions extends RequestOptions {
  /** Envelope page size, 1..200; default 200. */
  pageSize?: number;
  /** Envelope offset to start at; default 0. */
  startOffset?: number;
  /**
   * Envelope pages asked for at once, at most (default 1). The page after one that says `HasMoreResults` is
   * always asked for before that page is handed out; further pages are asked for ahead only as a list proves
   * long (see `pagesAhead`), and those still waiting for the limiter when the list ends are never sent.
   */
  readAhead?: number;
}

/**
 * How many pages of a list to have asked for once `full` pages came back full with more to come: the next one,
 * and one more for every 64 full pages seen. A list of up to 64 pages (every window of a backfill at `medium`)
 * never asks for a page past its end; a longer one (a whole list read at once) reads several pages at once and
 * asks for at most a few pages past its end, a small share of its own, of which those still waiting for the
 * limiter are never sent.
 */
export function pagesAhead(full: number): number {
  return 1 + Math.floor(full / 64);
}

/** A page asked for: its offset, its body to come, and how to take the request back while it waits for the limiter. */
interface Asked {
  offset: number;
  body: Promise<unknown>;
  cancel: AbortController;
}

function pageBounds(e: Endpoint, opts: PagingOptions): { limit: number; first: number; maxAhead: number } {
  const limit = opts.pageSize ?? PAGE_LIMIT_MAX;
  const first = opts.startOffset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_LIMIT_MAX) {
    throw new SourceError('bad_request', `${e.name}: pageSize must be an integer from 1 to ${PAGE_LIMIT_MAX}`, {
      endpoint: e.name,
    });
  }
  if (!Number.isInteger(first) || first < 0) {
    throw new SourceError('bad_request', `${e.name}: startOffset must be a non-negative integer`, { endpoint: e.name });
  }
  return { limit, first, maxAhead: Math.max(1, Math.floor(opts.readAhead ?? 1)) };
}

/** After a page that says more is to come: has the pages from `next` on asked for, `depth` of them. */
function askAhead(asked: Asked[], next: number, limit: number, depth: number, ask: (offset: number) => Asked): void {
  // Pages asked for ahead assumed full pages; a short one moves every offset after it.
  if (asked.length > 0 && asked[0]!.offset !== next) for (const a of asked.splice(0)) a.cancel.abort();
  for (let o = asked.length ? asked[asked.length - 1]!.offset + limit : next; asked.length < depth; o += limit)
    asked.push(ask(o));
}

/**
 * An envelope list, one request per page, until the service says `HasMoreResults: false`. Pages are asked for
 * ahead of the one handed out (see PagingOptions.readAhead); a page comes out only once it is read.
 */
export async function* envelopePages<E extends Endpoint>(
  transport: Transport,
  reader: PageReader,
  e: E,
  query: QueryOf<E>,
  opts: PagingOptions,
): AsyncIterable<PageResult<ItemOf<E>>> {
  const { limit, first, maxAhead } = pageBounds(e, opts);
  const ask = (offset: number): Asked => {
    const cancel = new AbortController();
    const path = `${e.path}?${buildQuery(e, query as Record<string, unknown>, { offset, limit })}`;
    const body = transport.json(e, { method: 'GET', path }, { ...opts, waitSignal: cancel.signal });
    // A page asked for ahead may never be awaited (the list ended first): its failure is nobody's.
    body.catch(() => undefined);
    return { offset, body, cancel };
  };
  const asked: Asked[] = [ask(first)];
  let full = 0;
  try {
    for (;;) {
      const { offset } = asked[0]!;
      // Read into a page here, so the raw body is not kept while the page is written.
      const read = reader.envelope(e, offset, await asked.shift()!.body);
      if (read.page.hasMore) {
        // Paging on would ask for the same offset forever.
        if (read.received === 0) {
          throw new SourceError('schema', `${e.name}: HasMoreResults is true on an empty page at offset ${offset}`, {
            endpoint: e.name,
          });
        }
        if (read.received === limit) full++;
        askAhead(asked, offset + read.received, limit, Math.min(maxAhead, pagesAhead(full)), ask);
      }
      yield read.page;
      if (!read.page.hasMore) return;
    }
  } finally {
    for (const a of asked) a.cancel.abort();
  }
}
