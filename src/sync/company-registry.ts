import type { Logger } from 'pino';
import { formatRateLimit, type RateLimit, type Retention } from '../config.ts';
import type { Observers } from '../observers.ts';
import type { RateLimiter } from '../ratelimit/types.ts';
import type { Sealer } from '../warehouse/secret.ts';
import { clockProbe } from '../resources/index.ts';
import { SourceClient } from '../source/client.ts';
import { readCompaniesWithKeys, type CompanyWithKey } from '../warehouse/company-records.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { CompanyStopped } from './company-stopped.ts';
import type { RegisteredCompany, SyncContext } from './context.ts';

/**
 * The companies a running process syncs, read again from the `companies` table every `refreshMs`: the scheduler,
 * the workers and the in-process runner ask it at each tick and job instead of holding a list from start-up. A
 * company added meanwhile gets a client (and its first runs, through `onAdded`); a paused or removed one has its
 * runs stopped after their page (`stopped`); a rotated key is read by its client from the next request.
 */

export interface CompanyRegistryOptions {
  warehouse: Warehouse;
  sealer: Sealer;
  observers: Observers;
  log: Logger;
  retention: Retention;
  /** The limiter of a budget: companies on the same budget share one. */
  limiterFor: (budget: RateLimit) => RateLimiter;
  refreshMs: number;
  /**
   * The API keys of the companies this process's environment names (WFS_COMPANIES, WFS_API_KEY): used for those
   * companies as they are, so a process whose WFS_SECRET_KEY differs from the one that sealed them still runs them.
   */
  environmentKeys?: ReadonlyMap<string, string>;
}

type Usable = CompanyWithKey & { apiKey: string };

interface Entry {
  record: Usable;
  /** Read by the client for each request: a rotation replaces it here. */
  apiKey: string;
  ctx: SyncContext;
  stop: AbortController;
  /** Per stream on: aborted when the company turns it off. */
  streamStops: Map<string, AbortController>;
}

export class CompanyRegistry {
  readonly #o: CompanyRegistryOptions;
  readonly #entries = new Map<string, Entry>();
  /** Clients replaced (a base URL or budget changed): closed with the registry, as runs may still use them. */
  readonly #retired: SourceClient[] = [];
  readonly #added = new Set<(keys: string[]) => void>();
  /** Companies whose key this process cannot open, told once each. */
  readonly #unreadable = new Set<string>();
  #timer?: NodeJS.Timeout;
  /** After the first read: the companies found then are where the process starts, not news to log. */
  #loaded = false;
  #refreshing?: Promise<void>;

  constructor(o: CompanyRegistryOptions) {
    this.#o = o;
  }

  /** Reads the table now; later refreshes run every `refreshMs` until `close`. */
  async start(): Promise<void> {
    await this.refresh();
    this.#timer = setInterval(() => {
      this.refresh().catch((err: unknown) =>
        this.#o.log.warn({ err }, 'could not read the companies table; the companies stay as they were'),
      );
    }, this.#o.refreshMs);
    this.#timer.unref();
  }

  /** Reads the table again; one refresh at a time. */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#load().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  /** Tells `listener` the keys of companies that appear (or are resumed) at a refresh; returns how to stop. */
  onAdded(listener: (keys: string[]) => void): () => void {
    this.#added.add(listener);
    return () => this.#added.delete(listener);
  }

  /** The keys of the companies not paused. */
  activeKeys(): string[] {
    return [...this.#entries.values()].filter((e) => !e.record.paused).map((e) => e.record.key);
  }

  /**
   * The keys of the companies not paused that a job of these streams reads something for: each with one of them on
   * (a job of no stream, housekeeping, runs for each).
   */
  keysToRun(streams: readonly string[]): string[] {
    return [...this.#entries.values()]
      .filter(
        (e) => !e.record.paused && (streams.length === 0 || streams.some((s) => !e.record.streamsOff.includes(s))),
      )
      .map((e) => e.record.key);
  }

  /** Every company's key, paused or not. */
  keys(): string[] {
    return [...this.#entries.keys()];
  }

  /** The contexts of the companies not paused. */
  contexts(): SyncContext[] {
    return [...this.#entries.values()].filter((e) => !e.record.paused).map((e) => e.ctx);
  }

  get(key: string): RegisteredCompany | undefined {
    const e = this.#entries.get(key);
    return e && { ctx: e.ctx, paused: e.record.paused, stopped: e.stop.signal };
  }

  /** The company, reading the table again first when it is not known yet (added since the last refresh). */
  async resolve(key: string): Promise<RegisteredCompany | undefined> {
    if (!this.#entries.has(key)) await this.refresh();
    return this.get(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#refreshing?.catch(() => undefined);
    for (const e of this.#entries.values()) e.stop.abort(new Error('shutdown'));
    await Promise.allSettled([
      ...[...this.#entries.values()].map((e) => e.ctx.client.close()),
      ...this.#retired.map((c) => c.close()),
    ]);
    this.#entries.clear();
  }

  async #load(): Promise<void> {
    const rows = (await readCompaniesWithKeys(this.#o.warehouse, this.#o.sealer)).flatMap((row) => this.#usable(row));
    const seen = new Set<string>();
    const appeared: string[] = [];
    for (const row of rows) {
      seen.add(row.key);
      const known = this.#entries.get(row.key);
      if (
        !known ||
        known.record.baseUrl !== row.baseUrl ||
        formatRateLimit(known.record.rateLimit) !== formatRateLimit(row.rateLimit)
      ) {
        if (known) {
          known.stop.abort(
            new CompanyStopped(
              `company ${row.key} changed (base URL or budget): its runs stop, and the next ones use the new settings`,
            ),
          );
          this.#retired.push(known.ctx.client);
        }
        this.#entries.set(row.key, this.#entry(row));
        if (!row.paused) appeared.push(row.key);
        if (!known && this.#loaded) this.#o.log.info({ company: row.key, paused: row.paused }, 'company added');
        continue;
      }
      if (known.apiKey !== row.apiKey) {
        known.apiKey = row.apiKey;
        this.#o.log.info({ company: row.key }, 'company API key rotated: the next request uses the new key');
      }
      if (row.paused && !known.record.paused) {
        known.stop.abort(new CompanyStopped(`company ${row.key} paused`));
        this.#o.log.info({ company: row.key }, 'company paused: its runs stop after the page in flight');
      } else if (!row.paused && known.record.paused) {
        known.stop = new AbortController();
        appeared.push(row.key);
        this.#o.log.info({ company: row.key }, 'company resumed');
      }
      this.#switchStreams(known, row);
      known.record = row;
      known.ctx.formIds = row.formIds;
      known.ctx.runTypeIds = row.runTypeIds;
      known.ctx.streamsOff = row.streamsOff;
    }
    for (const [key, e] of this.#entries) {
      if (seen.has(key)) continue;
      e.stop.abort(new CompanyStopped(`company ${key} removed`));
      this.#retired.push(e.ctx.client);
      this.#entries.delete(key);
      this.#o.log.info({ company: key }, 'company removed: its runs stop after the page in flight');
    }
    if (appeared.length > 0) for (const listener of this.#added) listener(appeared);
    this.#loaded = true;
  }

  /** The row with the key to use, or none (with one warning) when this process cannot open its key. */
  #usable(row: CompanyWithKey): Usable[] {
    const own = row.managedBy === 'environment' ? this.#o.environmentKeys?.get(row.key) : undefined;
    const apiKey = own ?? row.apiKey;
    if (apiKey !== undefined) {
      this.#unreadable.delete(row.key);
      return [{ ...row, apiKey }];
    }
    if (!this.#unreadable.has(row.key)) {
      this.#unreadable.add(row.key);
      this.#o.log.error(
        { company: row.key },
        'cannot open the API key of this company: it was stored under another WFS_SECRET_KEY; give every process the same one. The company is not run here',
      );
    }
    return [];
  }

  /** Streams the company turned off stop after the page in flight. */
  #switchStreams(known: Entry, row: Usable): void {
    const off = row.streamsOff.filter((s) => !known.record.streamsOff.includes(s));
    const on = known.record.streamsOff.filter((s) => !row.streamsOff.includes(s));
    for (const stream of off) {
      known.streamStops.get(stream)?.abort(new CompanyStopped(`stream ${stream} of company ${row.key} turned off`));
      known.streamStops.delete(stream);
    }
    if (off.length) this.#o.log.info({ company: row.key, streams: off }, 'streams turned off: their runs stop');
    if (on.length) this.#o.log.info({ company: row.key, streams: on }, 'streams turned on');
  }

  #entry(row: Usable): Entry {
    const { observers, warehouse, log, retention } = this.#o;
    const entry = { record: row, apiKey: row.apiKey, stop: new AbortController(), streamStops: new Map() } as Entry;
    const client = new SourceClient({
      company: row.key,
      observers,
      baseUrl: row.baseUrl,
      apiKey: () => entry.apiKey,
      limiter: this.#o.limiterFor(row.rateLimit),
      logger: log.child({ company: row.key }),
    });
    entry.ctx = {
      companyKey: row.key,
      client,
      warehouse,
      observers,
      log: log.child({ company: row.key }),
      now: () => client.serviceNow(),
      refreshClock: () => client.freshServiceNow(clockProbe),
      formIds: row.formIds,
      runTypeIds: row.runTypeIds,
      retention,
      budget: row.rateLimit,
      streamsOff: row.streamsOff,
      streamStopped: (stream) => streamStop(entry, stream),
    };
    if (row.paused) entry.stop.abort(new CompanyStopped(`company ${row.key} paused`));
    return entry;
  }
}

/** The stream's stop signal: aborted already when the company has it off. */
function streamStop(entry: Entry, stream: string): AbortSignal {
  if (entry.record.streamsOff.includes(stream))
    return AbortSignal.abort(new CompanyStopped(`stream ${stream} of company ${entry.record.key} is off`));
  let stop = entry.streamStops.get(stream);
  if (!stop) entry.streamStops.set(stream, (stop = new AbortController()));
  return stop.signal;
}
