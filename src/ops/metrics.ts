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
  readonly registry = withDefaultMetrics(new Registry());
  readonly #requests = counter(
    this.registry,
    'requests_total',
    'HTTP attempts to the workforce service, by endpoint, status class (2xx, 4xx, 5xx, none) and limiter lane',
    ['endpoint', 'status_class', 'lane'],
  );
  readonly #requestSeconds = histogram(
    this.registry,
    'request_duration_seconds',
    'Duration of one HTTP attempt to the workforce service',
    ['endpoint'],
    [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
  );
  readonly #rateLimited = counter(
    this.registry,
    'rate_limited_total',
    'Answers of 429 (rate limited) from the workforce service, by company',
    ['company'],
  );
  readonly #limiterWait = histogram(
    this.registry,
    'limiter_wait_seconds',
    'Time a request waited for the rate limiter before it started, by lane',
    ['lane'],
    [0, 0.01, 0.1, 0.5, 1, 5, 15, 30, 60, 120],
  );
  readonly #budgetUsed = gauge(
    this.registry,
    'budget_used_requests',
    "Requests of the company's API key counted in the service's current period (limit minus remaining)",
    ['company'],
  );
  readonly #budgetLimit = gauge(
    this.registry,
    'budget_limit_requests',
    "The service's stated request limit per period for the company's API key",
    ['company'],
  );
  readonly #rows = counter(this.registry, 'rows_written_total', 'Rows written to the warehouse, by stream', ['stream']);
  readonly #rejects = counter(
    this.registry,
    'rejects_total',
    'Records that failed their schema and went to sync_rejects, by stream',
    ['stream'],
  );
  readonly #deletions = counter(this.registry, 'deletions_total', 'Rows marked deleted (_deleted_at), by stream', [
    'stream',
  ]);
  readonly #streamRuns = counter(
    this.registry,
    'stream_runs_total',
    'Stream runs that ended, by stream and outcome (ok, failed, interrupted)',
    ['stream', 'outcome'],
  );
  readonly #streamSeconds = histogram(
    this.registry,
    'stream_duration_seconds',
    'Duration of a stream run',
    ['stream'],
    [1, 5, 15, 60, 300, 900, 1800, 3600, 7200],
  );
  readonly #lastSuccess = gauge(
    this.registry,
    'stream_last_success_timestamp_seconds',
    'When a stream last ended successfully (Unix time), by company and stream',
    ['company', 'stream'],
  );
  readonly #push = counter(
    this.registry,
    'push_changes_total',
    'Pushed changes that reached an outcome, by kind and outcome',
    ['kind', 'outcome'],
  );
  readonly #pushSeconds = histogram(
    this.registry,
    'push_latency_seconds',
    'From intake to the outcome of a pushed change',
    ['kind'],
    [0.5, 1, 5, 15, 60, 300, 900, 3600],
  );
  readonly #schemaChanges = counter(
    this.registry,
    'schema_changes_total',
    'Fields the service sends that no column maps, by stream and kind: appeared (first seen) or gone (absent from three complete reads)',
    ['stream', 'kind'],
  );

  constructor(
    opts: {
      queues?: () => readonly QueueCounts[];
      outbox?: OutboxCounts;
      scheduleDelay?: () => Promise<number | null>;
    } = {},
  ) {
    if (opts.outbox) outboxGauges(this.registry, opts.outbox);
    scheduleDelayGauge(this.registry, opts.scheduleDelay);
    if (opts.queues) queueGauge(this.registry, opts.queues);
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

/** The registry, with Node's own series (memory, event loop, GC) first. */
function withDefaultMetrics(registry: Registry): Registry {
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  return registry;
}

function counter<T extends string>(registry: Registry, name: string, help: string, labelNames: T[]): Counter<T> {
  return new Counter({ name: `${PREFIX}${name}`, help, labelNames, registers: [registry] });
}

function gauge<T extends string>(registry: Registry, name: string, help: string, labelNames: T[]): Gauge<T> {
  return new Gauge({ name: `${PREFIX}${name}`, help, labelNames, registers: [registry] });
}

function histogram<T extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: T[],
  buckets: number[],
): Histogram<T> {
  return new Histogram({ name: `${PREFIX}${name}`, help, labelNames, buckets, registers: [registry] });
}

/** The push outbox's changes by status, and those in doubt, read from the warehouse at scrape time. */
function outboxGauges(registry: Registry, outbox: OutboxCounts): void {
  new Gauge({
    name: `${PREFIX}push_outbox_changes`,
    help: 'Changes in push_outbox, by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const [status, n] of Object.entries(await outbox())) this.set({ status }, n);
    },
  });
  new Gauge({
    name: `${PREFIX}push_in_doubt_changes`,
    help: 'Pushed changes whose outcome is in doubt until a lookup settles it',
    registers: [registry],
    async collect() {
      this.set((await outbox()).in_doubt ?? 0);
    },
  });
}

function scheduleDelayGauge(registry: Registry, delay: (() => Promise<number | null>) | undefined): void {
  new Gauge({
    name: `${PREFIX}schedule_delay_seconds`,
    help: 'How long the oldest queued sync run has waited for a worker (0: none waits, or no queue)',
    registers: [registry],
    async collect() {
      this.set((await delay?.()) ?? 0);
    },
  });
}

function queueGauge(registry: Registry, queues: () => readonly QueueCounts[]): void {
  new Gauge({
    name: `${PREFIX}queue_jobs`,
    help: "Jobs by queue and state: BullMQ's states, and for the sync queue `queued`, the runs not yet given to a worker",
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const q of queues()) {
        for (const [state, n] of Object.entries(await q.getJobCounts())) this.set({ queue: q.name, state }, n);
      }
    },
  });
}
