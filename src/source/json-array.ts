import type { Endpoint, ItemOf } from './endpoints.ts';
import { SourceError } from './errors.ts';
import { httpResponse, type OpenResponse } from './http.ts';
import { parseJson, truncatedBody } from './json-body.ts';
import { jsonText } from './json-text.ts';
import type { PageReader, PageResult } from './paging.ts';
import type { RequestOptions, Transport } from './transport.ts';

/**
 * Splits a JSON body into the elements of its top-level array as its bytes arrive, so a list of any length is
 * parsed a few elements at a time instead of held whole. A body that is not an array is kept whole and parsed
 * at the end (an envelope or a single object: small, and read by the tolerant container readers).
 *
 * It works on bytes: every structural character of JSON is ASCII, and no byte of a multi-byte UTF-8 sequence
 * is, so an element's bytes are found without decoding and decoded once, whole, even when split across chunks.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

export class IncompleteJson extends Error {
  override readonly name = 'IncompleteJson';
}

type State = 'start' | 'between' | 'element' | 'after' | 'other';

export class JsonArraySplitter {
  #state: State = 'start';
  /** Nesting inside the current element (0: a scalar, or between its containers). */
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Bytes of the element being read (or of the whole body when it is not an array). */
  #pieces: Buffer[] = [];
  /** Between elements: whether the last thing read was an element (a `,` or `]` may follow) or a `,`. */
  #afterElement = false;
  #elements = 0;

  /** True once the body showed it is not an array: `whole()` gives it at the end. */
  get isArray(): boolean {
    return this.#state !== 'other';
  }

  /** Feeds the next bytes; returns the elements completed by them, parsed. */
  push(chunk: Buffer): unknown[] {
    const out: unknown[] = [];
    let start = this.#state === 'element' ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i]!;
      switch (this.#state) {
        case 'other':
          this.#pieces.push(chunk.subarray(i));
          return out;
        case 'start':
          if (isSpace(b)) continue;
          if (b !== OPEN_BRACKET) {
            this.#state = 'other';
            this.#pieces.push(chunk.subarray(i));
            return out;
          }
          this.#state = 'between';
          continue;
        case 'after':
          if (!isSpace(b)) throw new IncompleteJson('data after the end of the list');
          continue;
        case 'between':
          if (isSpace(b)) continue;
          if (b === COMMA) {
            if (!this.#afterElement) throw new IncompleteJson('a comma without an element before it');
            this.#afterElement = false;
            continue;
          }
          if (b === CLOSE_BRACKET) {
            if (!this.#afterElement && this.#elements > 0)
              throw new IncompleteJson('a comma before the end of the list');
            this.#state = 'after';
            continue;
          }
          if (this.#afterElement) throw new IncompleteJson('two elements without a comma between them');
          this.#state = 'element';
          start = i;
          this.#depth = 0;
          // The first byte is read as part of the element below.
          if (this.#step(b)) {
            out.push(this.#take(chunk, start, i + 1));
            start = -1;
          }
          continue;
        case 'element': {
          if (this.#depth === 0 && !this.#inString && (b === COMMA || b === CLOSE_BRACKET || isSpace(b))) {
            // The end of a scalar: the delimiter belongs to the list.
            out.push(this.#take(chunk, start, i));
            start = -1;
            this.#state = 'between';
            i--;
            continue;
          }
          if (this.#step(b)) {
            out.push(this.#take(chunk, start, i + 1));
            start = -1;
          }
          continue;
        }
      }
    }
    if (this.#state === 'element' && start >= 0) this.#pieces.push(chunk.subarray(start));
    return out;
  }

  /** Reads one byte of an element; true when it closes the element's outermost container or string. */
  #step(b: number): boolean {
    if (this.#inString) {
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        return this.#depth === 0;
      }
      return false;
    }
    if (b === QUOTE) this.#inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) this.#depth++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      this.#depth--;
      if (this.#depth < 0) throw new IncompleteJson('a closing bracket without its opening one');
      return this.#depth === 0;
    }
    return false;
  }

  #take(chunk: Buffer, start: number, end: number): unknown {
    this.#pieces.push(chunk.subarray(start, end));
    const text = jsonText(this.#pieces.length === 1 ? this.#pieces[0]! : Buffer.concat(this.#pieces));
    this.#pieces = [];
    this.#state = 'between';
    this.#afterElement = true;
    this.#elements++;
    try {
      return JSON.parse(text);
    } catch {
      throw new IncompleteJson('an element of the list is not valid JSON');
    }
  }

  /** Called at the end of the body: the elements it completes (a last scalar), or throws when it is cut short. */
  end(): unknown[] {
    if (this.#state === 'after') return [];
    if (this.#state === 'other') return [];
    throw new IncompleteJson(this.#state === 'start' ? 'an empty body' : 'the list ends before its closing bracket');
  }

  /** The whole body, when it was not an array. */
  wholeBody(): Buffer {
    const body = Buffer.concat(this.#pieces);
    this.#pieces = [];
    return body;
  }
}

/**
 * Records per page of a plain-array list read as it arrives: the engine writes each page before the next is
 * parsed, so a list of any length holds at most this many records (and their rows) at once.
 */
export const STREAMED_PAGE_ITEMS = 1000;

/**
 * A plain-array list read as its bytes arrive, in pages of STREAMED_PAGE_ITEMS records; `hasMore` is false on
 * the last page only. When the body breaks after pages were handed out, the whole list is read again from its
 * start: its pages come again (the writes are idempotent upserts), and no record can be skipped, as resuming
 * at a count could if the list changed between the two reads.
 */
export async function* streamedPages<E extends Endpoint>(
  transport: Transport,
  reader: PageReader,
  e: E,
  path: string,
  opts: RequestOptions,
): AsyncIterable<PageResult<ItemOf<E>>> {
  for (let attempt = 0; ; attempt++) {
    const open = await transport.attempts(e, { method: 'GET', path }, opts, async (o) => o);
    let handedOut = 0;
    try {
      for await (const page of arrayPages(transport, reader, e, open)) {
        handedOut += page.items.length + page.rejects.length;
        yield page;
      }
      return;
    } catch (err) {
      if (!(err instanceof SourceError) || !err.retryable || attempt >= transport.maxRetries) throw err;
      // The same line as any retry; `handedOut` says how many records will come again.
      await transport.pause(e, err, attempt, { signal: opts.signal, note: { fromStart: true, handedOut } });
    } finally {
      open.discard();
    }
  }
}

/** One response's pages; a body that is not an array (an envelope, one object, an HTML page) is read whole. */
async function* arrayPages<E extends Endpoint>(
  transport: Transport,
  reader: PageReader,
  e: E,
  open: OpenResponse,
): AsyncIterable<PageResult<ItemOf<E>>> {
  const splitter = new JsonArraySplitter();
  const pending: unknown[] = [];
  let offset = 0;
  try {
    for await (const chunk of open.body()) {
      transport.received(chunk.length);
      for (const element of splitter.push(chunk)) {
        // A full page goes out once another record follows it, so that hasMore is true only when there is more.
        if (pending.length >= STREAMED_PAGE_ITEMS) {
          const at = offset;
          offset += pending.length;
          // Taken out of `pending` first: the raw records are not kept while the page is written.
          yield reader.page(e, pending.splice(0), at, true, {});
        }
        pending.push(element);
      }
    }
    splitter.end();
    if (!splitter.isArray) {
      yield reader.whole(e, parseJson(e.name, httpResponse(open.status, open.headers, splitter.wholeBody())));
      return;
    }
  } catch (err) {
    if (err instanceof IncompleteJson) throw truncatedBody(e.name, open.status, err.message);
    throw err;
  }
  yield reader.page(e, pending, offset, false, {});
}
