import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Observer, Observers } from '../observers.ts';

/** Every series this process exports starts with this. */
export const PREFIX = 'wfsync_';

/**
 * Queue job counts read at scrape time: BullMQ's counts are the queue's own state, not a private counter.
 * BullMQ's `Queue.exportPrometheusMetrics` gives the same counts, but as text named `bullmq_*` with its own
 * HELP lines per queue (two queues would repeat them), and its completed/failed totals need the workers'
 * metrics option; a gauge over `getJobCounts` keeps one prefix and one registry.
 */
export interface QueueCounts {
  name: string;
  getJobCounts(): Promise<Record<string, number>>;
}

/** Push outbox counts read at scrape time from the warehouse, where the outbox lives. */
export type OutboxCounts = () => Promise<Record<string, number>>;

const statusClass = (status: number | undefined) => (status === undefined ? 'none' : `${Math.floor(status / 100)}xx`);

/**
 * The process's Prometheus series, fed by the observers' events (requests, limiter waits, budgets, pages,
 * streams, pushes). Labels stay low-cardinality: endpoint, lane, status class, company, stream, kind, outcome.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'endpoint' | 'status_class' | 'lane'>;
  readonly #requestSeconds: Histogram<'endpoint'>;
  readonly #rateLimited: Counter<'company'>;
  readonly #limiterWait: Histogram<'lane'>;
  readonly #budgetUsed: Gauge<'company'>;
  readonly #budgetLimit: Gauge<'company'>;
  readonly #rows: Counter<'stream'>;
  readonly #rejects: Counter<'stream'>;
  readonly #deletions: Counter<'stream'>;
  readonly #streamRuns: Counter<'stream' | 'outcome'>;
  readonly #streamSeconds: Histogram<'stream'>;
  readonly #lastSuccess: Gauge<'company' | 'stream'>;
  readonly #push: Counter<'kind' | 'outcome'>;
  readonly #pushSeconds: Histogram<'kind'>;
  readonly #schemaChanges: Counter<'stream' | 'kind'>;

  constructor(
    opts: {
      queues?: () => readonly QueueCounts[];
      outbox?: OutboxCounts;
      scheduleDelay?: () => Promise<number | null>;
    } = {},
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
    this.#requests = new Counter({
      name: `${PREFIX}requests_total`,
      help: 'HTTP attempts to the workforce service, by endpoint, status class (2xx, 4xx, 5xx, none) and limiter lane',
      labelNames: ['endpoint', 'status_class', 'lane'],
      registers,
    });
    this.#requestSeconds = new Histogram({
      name: `${PREFIX}request_duration_seconds`,
      help: 'Duration of one HTTP attempt to the workforce service',
      labelNames: ['endpoint'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    });
    this.#rateLimited = new Counter({
      name: `${PREFIX}rate_limited_total`,
      help: 'Answers of 429 (rate limited) from the workforce service, by company',
      labelNames: ['company'],
      registers,
    });
    this.#limiterWait = new Histogram({
      name: `${PREFIX}limiter_wait_seconds`,
      help: 'Time a request waited for the rate limiter before it started, by lane',
      labelNames: ['lane'],
      buckets: [0, 0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120],
      registers,
    });
    this.#budgetUsed = new Gauge({
      name: `${PREFIX}budget_used_requests`,
      help: "Requests of the company's API key counted in the service's current window (limit minus remaining)",
      labelNames: ['company'],
      registers,
    });
    this.#budgetLimit = new Gauge({
      name: `${PREFIX}budget_limit_requests`,
      help: "The service's stated request limit per window for the company's API key",
      labelNames: ['company'],
      registers,
    });
    this.#rows = new Counter({
      name: `${PREFIX}rows_written_total`,
      help: 'Rows written to the warehouse, by stream',
      labelNames: ['stream'],
      registers,
    });
    this.#rejects = new Counter({
      name: `${PREFIX}rejects_total`,
      help: 'Records that failed their schema and went to sync_rejects, by stream',
      labelNames: ['stream'],
      registers,
    });
    this.#deletions = new Counter({
      name: `${PREFIX}deletions_total`,
      help: 'Rows marked deleted (_deleted_at), by stream',
      labelNames: ['stream'],
      registers,
    });
    this.#streamRuns = new Counter({
      name: `${PREFIX}stream_runs_total`,
      help: 'Stream runs that ended, by stream and outcome (ok, failed, interrupted)',
      labelNames: ['stream', 'outcome'],
      registers,
    });
    this.#streamSeconds = new Histogram({
      name: `${PREFIX}stream_duration_seconds`,
      help: 'Duration of a stream run',
      labelNames: ['stream'],
      buckets: [1, 5, 15, 60, 300, 900, 1800, 3600, 7200],
      registers,
    });
    this.#lastSuccess = new Gauge({
      name: `${PREFIX}stream_last_success_timestamp_seconds`,
      help: 'When a stream last ended successfully (Unix time), by company and stream',
      labelNames: ['company', 'stream'],
      registers,
    });
    this.#push = new Counter({
      name: `${PREFIX}push_changes_total`,
      help: 'Pushed changes that reached an outcome, by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.#pushSeconds = new Histogram({
      name: `${PREFIX}push_latency_seconds`,
      help: 'From intake to the outcome of a pushed change',
      labelNames: ['kind'],
      buckets: [0.5, 1, 5, 15, 60, 300, 900, 3600],
      registers,
    });
    this.#schemaChanges = new Counter({
      name: `${PREFIX}schema_changes_total`,
      help: 'Fields the service sends that no column maps, by stream and kind: appeared (first seen) or gone (absent from three complete reads)',
      labelNames: ['stream', 'kind'],
      registers,
    });
    if (opts.outbox) {
      const outbox = opts.outbox;
      new Gauge({
        name: `${PREFIX}push_outbox_changes`,
        help: 'Changes in push_outbox, by status',
        labelNames: ['status'],
        registers,
        async collect() {
          this.reset();
          for (const [status, n] of Object.entries(await outbox())) this.set({ status }, n);
        },
      });
      new Gauge({
        name: `${PREFIX}push_in_doubt_changes`,
        help: 'Pushed changes whose outcome is in doubt until a lookup settles it',
        registers,
        async collect() {
          this.set((await outbox()).in_doubt ?? 0);
        },
      });
    }
    const delay = opts.scheduleDelay;
    new Gauge({
      name: `${PREFIX}schedule_delay_seconds`,
      help: 'How long the oldest queued sync run has waited for a worker (0: none waits, or no queue)',
      registers,
      async collect() {
        this.set((await delay?.()) ?? 0);
      },
    });
    if (opts.queues) {
      const queues = opts.queues;
      new Gauge({
        name: `${PREFIX}queue_jobs`,
        help: 'BullMQ jobs by queue and state',
        labelNames: ['queue', 'state'],
        registers,
        async collect() {
          this.reset();
          for (const q of queues()) {
            for (const [state, n] of Object.entries(await q.getJobCounts())) this.set({ queue: q.name, state }, n);
          }
        },
      });
    }
  }

  /** The listener that turns events into series. */
  readonly observer: Observer = {
    request: (e) => {
      this.#requests.inc({ endpoint: e.endpoint, status_class: statusClass(e.status), lane: e.lane });
      this.#requestSeconds.observe({ endpoint: e.endpoint }, e.durationMs / 1000);
      if (e.outcome === 'rate_limited') this.#rateLimited.inc({ company: e.company ?? e.key });
    },
    limiterWait: (e) => this.#limiterWait.observe({ lane: e.lane }, e.waitMs / 1000),
    budget: (e) => {
      const company = e.company ?? e.key;
      if (e.limit !== undefined) this.#budgetLimit.set({ company }, e.limit);
      if (e.limit !== undefined && e.remaining !== undefined)
        this.#budgetUsed.set({ company }, Math.max(0, e.limit - e.remaining));
    },
    page: (e) => {
      this.#rows.inc({ stream: e.stream }, e.rows);
      this.#rejects.inc({ stream: e.stream }, e.rejects);
      this.#deletions.inc({ stream: e.stream }, e.deleted);
    },
    stream: (e) => {
      this.#streamRuns.inc({ stream: e.stream, outcome: e.outcome });
      this.#streamSeconds.observe({ stream: e.stream }, e.durationMs / 1000);
      if (e.outcome === 'ok') this.#lastSuccess.set({ company: e.company, stream: e.stream }, e.at / 1000);
    },
    push: (e) => {
      this.#push.inc({ kind: e.kind, outcome: e.outcome });
      this.#pushSeconds.observe({ kind: e.kind }, e.latencyMs / 1000);
    },
    schemaChange: (e) => this.#schemaChanges.inc({ stream: e.stream, kind: e.kind }),
  };

  /** Listens to the process's observers; the returned function stops listening. */
  listen(observers: Observers): () => void {
    return observers.add(this.observer);
  }

  /**
   * Freshness known before this process ran anything (from sync_runs), so a restart does not look like a
   * stream that never succeeded. A later success in this process replaces it.
   */
  seedLastSuccess(rows: readonly { company: string; stream: string; lastOkAt: Date | null }[]): void {
    for (const r of rows)
      if (r.lastOkAt) this.#lastSuccess.set({ company: r.company, stream: r.stream }, r.lastOkAt.getTime() / 1000);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
